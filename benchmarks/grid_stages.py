"""Where a fresh process's ``retrieve_grid`` of a BM25 grid spends its CPU time, stage by stage.

    python benchmarks/grid_stages.py --index benchmarks/.data/indexes/syn-1000000/irgrid \\
        --topics benchmarks/.data/syn-1000000/topics.parquet --points 20

One call of ``retrieve_grid(index, topics, "bm25", points, depth, as_arrow=True)`` (what ``scale.py``'s
grid children and ``irgrid retrieve`` call; the first ``--points`` of ``scale.py``'s 20-point grid),
after a call on 3 queries that loads numba's cached kernels. The CPU seconds of the call, and of the
``Scorer`` methods and helpers it goes through, each wrapped for the call (a stage's time includes
the stages it calls: ``run_table_of`` holds ``docno_column``): ``prepare`` (analysis, postings read,
candidate slots; once per block of queries), ``grid_layout`` (gathered once per block of queries
when a grid takes more than one kernel pass), ``_top_block`` (the fused kernel: scoring and
ranking), ``_concatenated_tops`` (the blocks of queries' rankings of a point joined),
``run_table_of`` (each point's Arrow run) and ``docno_column``; "other" is the call's time outside
the non-nested stages. Run it from a checkout's ``src`` on ``PYTHONPATH`` to measure that checkout.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

#: scale.py's 20-point grid
GRID = [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]
#: the stages timed: Scorer methods, then the module's helpers
SCORER_STAGES = ("prepare", "grid_layout", "_top_block", "run_table_of", "docno_column")
MODULE_STAGES = ("_concatenated_tops",)
#: stages inside another stage (left out of "other")
NESTED = ("docno_column",)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--topics", type=Path, required=True)
    parser.add_argument("--points", type=int, default=len(GRID))
    parser.add_argument("--depth", type=int, default=1000)
    args = parser.parse_args()

    import irgrid
    import irgrid.retrieve as retrieve
    from irgrid.index import IndexReader
    from irgrid.runs import read_topics

    topics = read_topics(args.topics)
    index = IndexReader(args.index)
    retrieve.retrieve_grid(index, topics.head(3), "bm25", GRID, args.depth, as_arrow=True)  # kernels loaded
    spent: collections.Counter = collections.Counter()

    def timed(owner, name):
        method = getattr(owner, name)

        def wrapper(*positional, **named):
            started = time.process_time()
            try:
                return method(*positional, **named)
            finally:
                spent[name] += time.process_time() - started

        setattr(owner, name, wrapper)

    for name in SCORER_STAGES:
        timed(retrieve.Scorer, name)
    for name in MODULE_STAGES:
        timed(retrieve, name)
    started = time.process_time()
    runs = retrieve.retrieve_grid(index, topics, "bm25", GRID[:args.points], args.depth, as_arrow=True)
    total = time.process_time() - started
    other = total - sum(seconds for name, seconds in spent.items() if name not in NESTED)
    stages = " ".join(f"{name} {spent[name]:.3f}" for name in SCORER_STAGES + MODULE_STAGES if name in spent)
    print(f"{Path(irgrid.__file__).parents[1]} {args.points} points: {total:.3f} CPU s, {stages}, other {other:.3f}; "
          f"{sum(run.num_rows for run in runs):,} rows, peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
