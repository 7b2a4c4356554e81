"""The forward index as its own output (irgrid.index.forward), and the workflow building it only where read.

The forward index is checked against an independent reconstruction: each document's terms are
the analyzer applied to its text (``Analyzer.__call__``), not anything the index build computed.
The workflow tests check that the postings index's job (its command and params) is the same under
a config that counts axiom violations and one that does not, and that switching between the two
reruns no index.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_workflow import (
    ANALYZER,
    assert_ok,
    job_stats,
    make_workdir,
    small_config,
    snakemake,
    write_yaml,
)

import irgrid.index.forward as forward_mod
from irgrid.analysis import Analyzer
from irgrid.errors import InputFormatError
from irgrid.index import IndexReader, build_index
from irgrid.index.forward import build_forward_index, forward_index_dir

WORDS = ["alpha", "beta", "gamma", "the", "cats", "cat's", "running", "run", "x1", "3.14", "Alpha", "élan", "Ωmega",
         "zoë", "漢字", "U.S.A.", "a", "of"]


def write_shards(texts: list[str], directory: Path, num_shards: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, len(texts), num_shards + 1).round().astype(int)
    for i in range(num_shards):
        rows = range(bounds[i], bounds[i + 1])
        pq.write_table(pa.table({"docno": pa.array([f"d{r}" for r in rows], pa.string()),
                                 "text": pa.array([texts[r] for r in rows], pa.string())}),
                       directory / f"part-{i:04d}.parquet")
    return directory


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join), min_size=1, max_size=14),
    num_shards=st.integers(1, 3),
    num_buckets=st.integers(1, 4),
    part_docs=st.sampled_from([1, 2, 5, 65536]),
    stopwords=st.sampled_from(["none", "lucene"]),
    workers=st.integers(1, 3),
)
def test_forward_index_is_each_documents_analysed_terms_in_order(texts, num_shards, num_buckets, part_docs,
                                                                 stopwords, workers):
    """Every document's terms in text order, whatever the shards, buckets, parts (several when small) and
    threads; stop words removed leave no trace; an empty document is an empty list."""
    analyzer = Analyzer(stopwords=stopwords)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shards = write_shards(texts, tmp / "docs", min(num_shards, len(texts)))
        build_index(shards, tmp / "index", analyzer, num_buckets=num_buckets, scheduler="sync", progress=False)
        original = forward_mod.FORWARD_PART_DOCS
        forward_mod.FORWARD_PART_DOCS = part_docs
        try:
            stats = build_forward_index(tmp / "index", tmp / "forward", workers=workers)
        finally:
            forward_mod.FORWARD_PART_DOCS = original
        assert stats["forward_part_docs"] == part_docs
        parts = sorted(p.name for p in (tmp / "forward").glob("part-*.parquet"))
        assert parts == [f"part-{i:04d}.parquet" for i in range(-(-len(texts) // part_docs))]
        reader = IndexReader(tmp / "index", forward_path=tmp / "forward")
        docids = list(range(len(texts)))[::-1] + [0]  # any order, repeats allowed
        assert reader.forward(docids) == [analyzer(texts[d]) for d in docids]


#: sha256 of forward/part-0000.parquet as build_index(..., forward=True) wrote it inside the index before the
#: forward index became its own output (commit 74e89fd, the seven documents below in 3 shards, 4 buckets)
IN_INDEX_FORWARD_SHA256 = "38e96fbbde98656dc73135271390620afc994739febb6fe18e6869ef047ace07"


def test_forward_index_equals_the_one_the_build_wrote_inside_the_index():
    """The same bytes as the in-index forward part of before, and (read back) the terms counted by hand."""
    import hashlib

    docs = ["The cat sat on the mat.", "A dog and a cat. The dog's bone!", "", "Cats, dogs, mats: cat dog mat",
            "the the the", "Mat mat MAT cat", "bone of a dog"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_index(write_shards(docs, tmp / "docs", 3), tmp / "index", Analyzer(stemmer="none", stopwords="lucene"),
                    num_buckets=4, scheduler="sync", progress=False)
        build_forward_index(tmp / "index", tmp / "forward")
        part = tmp / "forward" / "part-0000.parquet"
        assert hashlib.sha256(part.read_bytes()).hexdigest() == IN_INDEX_FORWARD_SHA256
        table = pq.read_table(part)
        assert table.column("docid").to_pylist() == list(range(7))
        terms = pq.read_table(tmp / "index" / "terms.parquet").column("term").to_pylist()
        # Lucene's stop words (the, on, a, and, of) leave no term; the possessive 's is stripped
        assert [[terms[t] for t in row] for row in table.column("terms").to_pylist()] == [
            ["cat", "sat", "mat"], ["dog", "cat", "dog", "bone"], [], ["cats", "dogs", "mats", "cat", "dog", "mat"],
            [], ["mat", "mat", "mat", "cat"], ["bone", "dog"]]


def test_forward_index_of_another_index_is_refused(tmp_path):
    """Term ids mean the terms of the index they were built from: another index's forward index is refused."""
    for name, texts in [("one", ["cat sat", "mat"]), ("two", ["dog", "cat sat mat"])]:
        build_index(write_shards(texts, tmp_path / f"{name}-docs", 1), tmp_path / "index" / name, Analyzer(),
                    num_buckets=1, scheduler="sync", progress=False)
    build_forward_index(tmp_path / "index" / "one", forward_index_dir(tmp_path / "index" / "one"))
    assert IndexReader(tmp_path / "index" / "one").forward([0, 1]) == [["cat", "sat"], ["mat"]]
    reader = IndexReader(tmp_path / "index" / "two", forward_path=tmp_path / "forward" / "one")
    with pytest.raises(InputFormatError, match=r"forward/one/stats\.json: expected the forward index of the index .*"
                                               r"found 'num_terms 3 \(index: 4\), total_length 3 \(index: 4\)'"):
        reader.forward([0])


