"""Where a BM25 grid point's time goes, and what score bounds over the grid could skip.

    python benchmarks/grid_point.py --index benchmarks/.data/indexes/syn-1000000/irgrid \\
        --topics benchmarks/.data/syn-1000000/topics.parquet

In one process, after ``Scorer.prepare`` (its CPU seconds printed):

1. a point of the fused kernel (``Scorer.top_points``, scoring and ranking in one pass), and a
   block of ``BLOCK_POINTS`` points, least of ``--repeats`` CPU seconds;
2. ranking alone: ``irgrid.retrieve.ranking.top_k`` over the same point's scores of every candidate (the
   numpy path's ``Scorer.score_all``), least of ``--repeats``: the ranking's share of a point;
3. a block of the 20 points of ``scale.py``'s grid (k1 x b = 5 x 4) in one kernel pass
   (``Scorer._top_block``), and the whole grid and its first point alone through
   ``Scorer.grid_tops`` (prepare included, as ``retrieve_grid`` calls it; points cut into blocks of
   ``BLOCK_POINTS``): grid / one point, least of ``--repeats`` each; then the same through
   ``retrieve_grid(..., as_arrow=True)`` (a ``Scorer`` made and the Arrow runs too: what ``scale.py``'s
   grid children and ``irgrid retrieve`` call);
4. bounds: over the box of the 20-point grid of ``scale.py`` (k1 0.6..1.8, b 0.3..0.9), each
   candidate's highest possible score (k1 at its least, b at the end that favours its length) and
   lowest; a candidate whose highest is below the depth-th largest lowest of its query can rank
   within the depth at no point of the grid. The share of candidates and postings that survive
   is what a grid pruned this way would still score at every point;
5. the neighbour's bound: for each point of the 20-point grid after the first of its block of
   ``BLOCK_POINTS``, the lowest of its scores of the previous point's best ``depth`` (those
   reaching its depth-th score, ties kept) is a lower bound on its own depth-th score; the
   candidates reaching that bound, against those reaching the kernel's sampled threshold
   (``irgrid.retrieve.ranking.best_positions``), summed over the queries with more than ``depth``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

K1_RANGE, B_RANGE = (0.6, 1.8), (0.3, 0.9)
#: scale.py's 20-point grid
GRID = [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]


def grid_arguments(description: str) -> argparse.ArgumentParser:
    """The arguments of the grid benchmarks (this one, grid_floor.py, grid_pruning.py): an index, its topics, a
    depth and how many repeats a timing takes its least of."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--topics", type=Path, required=True)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    return parser


