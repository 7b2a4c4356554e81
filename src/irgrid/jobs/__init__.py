"""Where and how the workflow's jobs run: chunk jobs, index-build placement, Dask clusters, failures.

- :mod:`.placement`: where a Dask index build runs (local processes, a running dask.distributed
  scheduler, or a dask-jobqueue cluster the job starts) and what the job reserves for it.
- :mod:`.dask_cluster`: the dask-jobqueue cluster a ``build_index`` job starts and closes.
- :mod:`.failures`: the one-line summary of a failed run's first failed job.
- :mod:`.chunk`: a chunk job: its cells scored and evaluated in one process, one file of evaluations.
- :mod:`.scheduler_timers`: one pending re-evaluation timer in Snakemake's scheduler loop.
- :mod:`.provenance`: what made a job's output (run files' metadata and sidecars, cells' digests, the
  jobs' benchmark files), written by the jobs and read by the report.
"""
