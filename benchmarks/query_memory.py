"""A query process's memory: ``retrieve_grid`` over a whole query set, its queries read a block at a time.

    python benchmarks/query_memory.py --index benchmarks/.data/indexes/syn-10000000/irgrid \\
        --topics benchmarks/.data/syn-10000000/topics.parquet

Each line is a fresh child process (``--child``) running ``retrieve_grid(IndexReader(index), topics,
family, points, as_arrow=True)`` (what a chunk job and the ``retrieve`` rule run) with
``irgrid.retrieve.QUERY_BLOCK_POSTINGS`` at the package's value and, for comparison, at a budget
no query set reaches (the whole set prepared at once, as before query blocks): wall and CPU seconds,
rows ranked, and the child's peak RSS (``ru_maxrss``). The runs of every point are held until the
end, as ``retrieve_grid`` returns them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

CASES = [("bm25", 1), ("bm25", 20), ("ql_dirichlet", 4)]
WHOLE_SET = 10**12


def points_of(family: str, count: int) -> list[dict]:
    if family == "bm25":
        return [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.7, 0.9)][:count]
    return [{"mu": mu} for mu in (500, 1000, 1500, 2000)][:count]


def child(args) -> None:
    import resource

    import irgrid.retrieve as retrieve
    from irgrid.index import IndexReader
    from irgrid.runs import read_topics

    if args.budget:
        retrieve.QUERY_BLOCK_POSTINGS = args.budget
    wall, cpu = time.perf_counter(), time.process_time()
    runs = retrieve.retrieve_grid(IndexReader(args.index), read_topics(args.topics), args.family,
                                  points_of(args.family, args.points), as_arrow=True)
    blocks = len(retrieve.query_blocks(IndexReader(args.index), read_topics(args.topics)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.family:13s} {args.points:2d} points  budget {retrieve.QUERY_BLOCK_POSTINGS:>17,} postings "
          f"({blocks} blocks)  rows {sum(run.num_rows for run in runs):>11,}  wall {time.perf_counter() - wall:6.1f} s  "
          f"CPU {time.process_time() - cpu:6.1f} s  peak RSS {peak:7,.0f} MiB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--topics", type=Path, required=True)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--family", help=argparse.SUPPRESS)
    parser.add_argument("--points", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--budget", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    print(f"{args.index}; load average {os.getloadavg()[0]:.1f}", flush=True)
    for family, count in CASES:
        for budget in (0, WHOLE_SET):
            if budget and family == "bm25" and count > 1:
                continue  # the whole set at once is measured for one point of each family
            subprocess.run([sys.executable, __file__, "--child", "--index", str(args.index), "--topics",
                            str(args.topics), "--family", family, "--points", str(count), "--budget", str(budget)],
                           check=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
