"""A Dask index build on a real dask.distributed cluster that loses a worker mid-build.

A scheduler and two worker processes, started as a user would (``dask scheduler --host
127.0.0.1``, ``dask worker --host 127.0.0.1``), index a synthetic collection; as soon as one
worker is running an analysis task it is SIGKILLed, or sent SIGTERM through its nanny, as
``scancel`` does (the worker then closes gracefully and may finish its task after the scheduler
gave it to the other worker). The scheduler runs its tasks again on the other worker, and the
index must be byte for byte the one a local, single-threaded build writes (``scheduler="sync"``:
no Dask cluster at all). The same with a dask-jobqueue SLURMCluster and a
worker job cancelled (``scancel``) needs SLURM: ``.ci/slurm.sh``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from irgrid.collections.synthetic import SyntheticSpec, write_synthetic_collection
from irgrid.index import build_index

distributed = pytest.importorskip("distributed")

DASK = str(Path(sys.executable).parent / "dask")
ANALYZER = {"tokenizer": "lucene", "lowercase": True, "possessive": True, "stemmer": "porter", "stopwords": "none"}
# 15 shards of 2,000 documents: a few seconds of analysis per worker, long enough to kill one mid-build
SPEC = SyntheticSpec(num_docs=30_000, vocabulary_size=20_000, num_queries=5, docs_per_shard=2_000,
                     query_rank_band=(30, 10_000))
STARTUP_SECONDS = 60
BUILD_SECONDS = 300


def file_hashes(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


@pytest.fixture(params=["sigkill", "sigterm"])
def loopback_cluster(tmp_path, request):
    """``(scheduler_file, worker_processes, signal)``: a scheduler and two single-threaded workers on
    127.0.0.1, and the signal that takes the first one down: SIGKILL to a worker without a nanny,
    or SIGTERM to a nanny (the worker closes gracefully, as a job cancelled by ``scancel``)."""
    scheduler_file = tmp_path / "scheduler.json"
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    processes = []

    def start(name, *args):
        log = open(logs / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process below)
        processes.append((subprocess.Popen([DASK, *args], stdout=log, stderr=subprocess.STDOUT), log))
        return processes[-1][0]

    try:
        start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(scheduler_file))
        wait_for(scheduler_file.exists, STARTUP_SECONDS, "the scheduler file")
        # --no-nanny: the worker is the process we start, so SIGKILL takes it down at once
        nanny = "--no-nanny" if request.param == "sigkill" else "--nanny"
        workers = [start(f"worker-{i}", "worker", "--scheduler-file", str(scheduler_file), "--host", "127.0.0.1",
                         "--nthreads", "1", nanny, "--no-dashboard", "--name", f"w{i}") for i in range(2)]
        yield scheduler_file, workers, signal.SIGKILL if request.param == "sigkill" else signal.SIGTERM
    finally:
        for process, log in reversed(processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            log.close()


@pytest.mark.slow
def test_index_survives_a_worker_killed_mid_build(tmp_path, loopback_cluster):
    scheduler_file, workers, stop_signal = loopback_cluster
    collection = write_synthetic_collection(SPEC, tmp_path / "synthetic")
    reference = build_index(collection / "docs", tmp_path / "local", ANALYZER, scheduler="sync", progress=False)

    with distributed.Client(scheduler_file=str(scheduler_file), timeout=STARTUP_SECONDS) as client:
        client.wait_for_workers(2, timeout=STARTUP_SECONDS)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:"), address
        info = client.scheduler_info()["workers"]
        assert all(worker.startswith("tcp://127.0.0.1:") for worker in info), info  # loopback only
        victim = next(w for w, i in info.items() if i["name"] == "w0")
        # the process we signal: the worker, or its nanny
        pid_of = os.getpid if stop_signal == signal.SIGKILL else os.getppid
        assert client.run(pid_of, workers=[victim]) == {victim: workers[0].pid}

        outcome: dict = {}

        def run():
            try:
                outcome["stats"] = build_index(collection / "docs", tmp_path / "cluster", ANALYZER,
                                               scheduler=address, progress=False)
            except BaseException as error:  # reported below, on the test's thread
                outcome["error"] = error

        builder = threading.Thread(target=run)
        builder.start()
        running = wait_for(lambda: [key for key in client.processing().get(victim, ()) if "irgrid-analyze" in str(key)],
                           BUILD_SECONDS, "an analysis task on the worker to kill")
        os.kill(workers[0].pid, stop_signal)
        assert builder.is_alive(), "the build finished before the worker was killed"
        builder.join(BUILD_SECONDS)
        assert not builder.is_alive(), "the build did not finish after the worker was killed"
        if stop_signal == signal.SIGKILL:
            assert workers[0].wait(10) == -signal.SIGKILL
        else:
            workers[0].wait(30)  # the nanny and its worker exit (subprocess.TimeoutExpired otherwise)
        assert "error" not in outcome, outcome.get("error")
        assert victim not in client.scheduler_info()["workers"], f"{victim} (was running {running}) still listed"

    assert outcome["stats"] == reference
    assert file_hashes(tmp_path / "cluster") == file_hashes(tmp_path / "local")
    # nothing left beside the two indexes (no temporary build directory)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cluster", "dask-logs", "local", "scheduler.json", "synthetic"]
