"""The whole workflow SIGKILLed (Snakemake and all its children) during the index build, then during
retrieval; rerun the way ``make run`` does (``irgrid check-lock``, then the local profile with
``rerun-incomplete``): every result file is byte-identical to an uninterrupted run's.

What keeps a killed run from passing off half a file as a result is split in two
(docs/architecture.md, "Killed runs"): Snakemake marks a job's outputs incomplete when the job
starts and reruns them after a kill (``--rerun-incomplete``), and the package writes every output
under a temporary name renamed into place only when whole, so even a file Snakemake did not know
to distrust is never half-written. This test checks the outcome of both: after the kills, each
Parquet file in ``results/`` reads back and equals the uninterrupted run's bytes, no file is missing
or extra, and no temporary is left once the rerun and ``irgrid clean-leftovers`` are done.

Slow (three small runs on ADI) and needs the collections mirror.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from common import ANALYZER, REPO, SMALL_EXPERIMENT, find_mirror

from irgrid.io import parse_leftover

PROFILE = REPO / "config" / "profiles" / "local"
TIMEOUT = 600
# Files that record when and how long jobs ran (Snakemake's benchmark files, the report with its job
# times and generation time): they differ between any two runs; every other file must be identical.
TIMED = ("results/benchmarks/", "results/report.html")

# The small ADI experiment of the workflow tests: BM25 and QL, two grid points each.
EXPERIMENT = SMALL_EXPERIMENT


def make_workdir(workdir: Path, mirror: Path) -> Path:
    shutil.copytree(REPO / "config", workdir / "config")
    config = {"registry": "config/collections.yaml", "mirror": str(mirror), "num_shards": 2,
              "analyzers": {"porter": dict(ANALYZER)}, "measures": ["AP", "P@10"],
              "experiments": {"small": "config/experiments/small.yaml"}}
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (workdir / "config" / "experiments" / "small.yaml").write_text(yaml.safe_dump(EXPERIMENT), encoding="utf-8")
    return workdir


def snakemake_command(workdir: Path) -> list[str]:
    # make run: the local profile (rerun-incomplete), two cores here
    return [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
            "--profile", str(PROFILE), "--cores", "2"]


def run_to_the_end(workdir: Path) -> subprocess.CompletedProcess:
    # make run: irgrid check-lock first (a killed run's lock is stale), then Snakemake
    check = subprocess.run([sys.executable, "-m", "irgrid", "check-lock", "--directory", str(workdir)],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr
    result = subprocess.run(snakemake_command(workdir), cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stdout[-6000:]
    return result


def temporaries(root: Path) -> list[Path]:
    found = []
    for directory, subdirs, files in os.walk(root):
        found += [Path(directory) / name for name in subdirs + files if parse_leftover(Path(directory) / name)]
    return found


def kill_when(workdir: Path, ready, what: str) -> None:
    """Start the workflow in its own process group and SIGKILL the whole group once ``ready()``."""
    run = subprocess.Popen(snakemake_command(workdir), cwd=workdir, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not ready():
            assert run.poll() is None, f"the workflow ended (exit {run.returncode}) before {what}"
            assert time.monotonic() < deadline, f"no {what} within {TIMEOUT} s"
            time.sleep(0.02)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait(timeout=60)
    time.sleep(0.5)  # let the killed group's processes disappear from /proc


def result_files(workdir: Path) -> dict[str, str]:
    """Every file under results/, by relative path, with its sha256; each Parquet file must read whole."""
    hashes = {}
    for path in sorted((workdir / "results").rglob("*")):
        if path.is_file():
            relative = str(path.relative_to(workdir))
            if path.suffix == ".parquet":
                pq.read_table(path)  # a half-written file would not read
            if relative.startswith(TIMED):  # when and how long jobs ran: their presence is compared
                hashes[relative] = "(timing)"
                continue
            hashes[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.xdist_group("test_killed_workflow")
def test_killed_during_index_build_and_retrieval_resumes_to_identical_results(tmp_path):
    mirror = find_mirror()
    if mirror is None:
        pytest.skip("the ADI collection is not in a local mirror (../shared/collections or IRGRID_MIRROR)")
    reference = make_workdir(tmp_path / "reference", mirror)
    run_to_the_end(reference)
    expected = result_files(reference)
    assert any(name.startswith("results/tables/small/table.") for name in expected)

    killed = make_workdir(tmp_path / "killed", mirror)
    index_parent = killed / "results" / "adi" / "index"

    # 1. killed while the index is being built: its temporary directory exists, the index does not
    kill_when(killed, lambda: any(parse_leftover(p) for p in index_parent.glob(".porter.*")), "index build")
    assert not (index_parent / "porter").exists()
    assert temporaries(killed / "results"), "the kill left no temporary: was it really mid-build?"
    assert list((killed / ".snakemake" / "locks").glob("*.lock")), "a SIGKILLed Snakemake leaves its lock"

    # 2. resumed, and killed again once retrieval has started (a chunk job's log or temporary file exists)
    runs = killed / "results" / "adi" / "eval"  # the chunk jobs' evaluation files (no run is kept)
    logs = killed / "logs" / "adi" / "eval"

    def retrieving() -> bool:
        return (logs.exists() and any(logs.rglob("chunk-*.log"))) or (runs.exists() and bool(temporaries(runs)))

    check = subprocess.run([sys.executable, "-m", "irgrid", "check-lock", "--directory", str(killed)],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "removed a stale Snakemake lock" in check.stderr, check.stderr
    kill_when(killed, retrieving, "retrieval")
    assert (index_parent / "porter" / "stats.json").exists()  # the rerun finished the index first

    # 3. resumed to the end: every file as the uninterrupted run wrote it
    run_to_the_end(killed)
    assert result_files(killed) == expected

    # what the kills left is gone: by the rerun's own writes, else by clean-leftovers (same host, dead pids)
    subprocess.run([sys.executable, "-m", "irgrid", "clean-leftovers", str(killed / "results")], check=True,
                   capture_output=True, timeout=60)
    assert temporaries(killed / "results") == []
    assert result_files(killed) == expected
