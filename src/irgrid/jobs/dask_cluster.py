"""A dask-jobqueue cluster started by a ``build_index`` job, used for its build, then closed.

Configured by ``dask.cluster`` (``workflow/schemas/config.schema.yaml``)::

    dask:
      cluster: {jobqueue: slurm, cores: 4, memory: 8GB, walltime: "02:00:00", workers: 4}

Each worker is one SLURM job (``sbatch``) running ``python -m distributed.cli.dask_worker`` with
the job's own Python, so the environment must be on a file system the nodes share, as the
results directory must be. ``host`` binds the scheduler and the workers to one address
(``127.0.0.1`` on a single machine); without it they listen on every interface, as
``dask worker`` does.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from typing import Any

from irgrid.errors import ConfigError

log = logging.getLogger(__name__)

JOBQUEUES = ("slurm",)


def cluster_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``dask.cluster`` as keyword arguments of dask_jobqueue's ``SLURMCluster``."""
    if settings.get("jobqueue") not in JOBQUEUES:
        raise ConfigError(f"dask/cluster/jobqueue: expected one of {list(JOBQUEUES)}, found {settings.get('jobqueue')!r}")
    options: dict[str, Any] = {
        "cores": int(settings["cores"]),
        "processes": int(settings.get("processes") or 1),
        "memory": str(settings["memory"]),
        "walltime": str(settings["walltime"]),
    }
    for key in ("queue", "account", "log_directory"):
        if settings.get(key):
            options[key] = str(settings[key])
    if settings.get("job_extra_directives"):
        options["job_extra_directives"] = [str(d) for d in settings["job_extra_directives"]]
    host = settings.get("host")
    if host:
        options["scheduler_options"] = {"host": str(host)}
        options["worker_extra_args"] = ["--host", str(host)]
    return options


@contextlib.contextmanager
def jobqueue_client(settings: Mapping[str, Any]) -> Iterator[Any]:
    """A ``distributed.Client`` of a fresh SLURMCluster scaled to ``settings['workers']`` worker jobs.

    The worker jobs are cancelled when the block ends, however it ends. A worker job that dies
    (cancelled, pre-empted, out of walltime) loses only its running tasks: the scheduler runs
    them again on the others.
    """
    # deferred: dask_jobqueue (the slurm extra) is imported only when a cluster is started
    from dask_jobqueue import SLURMCluster
    from distributed import Client

    options = cluster_options(settings)
    workers = int(settings["workers"])
    cluster = SLURMCluster(**options)
    client = None
    try:
        log.info("dask-jobqueue: scheduler %s, %d worker job(s):\n%s", cluster.scheduler_address, workers,
                 cluster.job_script())
        cluster.scale(jobs=workers)
        client = Client(cluster)
        yield client
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        with contextlib.suppress(Exception):
            cluster.close()
