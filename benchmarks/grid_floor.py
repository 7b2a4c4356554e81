"""Whether a grid point's ranking gains from the previous point's: thresholds from a neighbour, timed.

    python benchmarks/grid_floor.py --index benchmarks/.data/indexes/syn-1000000/irgrid \\
        --topics benchmarks/.data/syn-1000000/topics.parquet

The fused kernel ranks each point of a block of ``BLOCK_POINTS`` on its own: a sampled threshold
(``irgrid.retrieve.ranking.best_positions``), the positions reaching it collected, sorted and cut at
the depth. For point ``j > 0`` of a block, the candidates the previous point kept are real candidates
of this point, so any score that ``depth`` of them reach at this point is an exact lower bound of its
depth-th score: a threshold with no unlucky sample. This script ranks one block of 8 of ``scale.py``'s
20-point grid (k1 1.2 and 1.5 at each b: what the kernel's second block holds) the way the kernel does
(``_at_depth``, ``_write_by_candidate_ranks`` with the grid's layout), the points one after the
other for each query as the kernel does, from the points' scores (``Scorer.score_all``: the kernel's
bits), in modes:

- ``sampled``: the kernel's threshold at every point;
- ``neighbour``: for ``j > 0``, the least score at this point of the previous point's best ``depth``
  (every candidate whose previous score reaches the previous point's depth-th, ties included);
- ``max``: the larger of the sampled threshold and ``neighbour``'s bound, and ``neighbour``'s bound
  when fewer than ``depth`` reach the larger;
- ``floor``: the larger of the sampled threshold and a radix-selected bound over everything the previous
  point collected (the least of its scores at this point in the 11-bit bucket of their order-preserving
  keys that holds the depth-th largest), the bound alone when fewer than ``depth`` reach the larger;
- ``given``: the exact depth-th score of every query and point, computed before the clock starts: what
  no threshold can beat (the collection, sort and rows of exactly the ties at the cut).

Only queries with more than ``SAMPLE_WHEN_LONGER`` x depth candidates change mode (the others take an
exact selection already). Each mode's rankings are checked equal to ``sampled``'s (docids and score
bits). Modes alternate, ``--repeats`` rounds; the least CPU seconds of each, a point, and the positions a
point that reach the threshold and that are sorted (after the cut) are printed.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from grid_point import grid_arguments  # noqa: E402  (benchmarks/grid_point.py: the grid benchmarks' arguments)

from irgrid.retrieve.ranking import (  # noqa: E402  (after the path to this checkout's src)
    SAMPLE_WHEN_LONGER,
    _at_depth,
    _best_positions,
    _collect_reaching,
    _result_offsets,
    _sample_threshold,
    _write_by_candidate_ranks,
)

#: scale.py's 20-point grid; the block of 8 ranked here
GRID = [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]
BLOCK = slice(8, 16)
MODES = ("sampled", "neighbour", "max", "floor", "given")
_MAGNITUDE = np.int64(2**63 - 1)
RADIX = 2048


@njit(cache=False, inline="always")
def _ordered(bits):
    """A float64's bits as an int64 whose signed order is the float order."""
    return bits ^ _MAGNITUDE if bits < 0 else bits


@njit(cache=False)
def _radix_floor(scores, known, depth, keys, counts):
    """A score at least ``depth`` of ``scores[known]`` reach: the least of them in the radix bucket of the
    depth-th largest (``len(known) >= depth``)."""
    bits = scores.view(np.int64)
    m = len(known)
    lowest = highest = _ordered(bits[np.uint64(known[0])])
    for i in range(m):
        key = _ordered(bits[np.uint64(known[i])])
        keys[i] = key
        lowest = min(lowest, key)
        highest = max(highest, key)
    span = np.uint64(highest - lowest)
    shift = np.uint64(0)
    while (span >> shift) >= np.uint64(RADIX):
        shift += np.uint64(1)
    counts[:] = 0
    for i in range(m):
        counts[np.uint64(keys[i] - lowest) >> shift] += 1
    digit = span >> shift
    total = 0
    while True:
        total += counts[digit]
        if total >= depth:
            break
        digit -= np.uint64(1)
    least = highest
    for i in range(m):
        if (np.uint64(keys[i] - lowest) >> shift) == digit:
            least = min(least, keys[i])
    return np.array([_ordered(least)]).view(np.float64)[0]