def least_cpu(call, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        call()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = grid_arguments(__doc__.splitlines()[0])
    args = parser.parse_args()

    import os

    import numpy as np

    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.models.parts.bm25 import lucene_idf
    from irgrid.retrieve import BLOCK_POINTS, Scorer, retrieve_grid
    from irgrid.retrieve.ranking import top_k
    from irgrid.runs import read_topics

    scorer = Scorer(IndexReader(args.index))
    model = get_model("bm25")
    point = model.check_point({"k1": 1.2, "b": 0.75})
    block = [model.check_point({"k1": k1, "b": 0.75}) for k1 in np.linspace(*K1_RANGE, BLOCK_POINTS)]
    topics = read_topics(args.topics)
    started = time.process_time()
    queries = scorer.prepare(topics, model, [point, *block])
    print(f"{args.index}: {len(queries)} queries, {queries.num_postings:,} postings, {len(queries.candidates):,} "
          f"candidates; prepare {time.process_time() - started:.3f} CPU s; load average {os.getloadavg()[0]:.1f}")
    scorer.top_points(model, queries, [point], args.depth)  # the kernel loaded
    one = least_cpu(lambda: scorer.top_points(model, queries, [point], args.depth), args.repeats)
    four = least_cpu(lambda: scorer.top_points(model, queries, block, args.depth), args.repeats)
    scores = scorer.score_all(model, queries, point)
    ranking = least_cpu(lambda: top_k(scores, queries.candidates, queries.candidate_offsets, scorer.docno_order,
                                      args.depth), args.repeats)
    print(f"fused kernel, one point: {one:.3f} CPU s; a block of {BLOCK_POINTS}: {four:.3f} ({four / BLOCK_POINTS:.3f} "
          f"a point); ranking alone (top_k over the point's scores): {ranking:.3f} = {ranking / one:.0%} of a point "
          f"(least of {args.repeats})")

    grid = [model.check_point(found) for found in GRID]
    twenty = least_cpu(lambda: scorer._top_block(model, queries, grid, args.depth, 0, len(queries)), args.repeats)
    print(f"fused kernel, a block of the {len(grid)} grid points: {twenty:.3f} CPU s ({twenty / len(grid):.3f} a point)")
    single = least_cpu(lambda: list(scorer.grid_tops(model, topics, grid[:1], args.depth)), args.repeats)
    whole = least_cpu(lambda: list(scorer.grid_tops(model, topics, grid, args.depth)), args.repeats)
    print(f"Scorer.grid_tops (prepare included), blocks of {BLOCK_POINTS}: one point {single:.3f} CPU s, the "
          f"{len(grid)}-point grid {whole:.3f} CPU s: {whole / single:.2f} x; load average {os.getloadavg()[0]:.1f}")
    single = least_cpu(lambda: retrieve_grid(scorer.index, topics, "bm25", GRID[:1], args.depth, as_arrow=True),
                       args.repeats)
    whole = least_cpu(lambda: retrieve_grid(scorer.index, topics, "bm25", GRID, args.depth, as_arrow=True), args.repeats)
    print(f"retrieve_grid(as_arrow=True) (Scorer, prepare and Arrow runs included): one point {single:.3f} CPU s, the "
          f"{len(grid)}-point grid {whole:.3f} CPU s: {whole / single:.2f} x; load average {os.getloadavg()[0]:.1f}")

    avgdl = scorer.stats.avg_doc_length
    lengths = queries.posting_lengths.astype(np.float64)
    tfs = queries.tfs.astype(np.float64)
    idf = np.repeat(lucene_idf(np.array([t.df for t in queries.terms], dtype=np.float64), scorer.stats.num_docs),
                    np.diff(queries.term_offsets))

    def part(k1, b):
        return idf * tfs / (tfs + k1 * (1.0 - b + b * lengths / avgdl))

    longer = lengths > avgdl  # a larger b lowers a longer document's part and raises a shorter one's
    highest = np.zeros(len(queries.candidates))
    lowest = np.zeros(len(queries.candidates))
    np.add.at(highest, queries.global_slots, np.where(longer, part(K1_RANGE[0], B_RANGE[0]), part(K1_RANGE[0], B_RANGE[1])))
    np.add.at(lowest, queries.global_slots, np.where(longer, part(K1_RANGE[1], B_RANGE[1]), part(K1_RANGE[1], B_RANGE[0])))
    alive = np.ones(len(queries.candidates), dtype=bool)
    for q in range(len(queries)):
        lo, hi = queries.candidate_offsets[q], queries.candidate_offsets[q + 1]
        if hi - lo > args.depth:
            threshold = np.partition(lowest[lo:hi], hi - lo - args.depth)[hi - lo - args.depth]
            alive[lo:hi] = highest[lo:hi] >= threshold
    print(f"bounds over k1 {K1_RANGE[0]}..{K1_RANGE[1]} x b {B_RANGE[0]}..{B_RANGE[1]}: candidates that could rank "
          f"within {args.depth} at some point {alive.mean():.3f}, their postings {alive[queries.global_slots].mean():.3f}")

    from irgrid.retrieve.ranking import best_positions

    long_queries = [q for q in range(len(queries))
                    if queries.candidate_offsets[q + 1] - queries.candidate_offsets[q] > args.depth]
    neighbour_kept = sampled_kept = pairs = 0
    previous = None
    for at, current_point in enumerate(grid):
        current = scorer.score_all(model, queries, current_point)
        if at % BLOCK_POINTS:
            pairs += 1
            for q in long_queries:
                lo, hi = queries.candidate_offsets[q], queries.candidate_offsets[q + 1]
                before, now = previous[lo:hi], current[lo:hi]
                best_before = before >= np.partition(before, hi - lo - args.depth)[hi - lo - args.depth]
                neighbour_kept += int((now >= now[best_before].min()).sum())
                sampled_kept += len(best_positions(now, args.depth))
        previous = current
    print(f"neighbour's bound over {pairs} points of the grid's blocks of {BLOCK_POINTS} ({len(long_queries)} queries with "
          f"more than {args.depth} candidates): {neighbour_kept / pairs:,.0f} candidates a point reach it, "
          f"{sampled_kept / pairs:,.0f} the sampled threshold")


if __name__ == "__main__":
    main()
