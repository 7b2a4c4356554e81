"""The Parquet reads of a retrieval process's open, through pq.read_table against pq.ParquetFile.read,
in CPU seconds of fresh processes (the two alternating).

    python benchmarks/open_reads.py --index DIR --topics TOPICS.parquet [--repeats 7]

Each child imports pyarrow.parquet and pandas (not counted) and times, in the open's order, the
reads that IndexReader and a retrieval job's topics make: the topics, docs.parquet's three columns
of the open, the whole terms.parquet; ``read_table`` does them with ``pq.read_table`` (its first call
imports pyarrow.dataset), ``file`` with ``pq.ParquetFile(path).read``, ``file, one thread`` the same
with ``use_threads=False`` (irgrid.io.read_parquet_file).
The parent prints the median [min-max] of each and the load average (1 min) at the children.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WAYS = ("read_table", "file", "file, one thread")
READS = ("topics", "docs columns", "terms", "all three")


def child(index: str, topics: str, way: str) -> dict:
    import pandas  # noqa: F401  (as a retrieval job has it)
    import pyarrow.parquet as pq

    def read(path, columns=None):
        if way == "read_table":
            return pq.read_table(path, columns=columns)
        with pq.ParquetFile(path) as file:
            return file.read(columns=columns, use_threads=way == "file")

    clock = time.process_time
    out = {}
    start = clock()
    read(topics).to_pandas()
    out["topics"] = clock() - start
    at = clock()
    read(os.path.join(index, "docs.parquet"), ["length", "unique_terms", "docno_rank"])
    out["docs columns"] = clock() - at
    at = clock()
    read(os.path.join(index, "terms.parquet"))
    out["terms"] = clock() - at
    out["all three"] = clock() - start
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--_child", choices=WAYS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child:
        print(json.dumps(child(args.index, args.topics, args._child)))
        return
    print(f"index {args.index}, topics {args.topics}, {args.repeats} fresh processes a line (CPU s, "
          f"median [min-max]); load {os.getloadavg()[0]:.1f}", flush=True)
    runs: dict = {way: [] for way in WAYS}
    loads = []
    for _ in range(args.repeats):
        for way in WAYS:
            done = subprocess.run([sys.executable, __file__, "--_child", way, "--index", args.index,
                                   "--topics", args.topics], check=True, capture_output=True, text=True)
            runs[way].append(json.loads(done.stdout.strip().splitlines()[-1]))
            loads.append(os.getloadavg()[0])
    for way in WAYS:
        print(way)
        for name in READS:
            values = [r[name] for r in runs[way]]
            print(f"  {name:14s} {statistics.median(values):.4f} [{min(values):.4f}-{max(values):.4f}]")
    print(f"load average (1 min) at the children: {statistics.median(loads):.2f} [{min(loads):.2f}-{max(loads):.2f}]")


if __name__ == "__main__":
    main()
