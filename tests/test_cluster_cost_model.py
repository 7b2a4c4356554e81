"""benchmarks/cluster_build.py's cost model and harness.py's index breakdown: pure functions, no timing."""

from __future__ import annotations

import sys

import pytest
from common import REPO

BENCHMARKS = REPO / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
cluster_build = pytest.importorskip("cluster_build")
harness = pytest.importorskip("harness")


def test_predict_follows_the_phases_and_the_free_workers():
    durations = {"analyze": [3.0, 1.0, 1.0, 1.0], "postings": [2.0, 2.0], "docs": [0.5],
                 "terms": [0.25], "forward": [1.0, 1.0]}
    # one worker: everything in a row
    assert cluster_build.predict(durations, 1, head=1.0, tail=2.0, gap=0.0) == pytest.approx(1 + 12.75 + 2)
    # two workers: analyze 3 | 1+1+1 -> 3; docs (shortest phase first) 0.5 then the buckets 2.5 | 2 -> 2.5;
    # terms 0.25 then forward: 1.25 | 1 -> 1.25
    assert cluster_build.predict(durations, 2, head=0.0, tail=0.0, gap=0.0) == pytest.approx(3 + 2.5 + 1.25)
    # a gap per task, and more workers than tasks: the longest task of each barrier
    assert cluster_build.predict(durations, 16, head=0.0, tail=0.0, gap=0.1) == pytest.approx(3.1 + 2.1 + 1.1)


def test_scaled_durations_repeat_the_tasks_and_stretch_the_docs_task():
    durations = {"analyze": [1.0, 2.0], "postings": [3.0], "docs": [0.5], "terms": [0.25], "forward": [4.0]}
    scaled = cluster_build.scaled_durations(durations, 10, {"analyze": 20, "postings": 3, "forward": 5})
    assert scaled["analyze"] == [1.0, 2.0] * 10
    assert scaled["postings"] == [3.0] * 3 and scaled["forward"] == [4.0] * 5
    assert scaled["docs"] == [5.0] and scaled["terms"] == [0.25]


def test_phase_of_and_task_index_read_dask_keys():
    assert cluster_build.phase_of(("irgrid-analyze-0123456789ab", 7)) == "analyze"
    assert cluster_build.task_index(("irgrid-analyze-0123456789ab", 7)) == 7
    assert cluster_build.task_index("('irgrid-postings-0123456789ab', 12)") == 12
    assert cluster_build.phase_of("irgrid-docs-0123456789ab") == "docs"
    assert cluster_build.task_index("irgrid-docs-0123456789ab") == 0


def test_index_breakdown_lists_what_the_directory_holds(tmp_path):
    (tmp_path / "postings").mkdir()
    (tmp_path / "postings" / "bucket-0000.parquet").write_bytes(b"x" * 100)
    (tmp_path / "positions").mkdir()  # a component the format may gain
    (tmp_path / "positions" / "p.bin").write_bytes(b"x" * 30)
    (tmp_path / "terms.parquet").write_bytes(b"x" * 10)
    assert harness.index_breakdown(tmp_path) == {"postings/": 100, "positions/": 30, "terms.parquet": 10}
    many = tmp_path / "tantivy"
    many.mkdir()
    for i in range(13):
        (many / f"seg{i}.pos").write_bytes(b"x" * 2)
    (many / "meta.json").write_bytes(b"x")
    assert harness.index_breakdown(many, max_files=12) == {"*.pos": 26, "*.json": 1}
