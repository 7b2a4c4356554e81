"""Sentence-model benchmark: the cost of a 20-point `mrf_sentence` (FDM) grid against one point, beside `ql_jm`.

    python benchmarks/sentences.py --index results/trecqa/index/porter_smart \\
        --topics results/trecqa/topics/test+judged.parquet --parses results/trecqa/parses [--repeats 3] [--json OUT]

Times a collection the workflow has built (``make run`` builds TrecQA's index, its parses and its
query sets: ``test+judged`` re-ranks each question's candidates, ``test`` retrieves from all the
pooled sentences). Every measurement runs in a fresh child process (harness.py's runner: one
thread, process-tree peak RSS), repeats interleaved, medians quoted with [min-max]:

  qljm-1           retrieve_grid(..., "ql_jm", one point): the bag-of-words peer (FIDM ranks as it)
  fdm-1 / fdm-20   retrieve_grid(..., "mrf_sentence", points): FDM at one point and at 20 points
                   (5 alpha_i x 2 lambda_sr x 2 beta_sr); the parses are read, the query set compiled
                   and every clique's tree values looked up once per call; the points only re-weight

Ratios: fdm-20 / fdm-1 (the goal: at most 3), fdm-1 / qljm-1 (what the cliques and the trees cost).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402  (the child runner and the statistics are harness.py's)

FDM_POINT = {"alpha_i": 0.5, "lambda_sr": 0.3, "beta_sr": 1.0, "lambda_pr": 0.1}
FDM_GRID = [dict(FDM_POINT, alpha_i=a, lambda_sr=s, beta_sr=b)
            for a in (0.1, 0.3, 0.5, 0.7, 0.9) for s in (0.1, 0.3) for b in (0.0, 1.0)]
GRID_GOAL = 3.0


def child(task: dict) -> dict:
    import resource

    import pandas as pd

    from irgrid.index import IndexReader
    from irgrid.retrieve import retrieve_grid

    topics = pd.read_parquet(task["topics"])
    start = time.perf_counter()
    runs = retrieve_grid(IndexReader(task["index"]), topics, task["family"], task["points"], task["depth"],
                         as_arrow=True, parses=task["parses"])
    out = {"seconds": time.perf_counter() - start, "rows": sum(len(run) for run in runs)}
    out["self_maxrss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["loadavg_1min"] = os.getloadavg()[0]
    return out


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        task = json.loads(Path(sys.argv[2]).read_text())
        Path(sys.argv[3]).write_text(json.dumps(child(task)))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--topics", type=Path, required=True)
    parser.add_argument("--parses", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import pandas as pd

    log_dir = Path(os.environ.get("TMPDIR", "/tmp")) / "irgrid-sentences-bench"
    log_dir.mkdir(parents=True, exist_ok=True)
    num_queries = len(pd.read_parquet(args.topics))
    print("command: python benchmarks/sentences.py " + " ".join(sys.argv[1:]), flush=True)
    print(f"machine: {harness.machine()}", flush=True)
    print(f"index {args.index}, topics {args.topics} ({num_queries} queries), top {args.depth}, "
          f"{args.repeats} repeats", flush=True)
    base = {"index": str(args.index.resolve()), "topics": str(args.topics.resolve()),
            "parses": str(args.parses.resolve()), "depth": args.depth}
    cases = (("qljm-1", "ql_jm", [{"lambda": 0.5}]), ("fdm-1", "mrf_sentence", [FDM_POINT]),
             ("fdm-20", "mrf_sentence", FDM_GRID))
    results: dict[str, list] = {}
    for r in range(args.repeats):
        for label, family, points in cases:
            task = dict(base, label=label, family=family, points=points, kind="grid", system=label)
            result = harness.run_child(task, log_dir, single_thread=True, script=Path(__file__).resolve())
            results.setdefault(label, []).append(result)
            print(f"[{r + 1}/{args.repeats}] {label:7s} {result['seconds']:.2f} s  peak RSS "
                  f"{result['peak_rss_bytes'] / 2**20:,.0f} MiB (load {result['loadavg_1min']:.1f})", flush=True)
    spread, med = harness.spread, harness.med
    seconds = {label: [r["seconds"] for r in runs] for label, runs in results.items()}
    ratios = {
        "fdm-20 / fdm-1": [g / s for g, s in zip(seconds["fdm-20"], seconds["fdm-1"])],
        "fdm-1 / qljm-1": [f / q for f, q in zip(seconds["fdm-1"], seconds["qljm-1"])],
    }
    print("\nmedian [min-max]")
    for label, values in seconds.items():
        rss = [r["peak_rss_bytes"] / 2**20 for r in results[label]]
        print(f"  {label:7s} {spread(values)} s  peak RSS {spread(rss, '{:,.0f}')} MiB")
    print("ratios (same run, per repeat):")
    for name, values in ratios.items():
        print(f"  {name:15s} {spread(values)}")
    ratio = med(ratios["fdm-20 / fdm-1"])
    print(f"goal: fdm-20 / fdm-1 {ratio:.2f} (goal <= {GRID_GOAL:g}): {'met' if ratio <= GRID_GOAL else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps({"seconds": seconds, "ratios": ratios, "results": results,
                                         "num_queries": num_queries, "machine": harness.machine()}, indent=1))


if __name__ == "__main__":
    main()
