"""Term-dependence benchmark: SDM against BM25 on the synthetic collection, in one run.

    python benchmarks/dependence.py [--docs 1000000] [--repeats 3] [--min-terms 3] [--max-terms 5] [--json OUT]

The collection and irgrid's index are scale.py's (generated and built here when missing; the
index with the analyzer of scale.py, positions kept). The queries are the collection's queries
with 3-5 distinct terms. Every measurement runs in a fresh child process (harness.py's child
runner: one thread, process-tree peak RSS), repeats interleaved, medians quoted with [min-max]:

  bm25   Scorer(IndexReader).prepare(topics) (term postings), then Scorer.top per query, top 1000
  sdm    the same for SDM at Indri's defaults (mu 2500, 0.85/0.10/0.05, #uw8): prepare compiles
         every query into terms, #1 and #uw8 pairs and counts each window's postings from the
         positions; the window postings are also timed on their own (positional postings read +
         the numba counting of every distinct window), and their count set beside the terms'
  grid   retrieve_grid(index, topics, "sdm", points) for one point vs a 20-point grid over
         (lambda_t, lambda_o, lambda_u) (each in its own child): grid / single

Ratios are SDM against BM25 measured in the same run. No peer runs SDM in Python; the
comparison that matters is what the dependence features cost over the bag of words.
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

SDM_POINT = {"mu": 2500.0, "lambda_t": 0.85, "lambda_o": 0.10, "lambda_u": 0.05, "window": 8.0}
BM25_POINT = {"k1": 1.2, "b": 0.75}
# 20 points over the three weights (each triple sums to 1, as Indri's #weight normalises them)
GRID_POINTS = [dict(SDM_POINT, lambda_t=t, lambda_o=round((1 - t) * o, 6), lambda_u=round((1 - t) * (1 - o), 6))
               for t in (0.6, 0.7, 0.8, 0.85, 0.9) for o in (0.25, 0.5, 0.67, 0.8)]
GOALS = {"sdm_qps_with_prepare": 100.0, "grid_ratio": 3.0}


def child(task: dict) -> dict:
    import resource

    import pandas as pd

    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer, retrieve_grid

    topics = pd.read_parquet(task["topics"])
    out: dict = {}
    if task["kind"] == "grid":
        start = time.perf_counter()
        runs = retrieve_grid(IndexReader(task["index"]), topics, "sdm", task["points"], task["depth"], as_arrow=True)
        out["seconds"] = time.perf_counter() - start
        out["rows"] = sum(len(run) for run in runs)
    else:
        family = task["kind"]
        model = get_model(family)
        point = model.check_point(SDM_POINT if family == "sdm" else BM25_POINT)
        start = time.perf_counter()
        scorer = Scorer(IndexReader(task["index"]))
        prepared = scorer.prepare(topics, model, [point])
        out["open_s"] = time.perf_counter() - start
        out["postings"] = int(prepared.num_postings)
        start = time.perf_counter()
        scorer.top(model, prepared, point, task["depth"], 0, 1)
        out["warmup_s"] = time.perf_counter() - start
        latencies = []
        for i in range(len(prepared)):
            t0 = time.perf_counter()
            scorer.top(model, prepared, point, task["depth"], i, i + 1)
            latencies.append(time.perf_counter() - t0)
        out["latencies"] = latencies
        if family == "sdm":
            out.update(window_costs(scorer, topics, model, point, prepared))
    out["self_maxrss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["loadavg_1min"] = os.getloadavg()[0]
    return out


def window_costs(scorer, topics, model, point, prepared) -> dict:
    """The window postings alone: the positional read and the counting of every distinct window, timed again."""
    from irgrid.features import many_window_postings
    from irgrid.retrieve.compiled import analyzed_queries

    queries = analyzed_queries(scorer.index.analyzer, topics)
    windows = list(dict.fromkeys(c.feature for q in queries for c in model.compile(q, [point]) if not c.feature.is_term))
    present = scorer.index.term_stats({w for f in windows for w in f.terms})
    windows = [f for f in windows if all(w in present for w in f.terms)]
    start = time.perf_counter()
    positional = scorer.index.positional_postings(sorted({w for f in windows for w in f.terms}))
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    found = many_window_postings(windows, positional)
    count_s = time.perf_counter() - start
    window_rows = sum(len(t.docids) for t in prepared.terms if not t.feature.is_term)
    return {"window_read_s": read_s, "window_count_s": count_s, "distinct_windows": len(windows),
            "window_postings": window_rows, "term_postings": int(prepared.num_postings) - window_rows,
            "positions_read": int(len(positional.positions)), "window_postings_check": sum(f.df for f in found)}


def run(task: dict, log_dir: Path) -> dict:
    """harness.run_child's process and memory watch, with this file's child."""
    task = dict(task, system=task["kind"])
    return harness.run_child(task, log_dir, single_thread=True, script=Path(__file__).resolve())


def select_queries(topics_path: Path, index_dir: Path, low: int, high: int, out: Path) -> int:
    import pandas as pd

    from irgrid.index import IndexReader

    analyzer = IndexReader(index_dir).analyzer
    topics = pd.read_parquet(topics_path)
    kept = topics[[low <= len(set(analyzer(text))) <= high for text in topics["text"]]].reset_index(drop=True)
    kept[["qid", "text"]].to_parquet(out)
    return len(kept)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        task = json.loads(Path(sys.argv[2]).read_text())
        Path(sys.argv[3]).write_text(json.dumps(child(task)))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--collection", type=Path)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-terms", type=int, default=3)
    parser.add_argument("--max-terms", type=int, default=5)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    collection = harness.ensure_collection((args.collection or harness.DEFAULT_SCRATCH / f"syn-{args.docs}").resolve(),
                                         args.docs)
    work = (args.work or harness.DEFAULT_SCRATCH / "indexes" / collection.name).resolve()
    log_dir = work / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    index_dir = work / "irgrid"
    if not index_dir.exists():
        print(f"building irgrid's index into {index_dir} ...", flush=True)
        built = harness.run_child({"kind": "build", "system": "irgrid", "docs": str(collection / "docs"),
                                 "out": str(index_dir), "peer_options": {}}, log_dir, single_thread=False)
        print(f"  {built['seconds']:.1f} s", flush=True)
    topics = work / f"topics-{args.min_terms}-{args.max_terms}-terms.parquet"
    num_queries = select_queries(collection / "topics.parquet", index_dir, args.min_terms, args.max_terms, topics)
    print("command: python benchmarks/dependence.py " + " ".join(sys.argv[1:]), flush=True)
    print(f"machine: {harness.machine()}", flush=True)
    print(f"collection {collection} ({args.docs:,} docs); {num_queries} queries of {args.min_terms}-{args.max_terms} "
          f"distinct terms; top {args.depth}; {args.repeats} repeats", flush=True)
    base = {"index": str(index_dir), "topics": str(topics), "depth": args.depth}
    results: dict[str, list] = {}
    for r in range(args.repeats):
        for kind, extra in (("bm25", {}), ("sdm", {}), ("grid", {"points": GRID_POINTS[:1], "label": "grid-1"}),
                            ("grid", {"points": GRID_POINTS, "label": "grid-20"})):
            result = run(dict(base, kind=kind, **extra), log_dir)
            label = extra.get("label", kind)
            results.setdefault(label, []).append(result)
            if kind == "grid":
                line = f"{result['seconds']:.2f} s"
            else:
                qps = num_queries / sum(result["latencies"])
                line = f"open+prepare {result['open_s']:.2f} s, {qps:,.0f} q/s per query"
            print(f"[{r + 1}/{args.repeats}] {label:8s} {line}  peak RSS {result['peak_rss_bytes'] / 2**20:,.0f} MiB "
                  f"(load {result['loadavg_1min']:.1f})", flush=True)
    summary = summarise(results, num_queries)
    print_summary(summary)
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "results": results, "num_queries": num_queries,
                                         "docs": args.docs, "machine": harness.machine()}, indent=1))


def summarise(results: dict, num_queries: int) -> dict:
    med = harness.med
    summary: dict = {}
    for family in ("bm25", "sdm"):
        runs = results[family]
        latencies = [sorted(r["latencies"]) for r in runs]
        summary[family] = {
            "open_s": [r["open_s"] for r in runs],
            "qps": [num_queries / sum(lat) for lat in latencies],
            "qps_with_open": [harness.qps_with_open(r) for r in runs],
            "p50_ms": [1000 * harness.percentile(lat, 50) for lat in latencies],
            "p95_ms": [1000 * harness.percentile(lat, 95) for lat in latencies],
            "peak_rss_mib": [r["peak_rss_bytes"] / 2**20 for r in runs],
            "postings": runs[0]["postings"],
        }
    sdm = results["sdm"]
    summary["windows"] = {key: [r[key] for r in sdm] for key in ("window_read_s", "window_count_s")}
    summary["windows"].update({key: sdm[0][key] for key in ("distinct_windows", "window_postings", "term_postings",
                                                             "positions_read")})
    single, grid = [r["seconds"] for r in results["grid-1"]], [r["seconds"] for r in results["grid-20"]]
    summary["grid"] = {"single_s": single, "grid_s": grid, "ratio": [g / s for g, s in zip(grid, single)]}
    summary["ratios"] = {
        "sdm_qps / bm25_qps": med(summary["sdm"]["qps"]) / med(summary["bm25"]["qps"]),
        "sdm_qps_with_prepare / bm25": med(summary["sdm"]["qps_with_open"]) / med(summary["bm25"]["qps_with_open"]),
        "sdm_prepare / bm25_prepare": med(summary["sdm"]["open_s"]) / med(summary["bm25"]["open_s"]),
        "window_postings_s / bm25_prepare": (med(summary["windows"]["window_read_s"])
                                             + med(summary["windows"]["window_count_s"])) / med(summary["bm25"]["open_s"]),
        "window_postings / term_postings (count)": summary["windows"]["window_postings"]
        / max(1, summary["windows"]["term_postings"]),
    }
    summary["goals"] = {
        "sdm_qps_with_prepare": (med(summary["sdm"]["qps_with_open"]), GOALS["sdm_qps_with_prepare"],
                                 med(summary["sdm"]["qps_with_open"]) >= GOALS["sdm_qps_with_prepare"]),
        "grid_ratio": (med(summary["grid"]["ratio"]), GOALS["grid_ratio"], med(summary["grid"]["ratio"]) <= GOALS["grid_ratio"]),
    }
    return summary


def print_summary(summary: dict) -> None:
    spread = harness.spread
    print("\nmedian [min-max]")
    for family in ("bm25", "sdm"):
        s = summary[family]
        print(f"  {family:5s} open+prepare {spread(s['open_s'])} s  per query {spread(s['qps'], '{:,.0f}')} q/s  "
              f"incl. prepare {spread(s['qps_with_open'], '{:,.0f}')} q/s  p50 {spread(s['p50_ms'])} ms  "
              f"p95 {spread(s['p95_ms'])} ms  peak RSS {spread(s['peak_rss_mib'], '{:,.0f}')} MiB  "
              f"postings {s['postings']:,}")
    w = summary["windows"]
    print(f"  window postings: read positions {spread(w['window_read_s'])} s ({w['positions_read']:,} positions), "
          f"count {spread(w['window_count_s'])} s; {w['distinct_windows']:,} distinct windows, "
          f"{w['window_postings']:,} window postings vs {w['term_postings']:,} term postings")
    g = summary["grid"]
    print(f"  grid: 1 point {spread(g['single_s'])} s, 20 points {spread(g['grid_s'])} s, ratio {spread(g['ratio'])}")
    print("ratios (same run):")
    for name, value in summary["ratios"].items():
        print(f"  {name:42s} {value:.2f}")
    print("goals:")
    for name, (value, target, met) in summary["goals"].items():
        print(f"  {name:22s} {value:,.2f} (goal {'>=' if name.startswith('sdm') else '<='} {target:g}): "
              f"{'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
