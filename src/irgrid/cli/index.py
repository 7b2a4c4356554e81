"""Commands that build the inverted index and the forward index."""

from __future__ import annotations

import contextlib
import json
import time

from .common import log


def cmd_forward_index(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..index.forward import build_forward_index

    started = time.perf_counter()
    stats = build_forward_index(args.index, args.out, workers=args.workers)
    log.info("forward index of %d documents (%d terms) in %.1fs", stats["num_docs"], stats["total_length"],
             time.perf_counter() - started)


def cmd_index(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..analysis import Analyzer
    from ..index import build_index

    analyzer = Analyzer.from_dict(json.loads(args.analyzer))
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        scheduler = args.scheduler
        if args.dask_cluster:  # a dask-jobqueue cluster for this build only (irgrid.jobs.dask_cluster)
            # deferred: this command's own dependencies (see the module's docstring)
            from ..jobs.dask_cluster import jobqueue_client

            scheduler = stack.enter_context(jobqueue_client(json.loads(args.dask_cluster)))
        stats = build_index(args.docs, args.out, analyzer, num_buckets=args.num_buckets, scheduler=scheduler,
                            num_workers=args.workers)
    elapsed = time.perf_counter() - started
    log.info(
        "indexed %d documents (%d terms, %d distinct) in %.1fs: %.0f docs/s",
        stats["num_docs"], stats["total_length"], stats["num_terms"], elapsed, stats["num_docs"] / max(elapsed, 1e-9),
    )
