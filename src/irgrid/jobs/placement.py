"""Where a Dask index build runs, and what its ``build_index`` job reserves.

The config's ``dask`` section says where the work happens:

- ``dask.scheduler: tcp://host:8786``: a dask.distributed cluster that is already running;
- ``dask.cluster: {jobqueue: slurm, cores, memory, walltime, workers, ...}``: a dask-jobqueue
  cluster the job starts, uses and closes (:mod:`irgrid.jobs.dask_cluster`);
- neither: local Dask processes, one per thread of the job.

The index's bytes do not depend on any of this (``irgrid.index.build``), so the choice must not
rerun anything: the rule passes it through a params function taking ``output``. Snakemake counts
such params as derived from the output and does not record them for its params rerun trigger,
yet evaluates them in every job, locally and under SLURM, from the config the job was given.
(``snakemake -n`` shows it; ``--list-params-changes`` of Snakemake 9.27 lists every output that
has recorded params, changed or not, so it cannot.) The thread count reaches the command through ``{threads}``, which is not
a trigger either.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from irgrid.errors import ConfigError

#: what a build_index job itself reserves when a Dask cluster elsewhere does the work: the driver
#: only hands out file names and gathers small summaries
DRIVER_THREADS = 1
DRIVER_MEM_MB = 1000
#: a local build: Dask processes in the job, whose memory stays flat as the collection grows (a
#: task holds a shard, a bucket or a forward part: benchmarks/HISTORY.md), with room to spare, as
#: SLURM kills a job over its memory
LOCAL_MEM_MB = 4000
LOCAL_RUNTIME_MINUTES = 240


@dataclass(frozen=True)
class IndexPlacement:
    """Where one index build runs: ``kind`` is ``local``, ``scheduler`` or ``jobqueue``."""

    kind: str
    scheduler: str | None = None
    cluster: Mapping[str, Any] | None = None

    @property
    def remote(self) -> bool:
        """True when Dask workers outside the job do the work."""
        return self.kind != "local"

    def arguments(self) -> str:
        """The ``irgrid index`` options that put the build there (empty for a local build)."""
        if self.kind == "scheduler":
            return f"--scheduler {shlex.quote(self.scheduler)}"
        if self.kind == "jobqueue":
            return f"--dask-cluster {shlex.quote(json.dumps(dict(self.cluster), sort_keys=True))}"
        return ""

    def threads(self, local_threads: int) -> int:
        return DRIVER_THREADS if self.remote else local_threads

    def mem_mb(self) -> int:
        return DRIVER_MEM_MB if self.remote else LOCAL_MEM_MB

    def runtime_minutes(self) -> int:
        """The job waits for the whole build: a jobqueue cluster's walltime, else the local default."""
        if self.kind == "jobqueue":
            return max(LOCAL_RUNTIME_MINUTES, walltime_minutes(self.cluster["walltime"]))
        return LOCAL_RUNTIME_MINUTES


def index_placement(dask_settings: Mapping[str, Any] | None) -> IndexPlacement:
    """The placement the config's ``dask`` section asks for (schema-validated: keys are known)."""
    dask_settings = dask_settings or {}
    scheduler = dask_settings.get("scheduler")
    cluster = dask_settings.get("cluster")
    if scheduler and cluster:
        raise ConfigError("dask: set either scheduler (a running cluster) or cluster (one the job starts), not both")
    if scheduler:
        return IndexPlacement("scheduler", scheduler=str(scheduler))
    if cluster:
        walltime_minutes(cluster["walltime"])  # checked here, before any job starts
        return IndexPlacement("jobqueue", cluster=dict(cluster))
    return IndexPlacement("local")


def walltime_minutes(walltime: str) -> int:
    """SLURM's ``[D-]HH:MM:SS`` / ``HH:MM`` / ``MM`` as whole minutes (rounded up)."""
    text = str(walltime)
    days = 0
    if "-" in text:
        day_text, text = text.split("-", 1)
        days = _number(day_text, walltime)
    parts = [_number(part, walltime) for part in text.split(":")]
    if len(parts) == 3:
        hours, minutes, seconds = parts
    elif len(parts) == 2:
        hours, minutes, seconds = parts[0], parts[1], 0
    elif len(parts) == 1:
        hours, minutes, seconds = 0, parts[0], 0
    else:
        raise ConfigError(f"dask/cluster/walltime: expected [D-]HH:MM:SS, found {walltime!r}")
    return days * 24 * 60 + hours * 60 + minutes + (1 if seconds else 0)


def _number(text: str, walltime: str) -> int:
    if not text.isdigit():
        raise ConfigError(f"dask/cluster/walltime: expected [D-]HH:MM:SS, found {walltime!r}")
    return int(text)
