"""What a parameter grid costs: one postings gathering for P points vs P separate runs.

    python benchmarks/grid_scoring.py [--family ql_dirichlet] [--points 20] [--repeats 5]
                                      [--index DIR --topics FILE] [--synthetic] [--no-peer]

On CACM (when the collections mirror is there; else a synthetic Zipf collection) the index is
built through the package API (irgrid.collections -> build_index) into a temporary directory,
in a child process, so that this process's peak RSS is the retrieval's. Then, each timed as the
median of ``--repeats`` runs (time.perf_counter):

  (a) grid      retrieve_grid(index, topics, family, <P points>)        one postings gathering
  (b) separate  P x retrieve_grid(index, topics, family, <1 point>)     P gatherings
  (c) single    retrieve_grid(index, topics, family, <1 point>)

plus the two pieces of (c): Scorer construction + prepare() (analysis, postings read) and the
scoring of one point. Optional peer: bm25s (method="lucene") on the same analysed tokens,
index + retrieve of the whole query set for one BM25 point, beside irgrid's bm25 single point
(bm25s precomputes scores at index time, so each grid point of its own costs a re-index).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def configured_analyzer(name: str = "lucene"):
    import yaml

    from irgrid.analysis import Analyzer

    with open(REPO / "config" / "config.yaml", encoding="utf-8") as handle:
        return Analyzer.from_dict(yaml.safe_load(handle)["analyzers"][name])


def peak_rss_mib(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: KiB


# ------------------------------------------------------------------ building (child process)


def build_cacm(root: Path) -> bool:
    from irgrid.collections import CollectionNotAvailable, load_registry, resolve_files, write_document_shards, write_topics
    from irgrid.index import build_index

    spec = load_registry(REPO / "config" / "collections.yaml")["cacm"]
    try:
        files = resolve_files(spec, download=False)
    except CollectionNotAvailable:
        return False
    write_document_shards(spec, files, root / "docs", num_shards=2)
    write_topics(spec, files, "text", root / "topics.parquet")
    build_index(root / "docs", root / "index", configured_analyzer(), num_buckets=16, scheduler="sync", progress=False)
    return True


def build_synthetic(root: Path, num_docs: int = 5000, num_queries: int = 50, vocabulary: int = 20000) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from irgrid.analysis import Analyzer
    from irgrid.index import build_index

    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(vocabulary)])
    weights = 1.0 / np.arange(1, vocabulary + 1)
    weights /= weights.sum()
    lengths = rng.integers(20, 300, num_docs)
    texts = [" ".join(rng.choice(words, n, p=weights)) for n in lengths]
    (root / "docs").mkdir(parents=True)
    pq.write_table(pa.table({"docno": [f"D{i:06d}" for i in range(num_docs)], "text": texts}),
                   root / "docs" / "part-0000.parquet")
    queries = [" ".join(rng.choice(words[50:3000], rng.integers(2, 12))) for _ in range(num_queries)]
    pq.write_table(pa.table({"qid": [str(i + 1) for i in range(num_queries)], "text": queries}), root / "topics.parquet")
    analyzer = Analyzer(tokenizer="alnum", stemmer="none", stopwords="none")
    build_index(root / "docs", root / "index", analyzer, num_buckets=16, scheduler="sync", progress=False)


def child_build(root: str, synthetic: bool) -> None:
    root = Path(root)
    if synthetic or not build_cacm(root):
        build_synthetic(root)
        print("synthetic")
    else:
        print("cacm")


# ------------------------------------------------------------------ timing


def median_time(function, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def bm25s_peer(index, topics: pd.DataFrame, repeats: int, depth: int = 1000):
    try:
        import bm25s
    except ImportError:
        return None
    import pyarrow.dataset as ds

    from irgrid.index.forward import build_forward_index

    with tempfile.TemporaryDirectory() as tmp:  # the index holds no forward index: one made for the peer
        build_forward_index(index.path, Path(tmp) / "forward", workers=2)
        forward = ds.dataset(sorted((Path(tmp) / "forward").glob("part-*.parquet")), format="parquet").to_table()
    forward = forward.to_pandas().sort_values("docid")
    corpus = [list(terms) for terms in forward["terms"]]
    queries = [index.analyzer(text) for text in topics["text"]]

    def run():
        retriever = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
        retriever.index(corpus, show_progress=False)
        vocabulary = retriever.vocab_dict
        kept = [[t for t in q if t in vocabulary] for q in queries]
        kept = [q for q in kept if q]
        return retriever.retrieve(kept, k=min(depth, len(corpus)), show_progress=False, n_threads=1)

    return median_time(run, repeats)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", default="ql_dirichlet")
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--index", help="an existing index directory (with --topics); skips the build")
    parser.add_argument("--topics", help="topics Parquet (qid, text) for --index")
    parser.add_argument("--synthetic", action="store_true", help="synthetic collection even if CACM is there")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--_build", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._build:
        child_build(args._build, args.synthetic)
        return

    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer, retrieve_grid
    from irgrid.runs import read_topics

    with tempfile.TemporaryDirectory(prefix="irgrid-bench-") as tmp:
        if args.index:
            root, collection = None, Path(args.index).name
            index_dir, topics_path = Path(args.index), Path(args.topics)
        else:
            root = Path(tmp)
            start = time.perf_counter()
            cmd = [sys.executable, __file__, "--_build", str(root)] + (["--synthetic"] if args.synthetic else [])
            collection = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            build_seconds = time.perf_counter() - start
            index_dir, topics_path = root / "index", root / "topics.parquet"
        rss_before = peak_rss_mib()
        index = IndexReader(index_dir)
        topics = read_topics(topics_path)

        model = get_model(args.family)
        if [p.name for p in model.parameters] == ["mu"]:
            values = np.geomspace(50, 10000, args.points)
            points = [{"mu": float(round(v, 6))} for v in values]
        else:
            name = model.parameters[0].name
            low, high = model.parameters[0].low, model.parameters[0].high
            points = [{name: float(v)} for v in np.linspace(low, high, args.points + 2)[1:-1]]
        depth = args.depth

        t_grid, grid_runs = median_time(lambda: retrieve_grid(index, topics, args.family, points, depth), args.repeats)
        t_sep, sep_runs = median_time(
            lambda: [retrieve_grid(index, topics, args.family, [p], depth)[0] for p in points], args.repeats
        )
        t_single, _ = median_time(lambda: retrieve_grid(index, topics, args.family, points[:1], depth), args.repeats)
        for together, alone in zip(grid_runs, sep_runs):
            pd.testing.assert_frame_equal(together, alone)  # same runs either way

        # pieces of the single point
        def prepare():
            scorer = Scorer(index)
            return scorer, scorer.prepare(topics)

        t_prepare, (scorer, prepared) = median_time(prepare, args.repeats)
        checked = model.check_point(points[0])
        t_point, _ = median_time(lambda: scorer.run(model, prepared, checked, depth), args.repeats)

        rss_after = peak_rss_mib()
        num_postings = sum(len(t.docids) for q in prepared for t in q.terms)
        print(f"collection: {collection}  docs {index.num_docs}  queries {len(topics)}  "
              f"postings gathered per prepare {num_postings}  family {args.family}  "
              f"points {len(points)} ({points[0]} .. {points[-1]})  depth {depth}  repeats {args.repeats} (median)")
        if root is not None:
            print(f"index build (child process, scheduler=sync): {build_seconds:.1f} s, "
                  f"child peak RSS {peak_rss_mib(resource.RUSAGE_CHILDREN):.0f} MiB")
        rows = [
            ("(a) grid: 1 retrieve_grid, P points", len(points), t_grid),
            ("(b) separate: P retrieve_grid of 1 point", len(points), t_sep),
            ("(c) single: 1 retrieve_grid, 1 point", 1, t_single),
            ("    of which Scorer + prepare()", 0, t_prepare),
            ("    of which scoring+ranking 1 point", 1, t_point),
        ]
        peer = None if args.no_peer else bm25s_peer(index, topics, args.repeats, depth)
        if peer is not None:
            t_bm25, _ = median_time(lambda: retrieve_grid(index, topics, "bm25", [{"k1": 0.9, "b": 0.4}], depth),
                                    args.repeats)
            rows += [
                ("peer bm25s: index + retrieve, 1 BM25 point", 1, peer),
                ("irgrid bm25: 1 retrieve_grid, 1 point", 1, t_bm25),
            ]
        print()
        print(f"{'case':46s} {'points':>6s} {'median s':>10s} {'s/point':>10s}")
        for label, count, seconds in rows:
            per_point = f"{seconds / count:10.4f}" if count else f"{'':>10s}"
            print(f"{label:46s} {count:6d} {seconds:10.4f} {per_point}")
        print()
        print(f"grid / single     = {t_grid / t_single:6.2f}   ({len(points)} points for the price of "
              f"{t_grid / t_single:.1f} single points)")
        print(f"separate / grid   = {t_sep / t_grid:6.2f}")
        print(f"peak RSS (this process, ru_maxrss): {rss_after:.0f} MiB  "
              f"(before opening the index: {rss_before:.0f} MiB, interpreter + imports)")


if __name__ == "__main__":
    main()