def test_a_failed_forward_build_leaves_no_half_output_and_keeps_the_old_one(tmp_path, monkeypatch):
    """Written to a temporary directory renamed at the end: a build that dies leaves the previous forward index
    as it was and no temporary directory; the next build also removes what a killed one (a dead pid) left."""
    index = tmp_path / "index" / "a"
    build_index(write_shards(["cat sat", "mat"], tmp_path / "docs", 1), index, Analyzer(), num_buckets=2,
                scheduler="sync", progress=False)
    out = forward_index_dir(index)
    build_forward_index(index, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def die(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(forward_mod, "_write_part", die)
    with pytest.raises(KeyboardInterrupt):
        build_forward_index(index, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["a"]
    monkeypatch.undo()
    # what a process killed with SIGKILL left: a temporary of this host with the pid of no process
    from irgrid.io import this_host

    dead_pid = 2**22 + 12345
    assert not os.path.exists(f"/proc/{dead_pid}")
    leftover = out.parent / f".a.{this_host()}~{dead_pid}~0123abcd.tmp"
    (leftover / "pieces").mkdir(parents=True)
    build_forward_index(index, out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["a"]
    assert IndexReader(index).forward([1, 0]) == [["mat"], ["cat", "sat"]]


# --------------------------------------------------------------------------- the workflow

AXIOMS_EXPERIMENT = {
    "title": "Constraints on ADI (test)",
    "collections": ["adi"],
    "analyzer": "porter",
    "models": {
        "bm25_default": {"family": "bm25_rsj", "grid": {"b": 0.75}},
        "dfr": {"family": "inl2", "grid": {"c": 1}},
    },
    "baseline": "dfr",
    "axioms": True,
    "axiom_depth": 10,
}


def two_configs(workdir: Path, mirror: Path) -> tuple[dict, dict]:
    """A work directory, and two configs for it: the small experiment alone, and with it an experiment
    counting axiom violations on the same collection and analyzer."""
    plain = small_config(mirror)
    make_workdir(workdir, plain)
    write_yaml(AXIOMS_EXPERIMENT, workdir / "config" / "experiments" / "constraints.yaml")
    with_axioms = dict(plain, experiments=dict(plain["experiments"], constraints="config/experiments/constraints.yaml"))
    return plain, with_axioms


def snakemake_with(workdir: Path, config: dict, *args: str):
    """Snakemake with ``config`` as the work directory's config/config.yaml."""
    write_yaml(config, workdir / "config" / "config.yaml")
    return snakemake(workdir, *args)


def shell_commands(output: str, rule: str) -> list[str]:
    """The shell commands Snakemake printed (-p) for the jobs of ``rule``."""
    commands = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"^\s*(?:local)?rule {re.escape(rule)}:$", line):
            block = []
            for following in lines[i + 1:]:
                if re.match(r"^\s*(?:local)?rule \S+:$", following) or following.startswith("Job stats"):
                    break
                block.append(following)
            commands.append("\n".join(line for line in block if line.startswith("irgrid ") or " irgrid " in line))
    return commands


@pytest.fixture
def mirror():
    from test_workflow import find_mirror

    root = find_mirror()
    if root is None:
        pytest.skip("the ADI collection is not in a local mirror (../shared/collections or IRGRID_MIRROR)")
    return root


@pytest.mark.slow
@pytest.mark.mirror
def test_the_index_job_is_the_same_with_and_without_an_axioms_experiment(tmp_path, mirror):
    """The planned build_index job has the same command under both configs; only the config counting
    violations plans a forward index, which its violations job reads."""
    plain, with_axioms = two_configs(tmp_path, mirror)
    runs = {}
    for name, config in [("plain", plain), ("axioms", with_axioms)]:
        result = snakemake_with(tmp_path, config, "-n", "-p")
        assert_ok(result)
        runs[name] = result.stdout
    commands = {name: shell_commands(output, "build_index") for name, output in runs.items()}
    assert len(commands["plain"]) == 1 and commands["plain"][0], runs["plain"]
    assert commands["plain"] == commands["axioms"]
    assert "forward" not in commands["plain"][0]
    assert job_stats(runs["axioms"])["build_forward_index"] == 1
    assert "build_forward_index" not in job_stats(runs["plain"])
    [forward_command] = shell_commands(runs["axioms"], "build_forward_index")
    assert "--index results/adi/index/porter" in forward_command
    assert "--out results/adi/forward/porter" in forward_command


@pytest.mark.slow
@pytest.mark.mirror
def test_switching_configs_reruns_no_index(tmp_path, mirror):
    """The index built under the plain config is up to date under the one counting violations, which only
    adds its forward index; back under the plain config, nothing of the index or forward index reruns."""
    plain, with_axioms = two_configs(tmp_path, mirror)
    assert_ok(snakemake_with(tmp_path, plain, "results/adi/index/porter"))
    index_files = {p: p.stat().st_mtime_ns for p in (tmp_path / "results/adi/index/porter").rglob("*")}
    planned = snakemake_with(tmp_path, with_axioms, "-n")
    assert_ok(planned)
    stats = job_stats(planned.stdout)
    assert "build_index" not in stats and stats["build_forward_index"] == 1, planned.stdout
    built = snakemake_with(tmp_path, with_axioms, "results/adi/forward/porter")
    assert_ok(built)
    assert job_stats(built.stdout) == {"build_forward_index": 1}
    back = snakemake_with(tmp_path, plain, "-n", "results/adi/index/porter")
    assert_ok(back)
    assert "Nothing to be done" in back.stdout, back.stdout
    again = snakemake_with(tmp_path, with_axioms, "-n", "results/adi/forward/porter")
    assert_ok(again)
    assert "Nothing to be done" in again.stdout, again.stdout
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "results/adi/index/porter").rglob("*")} == index_files
    stats = json.loads((tmp_path / "results/adi/forward/porter/stats.json").read_text())
    assert stats["analyzer"] == Analyzer.from_dict(ANALYZER).to_dict()


@pytest.mark.slow
@pytest.mark.mirror
def test_a_feedback_family_plans_the_forward_index_its_chunk_reads(tmp_path, mirror):
    """A model with a feedback stage reads its feedback documents' terms: its chunk job asks for the
    forward index (and no other chunk does), and the postings index's command stays the same."""
    plain, _ = two_configs(tmp_path, mirror)
    experiment = {"title": "RM3 on ADI (test)", "collections": ["adi"], "analyzer": "porter", "baseline": "bm25",
                  "models": {"bm25": {"family": "bm25", "grid": {"k1": 0.9, "b": 0.4}},
                             "bm25_rm3": {"family": "bm25+rm3", "grid": {"k1": 0.9, "b": 0.4}}}}
    write_yaml(experiment, tmp_path / "config" / "experiments" / "rm3.yaml")
    with_feedback = dict(plain, experiments=dict(plain["experiments"], rm3="config/experiments/rm3.yaml"))
    runs = {}
    for name, config in [("plain", plain), ("feedback", with_feedback)]:
        result = snakemake_with(tmp_path, config, "-n", "-p")
        assert_ok(result)
        runs[name] = result.stdout
    assert shell_commands(runs["plain"], "build_index") == shell_commands(runs["feedback"], "build_index")
    assert "build_forward_index" not in job_stats(runs["plain"])
    assert job_stats(runs["feedback"])["build_forward_index"] == 1
    [forward_command] = shell_commands(runs["feedback"], "build_forward_index")
    assert "--out results/adi/forward/porter" in forward_command

