"""CPU seconds of the parts of a query-set run, in one process, warm: what a grid point costs.

    python benchmarks/point_cpu.py --index benchmarks/.data/indexes/syn-1000000/irgrid \\
        --topics benchmarks/.data/syn-1000000/topics.parquet
    PYTHONPATH=/path/to/main/src python benchmarks/point_cpu.py ...    # the code before a change

CPU time (time.process_time), not wall time: on a shared, loaded machine the wall time of a step is
mostly waiting for a core. Prints the CPU of IndexReader + Scorer, of the query analysis, of the
postings read and of the whole prepare (run a second time, warm: numba's cached kernels loaded by
then), then, per model (BM25 k1=0.9 b=0.4, QL mu=1000), the least over ``--repeats`` of one point's
``Scorer.top`` and of the Arrow run made from it (``Scorer.run_table`` less ``top``), and a point's
share of the 20-point BM25 grid (k1 x b = 5 x 4) made as ``retrieve_grid(..., as_arrow=True)`` makes
it (``Scorer.run_tables``: blocks of points a pass; code without it, ``run_table`` point by point).
"""

from __future__ import annotations

import argparse
import time

import pyarrow.parquet as pq


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    import irgrid.retrieve as retrieve
    from irgrid.index import IndexReader
    from irgrid.models import get_model

    clock = time.process_time
    topics = pq.read_table(args.topics).to_pandas()
    t0 = clock()
    index = IndexReader(args.index)
    scorer = retrieve.Scorer(index)
    t1 = clock()
    queries = retrieve.analyse_queries(index, topics)
    t2 = clock()
    index.postings(sorted({t.term for terms in queries.values() for t in terms}))
    t3 = clock()
    scorer.prepare(topics)  # loads numba's cached kernels
    t4 = clock()
    prepared = scorer.prepare(topics)
    t5 = clock()
    print(f"CPU s: IndexReader + Scorer {t1 - t0:.3f}, analysis {t2 - t1:.3f}, postings read {t3 - t2:.3f}, "
          f"first prepare (numba's kernels loaded) {t4 - t3:.3f}, prepare warm {t5 - t4:.3f}; "
          f"{prepared.num_postings:,} postings, {len(prepared.candidates):,} candidates")
    for family, point in (("bm25", {"k1": 0.9, "b": 0.4}), ("ql_dirichlet", {"mu": 1000.0})):
        model = get_model(family)
        point = model.check_point(point)
        scorer.run_table(model, prepared, point, 1000)
        tops, runs = [], []
        for _ in range(args.repeats):
            a = clock()
            scorer.top(model, prepared, point, 1000)
            b = clock()
            scorer.run_table(model, prepared, point, 1000)
            c = clock()
            tops.append(b - a)
            runs.append((c - b) - (b - a))
        print(f"{family}: one point's Scorer.top {min(tops):.3f} CPU s, its Arrow run {max(min(runs), 0.0):.3f} "
              f"(least of {args.repeats})")
    model = get_model("bm25")
    grid = [model.check_point({"k1": k1, "b": b}) for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]

    def grid_runs():
        if hasattr(scorer, "run_tables"):
            return scorer.run_tables(model, prepared, grid, 1000)
        return [scorer.run_table(model, prepared, point, 1000) for point in grid]

    grid_runs()
    times = []
    for _ in range(args.repeats):
        a = clock()
        runs = grid_runs()
        times.append(clock() - a)
        del runs
    print(f"bm25 grid of {len(grid)} points, Arrow runs: {min(times):.3f} CPU s, {min(times) / len(grid):.3f} a point "
          f"(least of {args.repeats})")


if __name__ == "__main__":
    main()
