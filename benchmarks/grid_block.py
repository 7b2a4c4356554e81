"""A grid against one point, in fresh processes, for one or more source trees in the same run.

    python benchmarks/grid_block.py --index benchmarks/.data/indexes/syn-1000000/irgrid \\
        --topics benchmarks/.data/syn-1000000/topics.parquet --src /path/to/main/src --src src --repeats 3

Each measurement is what ``benchmarks/scale.py`` section (c) times: a fresh Python process (one
thread for every library, as scale.py's children) that imports ``irgrid.retrieve`` and then times
``retrieve_grid(IndexReader(index), topics, "bm25", points, as_arrow=True)`` for one point (k1=1.2,
b=0.75) or the 20-point grid (k1 x b = 5 x 4), and the open alone (``Scorer(IndexReader(index))
.prepare(topics)``: a fresh retrieval job's fixed cost, numba loading its cached kernels included),
CPU seconds (``time.process_time``: user + system) and wall seconds.  The source trees and the
three tasks are interleaved within each repeat, so a change of load touches all of them alike;
medians and the grid / single ratios are per tree, and each task's later tree / first tree.
A tree's numba kernels are loaded from its own cache (``--numba-cache``: a directory per tree,
so a checkout that must not be written to is not), filled by one untimed process first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

SINGLE_POINT = [{"k1": 1.2, "b": 0.75}]
GRID_POINTS = [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]
SINGLE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")}

CHILD = """
import json, sys, time
import pyarrow.parquet as pq
index_dir, topics_path, points = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
topics = pq.read_table(topics_path).to_pandas()
import irgrid.retrieve  # noqa: F401  (imported outside the timed part, as in scale.py)
from irgrid.index import IndexReader
from irgrid.retrieve import retrieve_grid
start, start_cpu = time.perf_counter(), time.process_time()
if points:
    rows = sum(len(run) for run in retrieve_grid(IndexReader(index_dir), topics, "bm25", points, as_arrow=True))
else:  # the open alone
    from irgrid.retrieve import Scorer
    rows = len(Scorer(IndexReader(index_dir)).prepare(topics))
print(json.dumps({"wall": time.perf_counter() - start, "cpu": time.process_time() - start_cpu, "rows": rows}))
"""


def measure(src: str, cache: str | None, index: str, topics: str, points: list[dict]) -> dict:
    env = dict(os.environ, PYTHONPATH=src, **SINGLE_THREAD_ENV)
    if cache:
        env["NUMBA_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, "-c", CHILD, index, topics, json.dumps(points)], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--src", action="append", required=True, help="a source tree (PYTHONPATH); repeat")
    parser.add_argument("--numba-cache", action="append", default=[],
                        help="NUMBA_CACHE_DIR of the --src of the same position ('' for numba's own)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write every measurement here, with each tree's commit")
    args = parser.parse_args()
    caches = args.numba_cache + [""] * (len(args.src) - len(args.numba_cache))
    tasks = (("open", []), ("single", SINGLE_POINT), ("grid20", GRID_POINTS))
    for src, cache in zip(args.src, caches):  # fills the tree's numba cache; not timed
        measure(src, cache, args.index, args.topics, SINGLE_POINT)
    results: dict = {(src, name): [] for src in args.src for name, _ in tasks}
    for r in range(args.repeats):
        for src, cache in zip(args.src, caches):
            for name, points in tasks:
                result = measure(src, cache, args.index, args.topics, points)
                results[src, name].append(result)
                print(f"[{r + 1}/{args.repeats}] {src:30s} {name:7s} {result['cpu']:7.2f} CPU s {result['wall']:7.2f} "
                      f"wall s  rows {result['rows']:,}  (load {os.getloadavg()[0]:.1f})", flush=True)
    print()
    for src in args.src:
        opens = results[src, "open"]
        print(f"{src}: open (Scorer + prepare) cpu {statistics.median(x['cpu'] for x in opens):.2f} s, "
              f"wall {statistics.median(x['wall'] for x in opens):.2f} s (medians)")
    for src in args.src:
        single, grid = results[src, "single"], results[src, "grid20"]
        line = [f"{src}:"]
        for key in ("cpu", "wall"):
            s = statistics.median(x[key] for x in single)
            g = statistics.median(x[key] for x in grid)
            ratios = sorted(b[key] / a[key] for a, b in zip(single, grid))
            line.append(f"{key} single {s:.2f} s, grid20 {g:.2f} s, grid / single {g / s:.2f} "
                        f"(per repeat {', '.join(f'{x:.2f}' for x in ratios)}), a point {(g - s) / 19:.3f} s;")
        print(" ".join(line))
    if len(args.src) > 1:
        first = args.src[0]
        for src in args.src[1:]:
            for name, _ in tasks:
                for key in ("cpu", "wall"):
                    a = statistics.median(x[key] for x in results[first, name])
                    b = statistics.median(x[key] for x in results[src, name])
                    print(f"{name:7s} {key:4s} {src} / {first}: {b / a:.3f}")
    if args.json:
        def commit(src: str) -> str:
            out = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True)
            dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "--", "."], capture_output=True, text=True)
            return out.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else "")

        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"command": " ".join(sys.argv), "index": args.index, "topics": args.topics,
                       "trees": {src: {"commit": commit(src), **{name: results[src, name] for name, _ in tasks}}
                                 for src in args.src}}, handle, indent=1)


if __name__ == "__main__":
    main()
