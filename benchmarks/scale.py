"""Scale benchmark: irgrid against peers (bm25s, tantivy, pisa) on one synthetic collection, in one run.

    python benchmarks/scale.py [--docs 1000000] [--collection DIR] [--repeats 3]
                               [--peers bm25s,tantivy[,pisa]] [--skip-build] [--no-porter] [--no-sdm]
                               [--baseline SMALLER.json] [--json OUT]

The collection is irgrid.collections.synthetic's (SyntheticSpec(num_docs=N), generated into --collection if
missing): Zipfian pseudo-words, ~120 tokens a document, 1000 queries of 2-6 mid-frequency terms.
Every measurement runs in a fresh child process of this script, so that nothing an earlier step
allocated or cached in-process counts; the parent samples the RSS of the child and all its
descendants (their sum, every 50 ms, psutil) and reports the peak. Measurements are interleaved
across systems (repeat 1 of every system, then repeat 2, ...) and quoted as median [min-max].

  (a) build     irgrid build_index (analyzer lucene / no stemmer / no stop words, positions,
                scheduler=None: the default local pool of 2 workers, threads for this collection
                of plain words, processes with the Porter stemmer, the extra line built in the
                first repeat only)
                and each peer's index from the same Parquet shards: wall seconds of the build call
                (imports excluded), docs/s, peak RSS of the process tree, index bytes on disk.
  (b) queries   the whole query set, top-1000, BM25 k1=1.2 b=0.75 for every system (and irgrid's
                QL-Dirichlet mu=1000), one process, one thread (OMP/OpenBLAS/numba/arrow pinned
                to 1): "open" = load the index and prepare the whole query set (irgrid: Scorer +
                prepare(), which reads the postings of every query term; bm25s: load + tokenize;
                tantivy: open + searcher + build the query objects), "warm-up" = the first
                query once (numba compiles here), then every query timed on its own:
                queries/s = n / sum of per-query times, p50 / p95 latency, queries/s including
                the open and the warm-up (the first query's one-off costs: what a fresh process
                takes after its imports), and the batch call where the system has one. Every
                system's imports are made before the timed open (a peer's constructor imports its
                package; irgrid's imports its modules) and printed apart.
  (c) grid      irgrid: retrieve_grid(IndexReader(index), topics, "bm25", points) for one
                point vs a 20-point grid (k1 x b = 5 x 4), each in its own child: grid / single;
                and the same rankings as a chunk job makes them (Scorer.grid_tops: docids and
                scores, no run table with docnos), grid / single in CPU s.
                A peer with a grid method (pisa) runs the same points from its built index, each
                point paying what that peer must redo for a new (k1, b) (PISA: the point's
                block-max data and compressed index, then the query set): grid / single beside
                irgrid's.
  (d) SDM       benchmarks/dependence.py's bm25 and sdm children on its queries of 3-5 terms:
                q/s including open + prepare, SDM beside BM25 (--no-sdm to skip).
  (e) evaluation  with --evaluation: benchmarks/evaluation.py on this collection's synthetic qrels and
                irgrid's index (`irgrid evaluate` of 20 run files / one), and benchmarks/chunk_evaluation.py
                (a chunk job's evaluation of 20 rankings / one, by document ids and through ir-measures).

The summary ends with issue 16's goals, a line each, irgrid against tantivy in the same run (q/s
including open + prepare, index size, build docs/s and peak RSS), the grid ratio, the build's peak
RSS against a smaller collection's run (--baseline JSON: flat from 1M to 10M) and the SDM line.
bm25s is skipped, with the reason, where its in-memory build would not fit (10M documents here).

The top-10 of every query (first repeat) is compared with irgrid BM25's: mean overlap.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from harness import (  # noqa: E402
    DEFAULT_SCRATCH,
    MIB,
    dir_bytes,
    ensure_collection,
    index_breakdown,
    machine,
    med,
    percentile,
    qps_with_open,
    run_child,
    spread,
)

ANALYZER = {"tokenizer": "lucene", "stemmer": "none", "stopwords": "none"}
BM25_POINT = {"k1": 1.2, "b": 0.75}
QL_POINT = {"mu": 1000.0}
GRID_POINTS = [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]
TOP_CHECK = 10

GOALS = {
    "docs_per_s": 20_000,          # index build, positions kept
    "build_rss_bytes": 2 * 2**30,  # peak RSS of the build
    "qps": 200,                    # top-1000 BM25
    "grid_ratio": 1.5,             # 20-point grid / single point (issue 16; was 3)
}
#: issue 16's goals against tantivy measured in the same run (irgrid / tantivy)
PEER_GOALS = {
    "qps_with_open": 1.5,          # BM25 q/s including open + prepare, fresh process: at least
    "index_bytes": 1.2,            # index size with positions: at most
    "docs_per_s": 1.3,             # build docs/s: at least
    "peak_rss_bytes": 1.0,         # build peak RSS of the process tree: at most
}
#: "flat 1M -> 10M": the larger collection's build peak RSS at most this times the smaller's (--baseline)
RSS_FLAT_RATIO = 1.25
#: bm25s's 1M build peaked at 5,485 MiB (results/scale-1m-fused.txt): it holds the corpus and its
#: token ids in memory, so its peak grows with the documents; skipped where that passes this share of RAM
BM25S_BYTES_PER_DOC = 5485 * 2**20 / 1_000_000
PEER_RAM_SHARE = 0.8

#: peers whose class has grid(index_dir, topics, points, depth): timed in (c) beside irgrid's grid
GRID_PEERS = ("pisa",)


# ============================================================ irgrid (the code to switch to a faster API)


def irgrid_build(docs_dir, out_dir, stemmer: str = "none") -> dict:
    from irgrid.index import build_index

    stats = build_index(docs_dir, out_dir, dict(ANALYZER, stemmer=stemmer), num_buckets=None, scheduler=None,
                        progress=False, num_workers=2)
    return {k: stats[k] for k in ("num_docs", "num_terms", "num_buckets") if k in stats}


class Irgrid:
    """irgrid's public query API: Scorer + prepare() once, then score + rank each query
    (per-query), or Scorer.run over the prepared query set (batch)."""

    def __init__(self, family: str, point: dict):
        # imported here, as each peer imports its package in its constructor: the timed open starts
        # after the imports for every system (the child prints them apart, "imports s")
        import irgrid.index
        import irgrid.models
        import irgrid.retrieve  # noqa: F401

        self.family, self.point = family, point
        self.name = f"irgrid-{family}"
        self.settings = (f"irgrid {family} {point}: Scorer(IndexReader).prepare(topics); per query Scorer.top(model, "
                         f"prepared, point, k, i, i + 1) where it exists (else rank(q, score(model, q, point), k)); "
                         f"batch Scorer.run_table (Arrow run) where it exists, else Scorer.run")

    def open(self, index_dir, topics, depth: int) -> None:
        from irgrid.index import IndexReader
        from irgrid.models import get_model
        from irgrid.retrieve import Scorer

        self.model = get_model(self.family)
        self.checked = self.model.check_point(self.point)
        self.scorer = Scorer(IndexReader(index_dir))
        self.prepared = self.scorer.prepare(topics)   # the whole query set (batch API input)
        self.queries = list(self.prepared)            # one PreparedQuery each (per-query API input)
        self.depth = depth
        if [q.qid for q in self.queries] != [str(qid) for qid in topics["qid"]]:
            raise RuntimeError("irgrid's prepared queries are not in topic order")

    def query(self, i: int):
        top = getattr(self.scorer, "top", None)
        if top is not None:  # the query-set engine, one query of the prepared set (fused kernel where the model has one)
            docids, scores, _ = top(self.model, self.prepared, self.checked, self.depth, i, i + 1)
            return docids, scores
        query = self.queries[i]
        return self.scorer.rank(query, self.scorer.score(self.model, query, self.checked), self.depth)

    def batch(self) -> None:
        run = getattr(self.scorer, "run_table", None) or self.scorer.run  # Arrow runs when there
        run(self.model, self.prepared, self.checked, self.depth)

    def top(self, result, n: int):
        docids, scores = result
        return [str(d) for d in self.scorer.docnos[docids[:n]]], [float(s) for s in scores[:n]]


def irgrid_kernels() -> str:
    """Which kernels served a process's open and first query: the ahead-of-time module (irgrid.aot) or the JIT's."""
    try:
        from irgrid.aot import loader
    except ImportError:  # a checkout before irgrid.aot
        return "JIT (no irgrid.aot)"
    if loader.functions():
        return f"ahead-of-time module of {loader.aot_directory()}"
    return "JIT (" + ("IRGRID_AOT=0" if not loader.aot_enabled() else
                      f"no fresh module in {loader.aot_directory()}") + ")"


def irgrid_grid(index_dir, topics, family: str, points: list[dict], depth: int) -> int:
    """retrieve_grid as ``irgrid retrieve`` calls it: Arrow runs when the package has them."""
    import inspect

    from irgrid.index import IndexReader
    from irgrid.retrieve import retrieve_grid

    arrow = {"as_arrow": True} if "as_arrow" in inspect.signature(retrieve_grid).parameters else {}
    runs = retrieve_grid(IndexReader(index_dir), topics, family, points, depth, **arrow)
    return sum(len(run) for run in runs)


def irgrid_grid_docids(index_dir, topics, family: str, points: list[dict], depth: int) -> int:
    """The same rankings as a chunk job makes them (``Scorer.grid_tops``): document ids and scores, no run
    tables (no docno column); what a grid in the workflow costs before its evaluation."""
    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer

    model = get_model(family)
    checked = [model.check_point(point) for point in points]
    rows = 0
    for _, (docids, _, _) in Scorer(IndexReader(index_dir)).grid_tops(model, topics, checked, depth):
        rows += len(docids)
    return rows


def irgrid_grid_label() -> str:
    import inspect

    from irgrid.retrieve import retrieve_grid

    arrow = "as_arrow" in inspect.signature(retrieve_grid).parameters
    return "retrieve_grid(IndexReader, topics, 'bm25', points" + (", as_arrow=True)" if arrow else ")")


# ============================================================ child process: one measurement


def make_system(name: str, peer_options: dict):
    if name == "irgrid-bm25":
        return Irgrid("bm25", BM25_POINT)
    if name == "irgrid-ql":
        return Irgrid("ql_dirichlet", QL_POINT)
    sys.path.insert(0, str(HERE))
    from peers import PEERS

    return PEERS[name](**peer_options.get(name, {}))


def read_topics(path, num_queries: int | None):
    import pyarrow.parquet as pq

    topics = pq.read_table(path).to_pandas()
    return topics if num_queries is None else topics.head(num_queries).reset_index(drop=True)


def child(task: dict) -> dict:
    import resource

    kind = task["kind"]
    out: dict = {}
    if kind == "build":
        system = task["system"]
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_before = time.process_time()
        if system.startswith("irgrid"):
            import irgrid.index  # noqa: F401  (imports outside the timed region, as for the peers)

            stemmer = "porter" if system == "irgrid-porter" else "none"
            start = time.perf_counter()
            out["info"] = irgrid_build(task["docs"], task["out"], stemmer)
        else:
            peer = make_system(system, task["peer_options"])
            start = time.perf_counter()
            out["info"] = peer.build(task["docs"], task["out"])
        out["seconds"] = time.perf_counter() - start
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        # the process's threads and its (reaped) worker processes: on a shared machine, the work done
        out["cpu_seconds"] = (time.process_time() - cpu_before + children.ru_utime - children_before.ru_utime
                              + children.ru_stime - children_before.ru_stime)
    elif kind == "query":
        topics = read_topics(task["topics"], task["num_queries"])
        start = time.perf_counter()
        system = make_system(task["system"], task["peer_options"])
        out["import_s"] = time.perf_counter() - start
        out["settings"] = system.settings
        start, start_cpu = time.perf_counter(), time.process_time()
        if isinstance(system, Irgrid):
            system.open(task["index"], topics, task["depth"])
        else:
            system.open(task["index"], topics, BM25_POINT["k1"], BM25_POINT["b"], task["depth"])
        out["open_s"] = time.perf_counter() - start
        out["open_cpu_s"] = time.process_time() - start_cpu  # on a loaded machine wall time is mostly waiting
        start = time.perf_counter()
        system.query(0)
        out["warmup_s"] = time.perf_counter() - start
        if isinstance(system, Irgrid):
            out["settings"] += f"; kernels: {irgrid_kernels()}"
        latencies, results = [], []
        clock = time.perf_counter
        for i in range(len(topics)):
            t0 = clock()
            result = system.query(i)
            latencies.append(clock() - t0)
            if task["save_top"]:
                results.append(result)
        out["latencies"] = latencies
        if getattr(system, "batch", None) is not None:
            start = time.perf_counter()
            system.batch()
            out["batch_s"] = time.perf_counter() - start
        if task["save_top"]:
            top = {}
            for qid, result in zip(topics["qid"], results):
                top[str(qid)] = system.top(result, TOP_CHECK)
            with open(task["save_top"], "w", encoding="utf-8") as handle:
                json.dump(top, handle)
    elif kind == "grid":
        topics = read_topics(task["topics"], task["num_queries"])
        engine = task.get("engine", "irgrid")
        if engine.startswith("irgrid"):
            import irgrid.retrieve  # noqa: F401
        else:
            peer = make_system(engine, task["peer_options"])  # imports its package, untimed

        start, start_cpu = time.perf_counter(), time.process_time()
        if engine == "irgrid":
            out["rows"] = irgrid_grid(task["index"], topics, "bm25", task["points"], task["depth"])
            out["call"] = irgrid_grid_label()
        elif engine == "irgrid-docids":
            out["rows"] = irgrid_grid_docids(task["index"], topics, "bm25", task["points"], task["depth"])
        else:
            out.update(peer.grid(task["index"], topics, task["points"], task["depth"]))
        out["seconds"] = time.perf_counter() - start
        out["cpu_seconds"] = time.process_time() - start_cpu
    else:
        raise ValueError(kind)
    out["self_maxrss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["loadavg_1min"] = os.getloadavg()[0]
    return out


# ============================================================ parent: run a child, watch its memory


# ============================================================ statistics and printing


def summarise(builds: dict, queries: dict, grids: dict, num_docs: int, sdm: dict | None = None) -> dict:
    summary: dict = {"build": {}, "query": {}, "grid": {}}
    if sdm:
        summary["sdm"] = summarise_sdm(sdm)
    for system, runs in builds.items():
        summary["build"][system] = {
            "seconds": [r["seconds"] for r in runs],
            "docs_per_s": [num_docs / r["seconds"] for r in runs],
            "peak_rss_bytes": [r["peak_rss_bytes"] for r in runs],
            "index_bytes": [r["index_bytes"] for r in runs],
            "cpu_seconds": [r["cpu_seconds"] for r in runs if "cpu_seconds" in r],
            "docs_per_cpu_s": [num_docs / r["cpu_seconds"] for r in runs if r.get("cpu_seconds")],
            "info": runs[-1].get("info"),
            "index_breakdown": runs[-1].get("index_breakdown"),
        }
    for system, runs in queries.items():
        per_run = []
        for r in runs:
            lat = r["latencies"]
            n = len(lat)
            per_run.append({
                "open_s": r["open_s"], "open_cpu_s": r.get("open_cpu_s"), "warmup_s": r["warmup_s"],
                "qps": n / sum(lat), "p50_ms": percentile(lat, 50) * 1e3, "p95_ms": percentile(lat, 95) * 1e3,
                "qps_with_open": qps_with_open(r),
                "import_s": r.get("import_s"),
                "batch_qps": (n / r["batch_s"]) if "batch_s" in r else None,
                "batch_qps_with_open": (n / (r["open_s"] + r["batch_s"])) if "batch_s" in r else None,
                "peak_rss_bytes": r["peak_rss_bytes"],
            })
        summary["query"][system] = {key: [p[key] for p in per_run if p[key] is not None] for key in per_run[0]}
        summary["query"][system]["settings"] = runs[0].get("settings")
        summary["query"][system]["num_queries"] = len(runs[0]["latencies"])
    for name, runs in grids.items():
        summary["grid"][name] = [r["seconds"] for r in runs]
        summary["grid"][f"{name}_cpu"] = [r["cpu_seconds"] for r in runs if "cpu_seconds" in r]
        summary["grid"]["call"] = runs[-1].get("call", "retrieve_grid(IndexReader, topics, 'bm25', points)")
    if "single_docids" in grids and "grid20_docids" in grids:
        summary["grid"]["docids_cpu_ratio_per_repeat"] = [g["cpu_seconds"] / s["cpu_seconds"] for s, g in
                                                          zip(grids["single_docids"], grids["grid20_docids"])]
    if "single" in grids and "grid20" in grids:
        summary["grid"]["ratio_per_repeat"] = [g["seconds"] / s["seconds"] for s, g in zip(grids["single"], grids["grid20"])]
        summary["grid"]["cpu_ratio_per_repeat"] = [g["cpu_seconds"] / s["cpu_seconds"] for s, g in
                                                   zip(grids["single"], grids["grid20"]) if "cpu_seconds" in s]
    return summary


def summarise_sdm(sdm: dict) -> dict:
    """BM25 and SDM (dependence.py's children) on the queries of 3-5 terms: q/s per query and including
    open + prepare, medians over the repeats."""
    out = {"num_queries": sdm["num_queries"]}
    for family in ("bm25", "sdm"):
        runs = sdm[family]
        out[family] = {
            "open_s": [r["open_s"] for r in runs],
            "qps": [len(r["latencies"]) / sum(r["latencies"]) for r in runs],
            "qps_with_open": [qps_with_open(r) for r in runs],
            "peak_rss_bytes": [r["peak_rss_bytes"] for r in runs],
        }
    return out


def summarise_peer_grids(peer_grids: dict) -> dict:
    """A peer's single point and 20-point grid (wall and CPU s) and, per point, what it redid
    (``prepare``: PISA's block-max data + compressed index) against the query set."""
    out = {}
    for engine, runs in peer_grids.items():
        entry: dict = {}
        for name in ("single", "grid20"):
            entry[name] = [r["seconds"] for r in runs.get(name, [])]
            entry[f"{name}_cpu"] = [r["cpu_seconds"] for r in runs.get(name, [])]
        points = [x for r in runs.get("grid20", []) for x in r.get("per_point", [])]
        for key in ("prepare_s", "prepare_cpu_s", "retrieve_s", "retrieve_cpu_s"):
            entry[f"point_{key}"] = [x[key] for x in points]
        if entry["single"] and entry["grid20"]:
            entry["ratio_per_repeat"] = [g / s for s, g in zip(entry["single"], entry["grid20"])]
            entry["cpu_ratio_per_repeat"] = [g / s for s, g in zip(entry["single_cpu"], entry["grid20_cpu"])]
        out[engine] = entry
    return out


def print_report(summary: dict, overlap: dict, meta: dict, peers: list[str]) -> None:
    p = lambda *a: print(*a, flush=True)  # noqa: E731
    p()
    p("=" * 100)
    p(f"SUMMARY  collection {meta['collection']}  docs {meta['num_docs']:,}  queries {meta['num_queries']}  "
      f"depth {meta['depth']}  repeats {meta['repeats']}  (median [min-max])")
    p(f"machine: {meta['machine']}")
    p("=" * 100)
    if summary["build"]:
        p()
        p("(a) index build (fresh child process each; peak RSS = sum over the process tree)")
        p(f"{'system':16s} {'seconds':>24s} {'docs/s':>26s} {'peak RSS MiB':>22s} {'index MiB':>10s}")
        for system, b in summary["build"].items():
            p(f"{system:16s} {spread(b['seconds'], '{:.1f}'):>24s} {spread(b['docs_per_s'], '{:,.0f}'):>26s} "
              f"{spread(b['peak_rss_bytes'], '{:,.0f}', 1 / MIB):>22s} {med(b['index_bytes']) / MIB:10,.1f}")
        for system, b in summary["build"].items():
            if b.get("cpu_seconds"):
                p(f"  {system}: CPU s of the build (process + its worker processes) {spread(b['cpu_seconds'], '{:.1f}')}, "
                  f"docs per CPU s {spread(b['docs_per_cpu_s'], '{:,.0f}')}")
        for system, b in summary["build"].items():
            if b.get("info"):
                p(f"  {system}: {b['info']}")
        p("  index size by component (MiB, share of the index; the directory's own entries):")
        for system, b in summary["build"].items():
            parts = b.get("index_breakdown") or {}
            total = sum(parts.values()) or 1
            p(f"  {system:16s} " + ", ".join(f"{name} {size / MIB:,.1f} ({size / total:.0%})" for name, size in parts.items()))
    if summary["query"]:
        p()
        p("(b) queries: whole query set, top-1000, 1 process, 1 thread (fresh child each)")
        p(f"{'system':16s} {'open/prepare s':>20s} {'warm-up s':>10s} {'QPS':>22s} {'p50 ms':>9s} {'p95 ms':>9s} "
          f"{'QPS incl. open':>16s} {'batch QPS':>10s} {'batch incl. open':>17s} {'peak RSS MiB':>13s}")
        for system, q in summary["query"].items():
            batch = f"{med(q['batch_qps']):,.1f}" if q["batch_qps"] else "-"
            batch_open = f"{med(q['batch_qps_with_open']):,.1f}" if q["batch_qps_with_open"] else "-"
            p(f"{system:16s} {spread(q['open_s'], '{:.2f}'):>20s} {med(q['warmup_s']):10.3f} "
              f"{spread(q['qps'], '{:,.1f}'):>22s} {med(q['p50_ms']):9.2f} {med(q['p95_ms']):9.2f} "
              f"{med(q['qps_with_open']):16,.1f} {batch:>10s} {batch_open:>17s} {med(q['peak_rss_bytes']) / MIB:13,.0f}")
        for system, q in summary["query"].items():
            if q.get("import_s"):
                p(f"  {system}: imports before the open (not in any QPS) {spread(q['import_s'], '{:.2f}')} s")
        for system, q in summary["query"].items():
            if q.get("open_cpu_s"):
                p(f"  {system}: open/prepare CPU s (user + system of the process) {spread(q['open_cpu_s'], '{:.2f}')}")
        for system, q in summary["query"].items():
            p(f"  {system}: {q['settings']}")
    if overlap:
        p()
        p(f"top-{TOP_CHECK} overlap with irgrid bm25 (first repeat; mean |A ∩ B| / {TOP_CHECK}, "
          f"share of queries with the same top-{TOP_CHECK} set, same top-1 document)")
        for system, o in overlap.items():
            p(f"  {system:14s} overlap {o['mean_overlap']:.3f}   same set {o['same_set']:.3f}   "
              f"same top-1 {o['same_top1']:.3f}   ({o['queries']} queries)")
    g = summary["grid"]
    if g.get("single"):
        p()
        p(f"(c) irgrid grid: {g.get('call', 'retrieve_grid')}, whole query set, fresh child each")
        p(f"  single point   {spread(g['single'], '{:.2f}')} s")
        p(f"  20-point grid  {spread(g['grid20'], '{:.2f}')} s   (k1 in 0.6..1.8 x b in 0.3..0.9)")
        p(f"  grid / single  {med(g['grid20']) / med(g['single']):.2f}  (ratio of medians; per repeat "
          f"{', '.join(f'{r:.2f}' for r in g['ratio_per_repeat'])})")
        if g.get("single_cpu"):
            p(f"  CPU s (process time: a loaded machine inflates wall time)  single {spread(g['single_cpu'], '{:.2f}')}"
              f"  grid {spread(g['grid20_cpu'], '{:.2f}')}  grid / single {med(g['grid20_cpu']) / med(g['single_cpu']):.2f}"
              f" (per repeat {', '.join(f'{r:.2f}' for r in g['cpu_ratio_per_repeat'])})")
    if g.get("single_docids_cpu"):
        p("    the chunk job's rankings (Scorer.grid_tops: docids and scores, no run table), CPU s  single "
          f"{spread(g['single_docids_cpu'], '{:.2f}')}  grid {spread(g['grid20_docids_cpu'], '{:.2f}')}  grid / single "
          f"{med(g['grid20_docids_cpu']) / med(g['single_docids_cpu']):.2f} (per repeat "
          f"{', '.join(f'{r:.2f}' for r in g['docids_cpu_ratio_per_repeat'])})")
    for engine, pg in (summary.get("peer_grid") or {}).items():
        if not (pg.get("single") and pg.get("grid20")):
            continue
        p(f"(c) {engine} grid: the same points from its built index, each point redoing what a new (k1, b) needs "
          f"(block-max data + compressed index), then the query set in one transform; fresh child each")
        p(f"  single point   {spread(pg['single'], '{:.2f}')} s   CPU {spread(pg['single_cpu'], '{:.2f}')} s")
        p(f"  20-point grid  {spread(pg['grid20'], '{:.2f}')} s   CPU {spread(pg['grid20_cpu'], '{:.2f}')} s")
        p(f"  grid / single  {med(pg['grid20']) / med(pg['single']):.2f} wall, "
          f"{med(pg['grid20_cpu']) / med(pg['single_cpu']):.2f} CPU s (ratio of medians; per repeat "
          f"{', '.join(f'{r:.2f}' for r in pg['ratio_per_repeat'])} wall)")
        p(f"  per grid point: prepare {spread(pg['point_prepare_s'], '{:.2f}')} s (CPU "
          f"{spread(pg['point_prepare_cpu_s'], '{:.2f}')}), query set {spread(pg['point_retrieve_s'], '{:.2f}')} s "
          f"(CPU {spread(pg['point_retrieve_cpu_s'], '{:.2f}')}); over all points of all repeats")

    sdm = summary.get("sdm")
    if sdm:
        p()
        p(f"(d) SDM beside BM25 (benchmarks/dependence.py's children: {sdm['num_queries']} queries of 3-5 terms, "
          "Indri's SDM defaults, top 1000, fresh process, 1 thread)")
        for family in ("bm25", "sdm"):
            f = sdm[family]
            p(f"  {family:5s} open + prepare {spread(f['open_s'], '{:.2f}')} s  per query {spread(f['qps'], '{:,.0f}')} q/s  "
              f"including prepare {spread(f['qps_with_open'], '{:,.0f}')} q/s  peak RSS "
              f"{spread(f['peak_rss_bytes'], '{:,.0f}', 1 / MIB)} MiB")
    # ---- ratios
    p()
    p("irgrid / peer (medians; > 1 means irgrid has more of it: better for docs/s and QPS, worse for RSS and size)")
    p(f"{'peer':10s} {'docs/s':>8s} {'build RSS':>10s} {'index size':>11s} {'QPS':>8s} {'QPS incl. open':>15s} "
      f"{'p50 lat.':>9s} {'p95 lat.':>9s}")
    b, q = summary["build"], summary["query"]
    for peer in peers:
        def ratio(section, system_a, system_b, key):
            try:
                return med(section[system_a][key]) / med(section[system_b][key])
            except (KeyError, ZeroDivisionError):
                return float("nan")
        p(f"{peer:10s} {ratio(b, 'irgrid', peer, 'docs_per_s'):8.2f} {ratio(b, 'irgrid', peer, 'peak_rss_bytes'):10.2f} "
          f"{ratio(b, 'irgrid', peer, 'index_bytes'):11.2f} {ratio(q, 'irgrid-bm25', peer, 'qps'):8.2f} "
          f"{ratio(q, 'irgrid-bm25', peer, 'qps_with_open'):15.2f} {ratio(q, 'irgrid-bm25', peer, 'p50_ms'):9.2f} "
          f"{ratio(q, 'irgrid-bm25', peer, 'p95_ms'):9.2f}")

    # ---- goals
    p()
    p("goals from the issue, against irgrid's medians")

    def goal(label, value, target, ok, unit=""):
        state = "n/a" if value != value else ("met" if ok else "NOT met")
        p(f"  {label:54s} {f'{value:,.2f}{unit}':>14s}   goal {target:>12s}   {state}")

    nan = float("nan")
    irb = b.get("irgrid")
    goal("index build docs/s (positions, lucene)", med(irb["docs_per_s"]) if irb else nan, ">= 20,000",
         irb is not None and med(irb["docs_per_s"]) >= GOALS["docs_per_s"])
    goal("index build peak RSS (process tree)", med(irb["peak_rss_bytes"]) / MIB if irb else nan, "< 2,048 MiB",
         irb is not None and med(irb["peak_rss_bytes"]) < GOALS["build_rss_bytes"], " MiB")
    irq = q.get("irgrid-bm25")
    goal("queries/s, BM25 top-1000 (per query, after prepare)", med(irq["qps"]) if irq else nan, ">= 200",
         irq is not None and med(irq["qps"]) >= GOALS["qps"])
    goal("queries/s, BM25 top-1000 including prepare", med(irq["qps_with_open"]) if irq else nan, ">= 200",
         irq is not None and med(irq["qps_with_open"]) >= GOALS["qps"])
    if irq and irq.get("batch_qps"):
        goal("queries/s, BM25 top-1000, batch (run_table / run)", med(irq["batch_qps"]), ">= 200",
             med(irq["batch_qps"]) >= GOALS["qps"])
        goal("queries/s, BM25 top-1000, batch including prepare", med(irq["batch_qps_with_open"]), ">= 200",
             med(irq["batch_qps_with_open"]) >= GOALS["qps"])
    if g.get("single"):
        r = med(g["grid20"]) / med(g["single"])
        goal("20-point grid / single point", r, "<= 1.5", r <= GOALS["grid_ratio"], "x")
        if g.get("single_cpu"):
            r = med(g["grid20_cpu"]) / med(g["single_cpu"])
            goal("20-point grid / single point, CPU seconds", r, "<= 1.5", r <= GOALS["grid_ratio"], "x")
    print_issue16_goals(summary, meta, goal)


def print_issue16_goals(summary: dict, meta: dict, goal) -> None:
    """Issue 16's table: irgrid against tantivy in the same run, the build's memory against a smaller run's."""
    p = lambda *a: print(*a, flush=True)  # noqa: E731
    b, q, g = summary["build"], summary["query"], summary["grid"]
    nan = float("nan")
    p()
    p(f"issue 16 goals ({meta['num_docs']:,} docs; irgrid / tantivy = ratio of the medians of this run)")
    skipped = meta.get("skipped_peers", {})

    def versus(section, ours, key):
        try:
            return med(section[ours][key]) / med(section["tantivy"][key])
        except (KeyError, ZeroDivisionError):
            return nan

    why = f" ({skipped['tantivy']})" if "tantivy" in skipped else ""
    r = versus(q, "irgrid-bm25", "qps_with_open")
    goal("BM25 q/s incl. open + prepare, irgrid / tantivy" + why, r, ">= 1.5x", r >= PEER_GOALS["qps_with_open"], "x")
    if g.get("single"):
        r = med(g["grid20"]) / med(g["single"])
        goal("20-point grid / one point (wall)", r, "<= 1.5x", r <= GOALS["grid_ratio"], "x")
        if g.get("single_cpu"):
            r = med(g["grid20_cpu"]) / med(g["single_cpu"])
            goal("20-point grid / one point (CPU s)", r, "<= 1.5x", r <= GOALS["grid_ratio"], "x")
        if g.get("single_docids_cpu"):
            r = med(g["grid20_docids_cpu"]) / med(g["single_docids_cpu"])
            goal("20-point grid / one point (CPU s; chunk job's, docids)", r, "<= 1.5x", r <= GOALS["grid_ratio"], "x")
    for engine, pg in (summary.get("peer_grid") or {}).items():
        if g.get("single") and pg.get("single") and pg.get("grid20"):
            ours, theirs = med(g["grid20"]) / med(g["single"]), med(pg["grid20"]) / med(pg["single"])
            p(f"  {'20-point grid / one point, ' + engine + ' beside irgrid (wall)':54s} {theirs:>13,.2f}x   irgrid "
              f"{ours:.2f}x ({med(g['grid20']):.2f} / {med(g['single']):.2f} s), {engine} "
              f"{med(pg['grid20']):.2f} / {med(pg['single']):.2f} s; {engine} grid / irgrid grid "
              f"{med(pg['grid20']) / med(g['grid20']):.2f}x")
            if g.get("single_cpu") and pg.get("single_cpu"):
                ours = med(g["grid20_cpu"]) / med(g["single_cpu"])
                theirs = med(pg["grid20_cpu"]) / med(pg["single_cpu"])
                p(f"  {'20-point grid / one point, ' + engine + ' beside irgrid (CPU s)':54s} {theirs:>13,.2f}x   "
                  f"irgrid {ours:.2f}x ({med(g['grid20_cpu']):.2f} / {med(g['single_cpu']):.2f} s), {engine} "
                  f"{med(pg['grid20_cpu']):.2f} / {med(pg['single_cpu']):.2f} s; {engine} grid / irgrid grid "
                  f"{med(pg['grid20_cpu']) / med(g['grid20_cpu']):.2f}x")
    r = versus(b, "irgrid", "index_bytes")
    goal("index size with positions, irgrid / tantivy", r, "<= 1.2x", r <= PEER_GOALS["index_bytes"], "x")
    # tantivy keeps no forward index (irgrid's is its own output, built only for the violation-counting
    # experiments): the like-for-like size is irgrid's without a forward/ directory (none since then)
    try:
        forward = (b["irgrid"].get("index_breakdown") or {}).get("forward/", 0)
        r = (med(b["irgrid"]["index_bytes"]) - forward) / med(b["tantivy"]["index_bytes"])
    except (KeyError, ZeroDivisionError):
        r = nan
    goal("index size with positions, no forward index, / tantivy", r, "<= 1.2x", r <= PEER_GOALS["index_bytes"], "x")
    r = versus(b, "irgrid", "docs_per_s")
    goal("build docs/s, irgrid / tantivy (wall)", r, ">= 1.3x", r >= PEER_GOALS["docs_per_s"], "x")
    r = versus(b, "irgrid", "docs_per_cpu_s")
    goal("build docs per CPU s, irgrid / tantivy", r, ">= 1.3x", r >= PEER_GOALS["docs_per_s"], "x")
    r = versus(b, "irgrid", "peak_rss_bytes")
    goal("build peak RSS, irgrid / tantivy", r, "<= 1x", r <= PEER_GOALS["peak_rss_bytes"], "x")
    baseline = meta.get("baseline")
    if baseline and b.get("irgrid"):
        r = med(b["irgrid"]["peak_rss_bytes"]) / baseline["irgrid_build_peak_rss_bytes"]
        goal(f"build peak RSS, {meta['num_docs']:,} / {baseline['num_docs']:,} docs (flat)", r,
             f"<= {RSS_FLAT_RATIO}x", r <= RSS_FLAT_RATIO, "x")
    else:
        goal("build peak RSS flat across sizes (needs --baseline a smaller run's JSON)", nan, f"<= {RSS_FLAT_RATIO}x",
             False)
    evaluation = summary.get("evaluation")
    if evaluation:
        # the goal is the workflow's chunk job, which evaluates rankings of document ids; `irgrid evaluate`
        # reads TREC run files, docno strings and all, and is shown beside it, not held to the goal
        for way, r in evaluation.get("chunk", {}).items():
            goal(f"evaluation in a chunk job, 20 rankings / one (CPU s; {way})", r, "<= 2x", r <= 2, "x")
        p(f"  {'irgrid evaluate of run files (docnos), ' + str(evaluation['runs']) + ' / one, wall; CPU s':54s} "
          f"{med(evaluation['ratios']):>13,.2f}x; {med(evaluation['cpu_ratios']):.2f}x   (not the workflow's path)")
    else:
        goal("evaluation, 20-run chunk / one run (--evaluation, or evaluation.py on its own)", nan, "<= 2x", False)
    sdm = summary.get("sdm")
    if sdm:
        ratio = med(sdm["sdm"]["qps_with_open"]) / med(sdm["bm25"]["qps_with_open"])
        p(f"  {'SDM q/s incl. prepare, beside BM25 (3-5 term queries)':54s} "
          f"{med(sdm['sdm']['qps_with_open']):>10,.1f} q/s vs BM25 {med(sdm['bm25']['qps_with_open']):,.1f}: "
          f"{ratio:.2f}x   (dependence.py's goal SDM >= 100 q/s: "
          f"{'met' if med(sdm['sdm']['qps_with_open']) >= 100 else 'NOT met'})")
    for name, reason in skipped.items():
        p(f"  {name} not run: {reason}")


def top_overlap(reference: dict, other: dict) -> dict:
    overlaps, same, top1 = [], [], []
    for qid, (ref_docs, _) in reference.items():
        docs = other.get(qid, ([], []))[0]
        if not ref_docs and not docs:
            continue
        overlaps.append(len(set(ref_docs) & set(docs)) / TOP_CHECK)
        same.append(set(ref_docs) == set(docs))
        top1.append(bool(ref_docs) and bool(docs) and ref_docs[0] == docs[0])
    return {"mean_overlap": sum(overlaps) / len(overlaps) if overlaps else float("nan"),
            "same_set": sum(same) / len(same) if same else float("nan"),
            "same_top1": sum(top1) / len(top1) if top1 else float("nan"),
            "queries": len(overlaps)}


# ============================================================ main


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        with open(sys.argv[2], encoding="utf-8") as handle:
            task = json.load(handle)
        result = child(task)
        with open(sys.argv[3], "w", encoding="utf-8") as handle:
            json.dump(result, handle)
        return

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1_000_000, help="documents in the synthetic collection")
    parser.add_argument("--collection", type=Path,
                        help="synthetic collection directory (generated if missing); default benchmarks/.data/syn-N")
    parser.add_argument("--work", type=Path,
                        help="where the indexes are built; default benchmarks/.data/indexes/<collection name>")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peers", default="bm25s,tantivy", help="comma-separated: bm25s, tantivy, pisa (or empty)")
    parser.add_argument("--skip-build", action="store_true",
                        help="reuse the indexes in --work (building a missing one once, untimed), time queries only")
    parser.add_argument("--no-porter", action="store_true", help="skip the extra irgrid build with the Porter stemmer")
    parser.add_argument("--no-grid", action="store_true", help="skip (c)")
    parser.add_argument("--queries", type=int, default=None, help="use the first N queries only")
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--tantivy-heap", type=int, default=512_000_000, help="tantivy writer heap, bytes (total)")
    parser.add_argument("--pisa-threads", type=int, default=1,
                        help="PisaIndex(threads=N) for the pisa build (PISA's pool is N + 1 threads)")
    parser.add_argument("--evaluation", action="store_true",
                        help="(e): run benchmarks/evaluation.py on this collection (its synthetic qrels) and irgrid's index")
    parser.add_argument("--no-sdm", action="store_true", help="skip (d), SDM beside BM25 (dependence.py's children)")
    parser.add_argument("--baseline", type=Path,
                        help="the --json of a run on a smaller collection: the build's peak RSS is compared with it (flat)")
    parser.add_argument("--generate-workers", type=int, default=2, help="processes generating a missing collection")
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--report", type=Path, help="print the summary of a --json file of an earlier run, and stop")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        print_report(saved["summary"], saved["overlap"], saved["meta"], saved["meta"]["peers"])
        return

    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that run_child ends its child tree
    peers = [name for name in args.peers.split(",") if name]
    for name in peers:
        if name not in ("bm25s", "tantivy", "pisa"):
            parser.error(f"unknown peer {name!r}")
    collection = args.collection or DEFAULT_SCRATCH / f"syn-{args.docs}"
    import psutil

    skipped_peers = {}
    if "bm25s" in peers:
        need, have = BM25S_BYTES_PER_DOC * args.docs, psutil.virtual_memory().total
        if need > PEER_RAM_SHARE * have:
            skipped_peers["bm25s"] = (f"its build holds the corpus in memory (5,485 MiB at 1M docs, results/scale-1m-fused.txt): "
                                      f"~{need / 2**30:,.0f} GiB for {args.docs:,} docs, more than {PEER_RAM_SHARE:.0%} of "
                                      f"this machine's {have / 2**30:,.1f} GiB")
            peers.remove("bm25s")
            print(f"bm25s skipped: {skipped_peers['bm25s']}", flush=True)
    collection = ensure_collection(collection.resolve(), args.docs, args.generate_workers)
    work = (args.work or DEFAULT_SCRATCH / "indexes" / collection.name).resolve()
    work.mkdir(parents=True, exist_ok=True)
    log_dir = work / "logs"
    log_dir.mkdir(exist_ok=True)
    docs_dir, topics_path = collection / "docs", collection / "topics.parquet"
    peer_options = {"tantivy": {"heap_size": args.tantivy_heap, "num_threads": 2},
                    "pisa": {"threads": args.pisa_threads}}
    index_dirs = {"irgrid": work / "irgrid", "irgrid-porter": work / "irgrid-porter",
                  "bm25s": work / "bm25s", "tantivy": work / "tantivy", "pisa": work / "pisa"}
    import pyarrow.parquet as pq

    num_queries = pq.read_metadata(topics_path).num_rows if args.queries is None else args.queries
    meta = {"collection": str(collection), "num_docs": args.docs, "num_queries": num_queries, "depth": args.depth,
            "repeats": args.repeats, "machine": machine(), "peers": peers, "skipped_peers": skipped_peers}
    if args.baseline:
        saved = json.loads(args.baseline.read_text())
        meta["baseline"] = {"file": str(args.baseline), "num_docs": saved["meta"]["num_docs"],
                            "irgrid_build_peak_rss_bytes": med(saved["summary"]["build"]["irgrid"]["peak_rss_bytes"])}
    print("command: python benchmarks/scale.py " + " ".join(sys.argv[1:]), flush=True)
    print(f"collection {collection} ({args.docs:,} docs, {num_queries} queries), indexes in {work}, "
          f"logs in {log_dir}", flush=True)
    print(f"machine: {meta['machine']}", flush=True)

    builds: dict[str, list] = {}
    queries: dict[str, list] = {}
    grids: dict[str, list] = {}
    build_systems = ["irgrid"] + ([] if args.no_porter else ["irgrid-porter"]) + peers
    started = time.perf_counter()

    # (a) builds
    if not args.skip_build:
        for r in range(args.repeats):
            for system in build_systems:
                if system == "irgrid-porter" and r > 0:
                    continue  # the extra line: built once
                out = index_dirs[system]
                if out.exists():
                    shutil.rmtree(out)
                task = {"kind": "build", "system": system, "docs": str(docs_dir), "out": str(out),
                        "peer_options": peer_options}
                result = run_child(task, log_dir, single_thread=False)
                result["index_bytes"] = dir_bytes(out)
                result["index_breakdown"] = index_breakdown(out)
                builds.setdefault(system, []).append(result)
                print(f"[build {r + 1}/{args.repeats}] {system:14s} {result['seconds']:8.1f} s  "
                      f"CPU {result['cpu_seconds']:8.1f} s  "
                      f"{args.docs / result['seconds']:10,.0f} docs/s  peak RSS {result['peak_rss_bytes'] / MIB:8,.0f} MiB  "
                      f"index {result['index_bytes'] / MIB:8,.1f} MiB  (load {result['loadavg_1min']:.1f})", flush=True)
    else:
        for system in ["irgrid"] + peers:
            if not index_dirs[system].exists():  # built once, not part of the summary
                task = {"kind": "build", "system": system, "docs": str(docs_dir), "out": str(index_dirs[system]),
                        "peer_options": peer_options}
                result = run_child(task, log_dir, single_thread=False)
                print(f"[--skip-build: no {system} index, built it: {result['seconds']:.1f} s, not in the summary]",
                      flush=True)

    # (b) queries
    query_systems = ["irgrid-bm25", "irgrid-ql"] + peers
    tops: dict[str, dict] = {}
    for r in range(args.repeats):
        for system in query_systems:
            index = index_dirs["irgrid" if system.startswith("irgrid") else system]
            top_path = work / f"top-{system}.json" if r == 0 else None
            task = {"kind": "query", "system": system, "index": str(index), "topics": str(topics_path),
                    "num_queries": args.queries, "depth": args.depth, "save_top": str(top_path) if top_path else None,
                    "peer_options": peer_options}
            result = run_child(task, log_dir, single_thread=True)
            if top_path:
                tops[system] = json.loads(top_path.read_text())
            queries.setdefault(system, []).append(result)
            lat = result["latencies"]
            batch = f"  batch {len(lat) / result['batch_s']:8,.1f} q/s" if "batch_s" in result else ""
            print(f"[query {r + 1}/{args.repeats}] {system:14s} open {result['open_s']:7.2f} s  warm-up "
                  f"{result['warmup_s']:6.3f} s  {len(lat) / sum(lat):9,.1f} q/s  p50 {percentile(lat, 50) * 1e3:7.2f} ms  "
                  f"p95 {percentile(lat, 95) * 1e3:7.2f} ms{batch}  peak RSS {result['peak_rss_bytes'] / MIB:7,.0f} MiB  "
                  f"(load {result['loadavg_1min']:.1f})",
                  flush=True)

    # (c) grid: irgrid, then each peer that has a grid method, interleaved by repeat
    peer_grids: dict[str, dict[str, list]] = {}
    grid_engines = ["irgrid", "irgrid-docids"] + [name for name in peers if name in GRID_PEERS]
    if not args.no_grid:
        for r in range(args.repeats):
            for engine in grid_engines:
                for name, points in (("single", [BM25_POINT]), ("grid20", GRID_POINTS)):
                    index = index_dirs["irgrid" if engine.startswith("irgrid") else engine]
                    task = {"kind": "grid", "system": name if engine == "irgrid" else f"{engine}-{name}",
                            "engine": engine, "index": str(index), "topics": str(topics_path),
                            "num_queries": args.queries, "depth": args.depth, "points": points,
                            "peer_options": peer_options}
                    result = run_child(task, log_dir, single_thread=True)
                    if engine == "irgrid-docids":
                        grids.setdefault(f"{name}_docids", []).append(result)
                    else:
                        (grids if engine == "irgrid" else peer_grids.setdefault(engine, {})).setdefault(name, []).append(result)
                    prepare = ""
                    if result.get("per_point"):
                        prepare = (f"  (per point: prepare {med([x['prepare_s'] for x in result['per_point']]):.2f} s, "
                                   f"queries {med([x['retrieve_s'] for x in result['per_point']]):.2f} s)")
                    print(f"[grid {r + 1}/{args.repeats}] {engine:7s} {name:8s} {len(points):3d} points  "
                          f"{result['seconds']:8.2f} s  CPU {result['cpu_seconds']:8.2f} s  "
                          f"peak RSS {result['peak_rss_bytes'] / MIB:7,.0f} MiB  (load {result['loadavg_1min']:.1f}){prepare}",
                          flush=True)

    # (d) SDM beside BM25: dependence.py's children on its queries of 3-5 terms
    sdm: dict = {}
    if not args.no_sdm:
        import dependence

        selected = work / "topics-3-5-terms.parquet"
        sdm["num_queries"] = dependence.select_queries(topics_path, index_dirs["irgrid"], 3, 5, selected)
        for r in range(args.repeats):
            for family in ("bm25", "sdm"):
                result = dependence.run({"kind": family, "index": str(index_dirs["irgrid"]), "topics": str(selected),
                                         "depth": args.depth}, log_dir)
                sdm.setdefault(family, []).append(result)
                lat = result["latencies"]
                print(f"[sdm {r + 1}/{args.repeats}] {family:5s} open+prepare {result['open_s']:7.2f} s  "
                      f"{len(lat) / sum(lat):9,.1f} q/s  incl. prepare {len(lat) / (result['open_s'] + sum(lat)):9,.1f} q/s  "
                      f"peak RSS {result['peak_rss_bytes'] / MIB:7,.0f} MiB  (load {result['loadavg_1min']:.1f})", flush=True)

    # (e) a 20-run evaluation chunk against one run: evaluation.py, in its own processes, on this collection
    evaluation = None
    if args.evaluation:
        evaluation_json = work / "evaluation.json"
        command = [sys.executable, str(HERE / "evaluation.py"), "--synthetic", str(collection), "--index",
                   str(index_dirs["irgrid"]), "--repeats", str(args.repeats), "--json", str(evaluation_json)]
        env = dict(os.environ)
        env.setdefault("PYTHONPATH", str(REPO / "src"))
        print("(e) " + " ".join(command[1:]), flush=True)
        subprocess.run(command, check=True, env=env, cwd=str(REPO))
        saved = json.loads(evaluation_json.read_text())
        evaluation = {key: saved[key] for key in ("ratios", "cpu_ratios")}
        evaluation["runs"] = saved["many"][0]["runs"]
        # the chunk job's own path: rankings evaluated in memory, by document ids and through ir-measures
        chunk_json = work / "chunk-evaluation.json"
        command = [sys.executable, str(HERE / "chunk_evaluation.py"), "--synthetic", str(collection), "--index",
                   str(index_dirs["irgrid"]), "--work", str(work / "chunk-evaluation"), "--repeats",
                   str(args.repeats), "--json", str(chunk_json)]
        print("(e) " + " ".join(command[1:]), flush=True)
        subprocess.run(command, check=True, env=env, cwd=str(REPO))
        evaluation["chunk"] = {way: found["ratio"] for way, found in json.loads(chunk_json.read_text())["summary"].items()}

    overlap = {system: top_overlap(tops["irgrid-bm25"], tops[system]) for system in peers if system in tops}
    summary = summarise(builds, queries, grids, args.docs, sdm)
    if peer_grids:
        summary["peer_grid"] = summarise_peer_grids(peer_grids)
    if evaluation:
        summary["evaluation"] = evaluation
    meta["total_minutes"] = (time.perf_counter() - started) / 60
    print_report(summary, overlap, meta, peers)
    print(f"\ntotal benchmark time {meta['total_minutes']:.1f} min", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"meta": meta, "summary": summary, "overlap": overlap,
                       "raw": {"build": builds, "query": {k: [{kk: vv for kk, vv in r.items() if kk != "latencies"}
                                                               for r in v] for k, v in queries.items()},
                               "grid": grids, "peer_grid": peer_grids,
                               "sdm": {k: ([{kk: vv for kk, vv in r.items() if kk != "latencies"} for r in v]
                                           if isinstance(v, list) else v) for k, v in sdm.items()}}},
                      handle, indent=1, default=str)


if __name__ == "__main__":
    main()
