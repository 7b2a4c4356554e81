"""dask-jobqueue under a real SLURM (.ci/slurm.sh): a worker job cancelled mid-build changes no byte.

An index of a synthetic collection is built on a SLURMCluster of two single-core worker jobs
(``irgrid.jobs.dask_cluster.jobqueue_client``, bound to 127.0.0.1, as ``dask.cluster`` makes it);
as soon as one worker runs an analysis task its SLURM job is cancelled with ``scancel``. The
scheduler runs the lost tasks on the other worker; the index must equal, file for file and byte
for byte, one built locally without Dask (``scheduler="sync"``). Exits non-zero otherwise.

    python .ci/jobqueue_scancel.py WORKDIR
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
import time
from pathlib import Path

from irgrid.collections.synthetic import SyntheticSpec, write_synthetic_collection
from irgrid.index import build_index
from irgrid.jobs.dask_cluster import jobqueue_client

ANALYZER = {"tokenizer": "lucene", "lowercase": True, "possessive": True, "stemmer": "porter", "stopwords": "none"}
SPEC = SyntheticSpec(num_docs=30_000, vocabulary_size=20_000, num_queries=5, docs_per_shard=2_000,
                     query_rank_band=(30, 10_000))
TIMEOUT = 180


def file_hashes(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


STARTED = time.monotonic()


def say(message: str) -> None:
    """A line of progress, timed: a failure's log shows how far the check got, and when."""
    print(f"jobqueue_scancel: {time.monotonic() - STARTED:6.1f} s: {message}", flush=True)


def wait_for(condition, what: str):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    sys.exit(f"jobqueue_scancel: timed out waiting for {what}")


def main(workdir: Path) -> None:
    collection = write_synthetic_collection(SPEC, workdir / "synthetic")
    reference = build_index(collection / "docs", workdir / "local", ANALYZER, scheduler="sync", progress=False)
    say("the local build is done")
    settings = {"jobqueue": "slurm", "cores": 1, "memory": "2GB", "walltime": "00:10:00", "workers": 2,
                "host": "127.0.0.1", "log_directory": str(workdir / "worker-logs")}
    with jobqueue_client(settings) as client:
        cluster = client.cluster
        client.wait_for_workers(2, timeout=TIMEOUT)
        workers = client.scheduler_info()["workers"]
        say(f"two worker jobs are up: {sorted(workers)}")
        assert all(address.startswith("tcp://127.0.0.1:") for address in workers), workers
        outcome: dict = {}

        def run():
            try:
                outcome["stats"] = build_index(collection / "docs", workdir / "cluster", ANALYZER, scheduler=client,
                                               progress=False)
            except BaseException as error:
                outcome["error"] = error

        builder = threading.Thread(target=run)
        builder.start()

        def analysing_worker():
            for address, keys in client.processing().items():
                if any("irgrid-analyze" in str(key) for key in keys):
                    return address
            return None

        victim = wait_for(analysing_worker, "an analysis task on a worker job")
        name = client.scheduler_info()["workers"][victim]["name"]
        job_id = cluster.workers[name].job_id
        subprocess.run(["scancel", str(job_id)], check=True)
        say(f"cancelled SLURM job {job_id} (worker {name} at {victim}) mid-build")
        if not builder.is_alive():
            sys.exit("jobqueue_scancel: the build finished before the worker job was cancelled")
        builder.join(TIMEOUT)
        if builder.is_alive():
            sys.exit("jobqueue_scancel: the build did not finish after the cancellation")
        say("the build on the cluster " + ("failed" if "error" in outcome else "is done"))
        if "error" in outcome:
            raise outcome["error"]
        gone = wait_for(lambda: victim not in client.scheduler_info()["workers"] or None, "the cancelled worker to leave")
        assert gone
    if outcome["stats"] != reference:
        sys.exit(f"jobqueue_scancel: stats differ: {outcome['stats']} != {reference}")
    local, remote = file_hashes(workdir / "local"), file_hashes(workdir / "cluster")
    if local != remote:
        different = sorted(name for name in local.keys() | remote.keys() if local.get(name) != remote.get(name))
        sys.exit(f"jobqueue_scancel: files differ: {different}")
    say(f"{len(local)} index files identical to the local build")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