@njit(cache=False)
def rank_block(block, candidates, candidate_offsets, ranks, depth, offsets, out_docids, out_scores, mode, given):
    """Each query's points of ``block`` ranked in turn into ``out_*[j]``: the positions reaching the threshold and
    those kept after the cut at the depth-th (``_at_depth``), summed."""
    points = block.shape[0]
    most = 0
    for q in range(len(candidate_offsets) - 1):
        most = max(most, candidate_offsets[q + 1] - candidate_offsets[q])
    works = np.empty((2, most), np.int64)
    keys = np.empty(most, np.int64)
    counts = np.empty(RADIX, np.int64)
    reaching = collected = 0
    for q in range(len(candidate_offsets) - 1):
        lo, hi = candidate_offsets[q], candidate_offsets[q + 1]
        n = hi - lo
        kept = 0
        for j in range(points):
            scores = block[j, lo:hi]
            work = works[j % 2]
            if mode == 0 or j == 0 or n <= SAMPLE_WHEN_LONGER * depth:
                positions = _best_positions(scores, depth, work)
            else:
                known = works[(j - 1) % 2][:kept]
                if mode == 4:
                    threshold = floor = given[j, q]
                elif mode == 3:
                    floor = _radix_floor(scores, known, depth, keys, counts)
                    threshold = max(floor, _sample_threshold(scores, depth))
                else:  # the previous point's best depth: those reaching its depth-th (its ranking's last score)
                    previous = block[j - 1, lo:hi]
                    cut = out_scores[j - 1, offsets[q] + depth - 1]
                    floor = np.inf
                    for i in range(kept):
                        position = np.uint64(known[i])
                        if previous[position] >= cut:
                            floor = min(floor, scores[position])
                    threshold = floor if mode == 1 else max(floor, _sample_threshold(scores, depth))
                count = _collect_reaching(scores, threshold, work)
                if count < depth:
                    count = _collect_reaching(scores, floor, work)
                positions = work[:count]
            reaching += len(positions)
            positions = _at_depth(scores, positions, depth)
            kept = len(positions)
            collected += kept
            _write_by_candidate_ranks(scores, positions, candidates[lo:hi], ranks[lo:hi], depth, out_docids[j],
                                      out_scores[j], offsets[q])
    return reaching, collected


def main() -> None:
    parser = grid_arguments(__doc__.splitlines()[0])
    args = parser.parse_args()

    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer
    from irgrid.runs import read_topics

    scorer = Scorer(IndexReader(args.index))
    model = get_model("bm25")
    points = [model.check_point(point) for point in GRID[BLOCK]]
    queries = scorer.prepare(read_topics(args.topics), model, points)
    candidate_offsets = queries.candidate_offsets
    ranks = scorer.grid_layout(model, queries)[0]
    block = np.stack([scorer.score_all(model, queries, point) for point in points])
    offsets, _ = _result_offsets(candidate_offsets, 0, len(queries), args.depth)
    given = np.full((len(points), len(queries)), np.nan)
    for j in range(len(points)):
        for q in range(len(queries)):
            lo, hi = candidate_offsets[q], candidate_offsets[q + 1]
            if hi - lo > args.depth:
                given[j, q] = np.partition(block[j, lo:hi], hi - lo - args.depth)[hi - lo - args.depth]
    outputs = {mode: (np.empty((len(points), offsets[-1]), np.int32), np.empty((len(points), offsets[-1]), np.float64))
               for mode in MODES}
    least = dict.fromkeys(MODES, float("inf"))
    collected = {}
    for repeat in range(args.repeats + 1):  # the first round compiles
        for mode in MODES if repeat % 2 else MODES[::-1]:
            started = time.process_time()
            collected[mode] = rank_block(block, queries.candidates, candidate_offsets, ranks, args.depth, offsets,
                                         *outputs[mode], MODES.index(mode), given)
            if repeat:
                least[mode] = min(least[mode], time.process_time() - started)
    docids, scores = outputs["sampled"]
    for mode in MODES:
        same = np.array_equal(outputs[mode][0], docids) and np.array_equal(outputs[mode][1].view(np.int64),
                                                                           scores.view(np.int64))
        reaching, kept = collected[mode]
        print(f"{mode:9s} {least[mode] / len(points):.4f} CPU s a point (least of {args.repeats}), positions a point "
              f"{reaching / len(points):,.0f} reaching the threshold, {kept / len(points):,.0f} sorted; rankings as "
              f"sampled's: {same}")
    print(f"{len(queries)} queries, {int((np.diff(candidate_offsets) > SAMPLE_WHEN_LONGER * args.depth).sum())} with more "
          f"than {SAMPLE_WHEN_LONGER} x depth candidates; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
