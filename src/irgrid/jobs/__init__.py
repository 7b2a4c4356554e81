"""Where and how the workflow's jobs run: index-build placement, Dask clusters, failure summaries.

- :mod:`.placement`: where a Dask index build runs (local processes, a running dask.distributed
  scheduler, or a dask-jobqueue cluster the job starts) and what the job reserves for it.
- :mod:`.dask_cluster`: the dask-jobqueue cluster a ``build_index`` job starts and closes.
- :mod:`.failures`: the one-line summary of a failed run's first failed job.
- :mod:`.scheduler_timers`: one pending re-evaluation timer in Snakemake's scheduler loop.
"""
