"""A fresh process's first query and the rest, one at a time, as scale.py's per-query loop calls them.

    python benchmarks/first_query.py --index DIR --topics TOPICS.parquet [--family ql_dirichlet] [--repeats 5]

Each repeat is a fresh child (``--_child``) that imports irgrid first (not counted) and times, in
CPU seconds of the process (user + system): the open (``Scorer(IndexReader(index)).prepare(topics)``),
the first query (``Scorer.top(model, prepared, point, 1000, 0, 1)``: scale.py's "warm-up") and every
other query the same way, one call each. The parent prints the median [min-max] and the load
average. BM25 at k1=1.2 b=0.75, Dirichlet at mu=1000 (scale.py's points). Works with any checkout's
src on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

POINTS = {"bm25": {"k1": 1.2, "b": 0.75}, "ql_dirichlet": {"mu": 1000.0}}
SINGLE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")}


def child(index: str, topics_path: str, family: str) -> dict:
    import pandas as pd

    import irgrid.index
    import irgrid.models
    import irgrid.retrieve  # noqa: F401
    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer

    topics = pd.read_parquet(topics_path)
    model = get_model(family)
    point = model.check_point(POINTS[family])
    clock = time.process_time
    start = clock()
    scorer = Scorer(IndexReader(index))
    prepared = scorer.prepare(topics)
    opened = clock()
    scorer.top(model, prepared, point, 1000, 0, 1)
    first = clock()
    for q in range(1, len(prepared)):
        scorer.top(model, prepared, point, 1000, q, q + 1)
    return {"open": opened - start, "first query": first - opened, "other queries": clock() - first,
            "queries": len(prepared)}


def spread(values) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--topics", type=Path, required=True)
    parser.add_argument("--family", choices=sorted(POINTS), default="ql_dirichlet")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child:
        print(json.dumps(child(str(args.index), str(args.topics), args.family)))
        return
    env = dict(os.environ, **SINGLE_THREAD_ENV)
    command = [sys.executable, __file__, "--_child", "--index", str(args.index), "--topics", str(args.topics),
               "--family", args.family]
    results, loads = [], []
    for _ in range(args.repeats):
        done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        loads.append(os.getloadavg()[0])
    print(f"{args.family}, index {args.index}, {args.repeats} fresh processes (CPU s, median [min-max])")
    for step in ("open", "first query", "other queries"):
        print(f"  {step:14s} {spread([r[step] for r in results])}")
    print(f"  {'first + others':14s} {spread([r['first query'] + r['other queries'] for r in results])}"
          f"  ({results[0]['queries']} queries)")
    print(f"  load average (1 min) after each child: {spread(loads)}")


if __name__ == "__main__":
    main()
