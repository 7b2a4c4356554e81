"""Phrase-model benchmark: the cost of a 20-point `pm` grid against one point, beside `uni`, in one run.

    python benchmarks/phrases.py --collection-index results/cacm/index/porter \\
        --topics results/cacm/topics/text+parser.parquet [--repeats 3] [--json OUT]
    python benchmarks/phrases.py --docs 1000000 [--repeats 3] [--json OUT]

The first form times a collection the workflow has built (its index and a query set with
phrases: X+parser, X+pmi, ...). The second uses scale.py's synthetic collection and index (made
when missing) and its queries of 3-5 distinct terms, each adjacent pair of query words taken as
a phrase from the left without overlap (the synthetic words are independent, so these phrases are
rare: their windows cost the positional read, little counting).

Every measurement runs in a fresh child process (harness.py's runner: one thread, process-tree
peak RSS), repeats interleaved, medians quoted with [min-max]:

  uni-1 / uni-20   retrieve_grid(index, topics, "uni", points): Dirichlet query likelihood at one
                   point, and over 20 points (mu only: the bag-of-words reference)
  pm-1 / pm-20     the same for pm: one point (the paper's t1 0.1, t2 0.4), and 20 points
                   (5 mu x 4 t1); the phrase statistics (df, cf, PMI, lambda's inputs) are derived
                   once per call, the points only re-weight

Ratios: pm-20 / pm-1 (the goal: at most 3), pm-1 / uni-1 (what the phrases cost over words).
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

import harness  # noqa: E402  (the collection and the child runner are harness.py's)

MUS = (250.0, 500.0, 1000.0, 2000.0, 2500.0)
PM_POINT = {"mu": 1000.0, "t1": 0.1, "t2": 0.4, "lambda_max": 0.9, "pmi_threshold": 1.0}
PM_GRID = [dict(PM_POINT, mu=mu, t1=t1) for mu in MUS for t1 in (0.0, 0.1, 0.2, 0.3)]
UNI_GRID = [{"mu": mu} for mu in (*MUS, *(m + 50 for m in MUS), *(m + 100 for m in MUS), *(m + 150 for m in MUS))]
GRID_GOAL = 3.0


def child(task: dict) -> dict:
    import resource

    import pandas as pd

    from irgrid.index import IndexReader
    from irgrid.retrieve import retrieve_grid

    topics = pd.read_parquet(task["topics"])
    start = time.perf_counter()
    runs = retrieve_grid(IndexReader(task["index"]), topics, task["family"], task["points"], task["depth"],
                         as_arrow=True)
    out = {"seconds": time.perf_counter() - start, "rows": sum(len(run) for run in runs)}
    out["self_maxrss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["loadavg_1min"] = os.getloadavg()[0]
    return out


def run(task: dict, log_dir: Path) -> dict:
    task = dict(task, kind="grid", system=task["label"])
    return harness.run_child(task, log_dir, single_thread=True, script=Path(__file__).resolve())


def synthetic_topics(topics_path: Path, index_dir: Path, low: int, high: int, out: Path) -> int:
    """Queries of low-high distinct terms, each adjacent pair of words (left to right, no overlap) a phrase."""
    import pandas as pd

    from irgrid.index import IndexReader

    analyzer = IndexReader(index_dir).analyzer
    topics = pd.read_parquet(topics_path)
    kept = topics[[low <= len(set(analyzer(text))) <= high for text in topics["text"]]].reset_index(drop=True)
    words = [str(text).split() for text in kept["text"]]
    kept = kept[["qid", "text"]].assign(phrases=[[" ".join(w[i:i + 2]) for i in range(0, len(w) - 1, 2)]
                                                 for w in words])
    kept.to_parquet(out)
    return len(kept)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        task = json.loads(Path(sys.argv[2]).read_text())
        Path(sys.argv[3]).write_text(json.dumps(child(task)))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection-index", type=Path, help="an index the workflow built (with --topics)")
    parser.add_argument("--topics", type=Path, help="a query set with a phrases column (with --collection-index)")
    parser.add_argument("--docs", type=int, default=1_000_000, help="synthetic collection size (no --collection-index)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    if args.collection_index:
        if not args.topics:
            parser.error("--collection-index needs --topics")
        index_dir, topics = args.collection_index.resolve(), args.topics.resolve()
        log_dir = Path(os.environ.get("TMPDIR", "/tmp")) / "irgrid-phrases-bench"
        import pandas as pd

        num_queries = len(pd.read_parquet(topics))
        what = f"index {index_dir}, topics {topics}"
    else:
        collection = harness.ensure_collection(harness.DEFAULT_SCRATCH / f"syn-{args.docs}", args.docs)
        work = harness.DEFAULT_SCRATCH / "indexes" / collection.name
        log_dir = work / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        index_dir = work / "irgrid"
        if not index_dir.exists():
            print(f"building irgrid's index into {index_dir} ...", flush=True)
            harness.run_child({"kind": "build", "system": "irgrid", "docs": str(collection / "docs"),
                             "out": str(index_dir), "peer_options": {}}, log_dir, single_thread=False)
        topics = work / "topics-3-5-terms-phrases.parquet"
        num_queries = synthetic_topics(collection / "topics.parquet", index_dir, 3, 5, topics)
        what = f"synthetic collection {collection} ({args.docs:,} docs)"
    log_dir.mkdir(parents=True, exist_ok=True)
    print("command: python benchmarks/phrases.py " + " ".join(sys.argv[1:]), flush=True)
    print(f"machine: {harness.machine()}", flush=True)
    print(f"{what}; {num_queries} queries; top {args.depth}; {args.repeats} repeats", flush=True)
    cases = (("uni-1", "uni", UNI_GRID[:1]), ("uni-20", "uni", UNI_GRID),
             ("pm-1", "pm", [PM_POINT]), ("pm-20", "pm", PM_GRID))
    base = {"index": str(index_dir), "topics": str(topics), "depth": args.depth}
    results: dict[str, list] = {}
    for r in range(args.repeats):
        for label, family, points in cases:
            result = run(dict(base, label=label, family=family, points=points), log_dir)
            results.setdefault(label, []).append(result)
            print(f"[{r + 1}/{args.repeats}] {label:7s} {result['seconds']:.2f} s  peak RSS "
                  f"{result['peak_rss_bytes'] / 2**20:,.0f} MiB (load {result['loadavg_1min']:.1f})", flush=True)
    spread, med = harness.spread, harness.med
    seconds = {label: [r["seconds"] for r in runs] for label, runs in results.items()}
    ratios = {
        "pm-20 / pm-1": [g / s for g, s in zip(seconds["pm-20"], seconds["pm-1"])],
        "uni-20 / uni-1": [g / s for g, s in zip(seconds["uni-20"], seconds["uni-1"])],
        "pm-1 / uni-1": [p / u for p, u in zip(seconds["pm-1"], seconds["uni-1"])],
        "pm-20 / uni-20": [p / u for p, u in zip(seconds["pm-20"], seconds["uni-20"])],
    }
    print("\nmedian [min-max]")
    for label, values in seconds.items():
        rss = [r["peak_rss_bytes"] / 2**20 for r in results[label]]
        print(f"  {label:7s} {spread(values)} s  peak RSS {spread(rss, '{:,.0f}')} MiB")
    print("ratios (same run, per repeat):")
    for name, values in ratios.items():
        print(f"  {name:15s} {spread(values)}")
    ratio = med(ratios["pm-20 / pm-1"])
    print(f"goal: pm-20 / pm-1 {ratio:.2f} (goal <= {GRID_GOAL:g}): {'met' if ratio <= GRID_GOAL else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps({"seconds": seconds, "ratios": ratios, "results": results,
                                         "num_queries": num_queries, "what": what, "machine": harness.machine()},
                                        indent=1))


if __name__ == "__main__":
    main()
