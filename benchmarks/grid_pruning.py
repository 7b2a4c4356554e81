"""How much exact per-point pruning (MaxScore, block-max MaxScore) would leave of a BM25 grid point's work.

    python benchmarks/grid_pruning.py --index benchmarks/.data/indexes/syn-1000000/irgrid \\
        --topics benchmarks/.data/syn-1000000/topics.parquet

For each point of ``scale.py``'s 20-point BM25 grid and each query: the exact top-``depth``
threshold theta (the depth-th largest of irgrid's own scores, ``Scorer.score_all``), then what a
document-at-a-time MaxScore (Turtle & Flood 1995) evaluation would touch at that point, counted by
simulating it over the query's postings in docid order:

- the terms sorted by their upper bound at the point, ascending; with threshold ``T``, the longest
  prefix whose bounds sum below ``T`` is non-essential (a document in none of the other lists
  cannot reach ``T``); every posting of an essential list is scored (decoded and weighted);
- a document of an essential list ("touched") then has its essential postings' sum ``s``; the
  non-essential terms are visited from the largest bound down, and the document is dropped as soon
  as ``s`` plus the bounds of the non-essential terms not visited yet is below ``T``; otherwise the
  term's posting is looked up and, where present, scored;
- a document that survives every check is "fully scored" and compared with the top-``depth`` heap
  (a min-heap of scores: "inserted" when it enters it); once the heap is full, ``T`` rises to its
  least score, and the non-essential prefix grows.

A document is dropped only when its bound is strictly below ``T`` (less a relative 1e-12 for the
summation order): the ties at theta, which irgrid ranks by docno, are all fully scored. The
threshold ``T`` starts at:

- ``oracle``: theta itself, known in advance (what no safe dynamic-threshold method can beat);
- ``daat``: minus infinity, raised by the heap as it goes (a plain document-at-a-time MaxScore);
- ``previous``: the depth-th largest score at this point of the previous grid point's top ``depth``
  (real documents' scores, so at most theta), then raised by the heap (minus infinity at the first
  point).

Term upper bounds: ``exact``, the largest of the term's weighted postings at the point (what a pass over
its postings, or its (tf, |D|) Pareto frontier, gives); ``safe``, BM25 at the term's largest tf and
least document length (which need not be one posting). Block-max variants (``block8``, ``block64``,
``block128``: blocks of that many postings of a term, in docid order, each with its largest weighted
posting) add two checks to MaxScore (as block-max MaxScore does): a touched document is skipped when
the block bounds of all the query's terms at its docid (the block of each term whose last docid is at
least it; 0 past the last) sum below ``T``, and the non-essential bounds in the per-document check are
the block bounds. The bound and lookup work itself (cursor moves, block-bound sums, the heap) is
counted, not costed.

The ``ideal`` variants bound a document by the block maxima of only the terms it holds, as if which
terms hold it were known for free (what block-max WAND's bound comes to when every term alone can
reach the threshold: the pivot is then the first cursor, and its block is skipped when its maximum is
below it): the candidates visited in docid order, or in the order of their document length (docids
assigned by length, the postings' blocks cut in that order), a candidate skipped when its bound is
below ``T``, else all its postings scored and its score offered to the heap.

The counts are then costed with the per-unit costs of today's fused kernel measured in the same
process (least of ``--repeats``): ``Scorer._top_block`` of one and of 8 points (the grid's second
block, with the grid layout) gives an extra point's kernel time; ``grid_floor.rank_block``'s sampled
mode ranks those 8 points from given scores (the kernel's ranking), the rest of the marginal is the
scoring, a posting's cost the scoring over the postings; ranking each point's top ``depth`` alone (the
candidates reaching theta) is the ranking's fixed part (the sort of the rows a point returns), and the
rest of the ranking over the other candidates is a candidate's cost. ``Scorer.docno_column`` of a
point's rows is timed apart (each point's run has its own, pruned or not). The floor of an extra point
with pruning: postings scored x a posting's cost + fully scored documents x a candidate's cost + the
fixed ranking + the docno column, every lookup, bound check and heap move free.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from grid_point import grid_arguments, least_cpu  # noqa: E402  (benchmarks/grid_point.py, after the path to it)

#: scale.py's 20-point grid
GRID = [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]
#: the block of 8 points the kernel's per-unit costs are timed on (grid_floor.py's)
TIMED_BLOCK = slice(8, 16)
#: the counts a simulation returns, in order
COUNTS = ("touched", "block_skipped", "essential_postings", "lookups", "nonessential_postings", "fully_scored",
          "inserted")
#: a bound is compared with the threshold less this share of it: the simulation adds a document's
#: parts in another order than the scorer, so a tie at theta may come out an ulp or two below
SLACK = 1e-12


@njit(cache=False)
def _heap_push(heap, size, value):
    """Min-heap of ``heap[:size]``: ``value`` added, the new size returned."""
    i = size
    heap[i] = value
    while i > 0:
        parent = (i - 1) // 2
        if heap[parent] <= heap[i]:
            break
        heap[parent], heap[i] = heap[i], heap[parent]
        i = parent
    return size + 1


@njit(cache=False)
def _heap_replace_least(heap, size, value):
    """Min-heap of ``heap[:size]``: its least replaced by ``value``."""
    heap[0] = value
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[i] <= heap[child]:
            break
        heap[i], heap[child] = heap[child], heap[i]
        i = child


@njit(cache=False)
def _limit(threshold):
    """What a bound is compared with: ``threshold`` less :data:`SLACK` of it."""
    return threshold - SLACK * abs(threshold) if np.isfinite(threshold) else threshold


@njit(cache=False)
def _non_essential(prefix, threshold):
    """How many of the terms (ascending bounds, ``prefix[k]`` the sum of the first k) are non-essential."""
    count = 0
    for k in range(1, len(prefix)):
        if prefix[k] < threshold:
            count = k
    return count


@njit(cache=False)
def maxscore_query(docids, contributions, term_offsets, term_bounds, initial, depth, block_size, counts):
    """Document-at-a-time MaxScore over one query's terms (the module's docstring), counts added to ``counts``
    (:data:`COUNTS`); the final threshold returned (the heap's least once full, else -inf).

    Term ``k``'s postings are ``docids[term_offsets[k]:term_offsets[k+1]]`` (ascending) with their
    weighted scores ``contributions``; ``term_bounds[k]`` its upper bound; ``block_size`` 0 for plain
    MaxScore, else the block-max checks over blocks of that many postings."""
    terms = len(term_offsets) - 1
    order = np.argsort(term_bounds, kind="mergesort")  # ascending bounds
    prefix = np.zeros(terms + 1)
    for r in range(terms):
        prefix[r + 1] = prefix[r] + term_bounds[order[r]]
    cursors = np.empty(terms, np.int64)  # each term's next posting
    blocks = np.zeros(terms, np.int64)   # each term's block covering the document
    block_firsts = np.zeros(terms + 1, np.int64)  # term k's blocks' maxima at block_maxima[block_firsts[k]:...]
    for k in range(terms):
        cursors[k] = term_offsets[k]
        length = term_offsets[k + 1] - term_offsets[k]
        block_firsts[k + 1] = block_firsts[k] + ((length + block_size - 1) // block_size if block_size else 0)
    block_maxima = np.zeros(block_firsts[terms])
    for k in range(terms if block_size else 0):
        for p in range(term_offsets[k], term_offsets[k + 1]):
            b = block_firsts[k] + (p - term_offsets[k]) // block_size
            block_maxima[b] = max(block_maxima[b], contributions[p])
    bounds_here = np.empty(terms)
    heap = np.empty(depth)
    size = 0
    threshold = initial
    essential_from = _non_essential(prefix, _limit(threshold))
    while True:
        # the next document of an essential list
        document = np.iinfo(np.int64).max
        for r in range(essential_from, terms):
            k = order[r]
            if cursors[k] < term_offsets[k + 1]:
                document = min(document, np.int64(docids[cursors[k]]))
        if document == np.iinfo(np.int64).max:
            break
        counts[0] += 1
        limit = _limit(threshold)
        if block_size:
            total = 0.0
            for k in range(terms):
                lo, hi = term_offsets[k], term_offsets[k + 1]
                block = blocks[k]
                while lo + block * block_size < hi and docids[min(lo + (block + 1) * block_size, hi) - 1] < document:
                    block += 1
                blocks[k] = block
                bound = block_maxima[block_firsts[k] + block] if lo + block * block_size < hi else 0.0
                bounds_here[k] = bound
                total += bound
            if total < limit:
                counts[1] += 1
                for r in range(essential_from, terms):  # the essential cursors step past the document
                    k = order[r]
                    if cursors[k] < term_offsets[k + 1] and docids[cursors[k]] == document:
                        cursors[k] += 1
                continue
        score = 0.0
        for r in range(essential_from, terms):
            k = order[r]
            if cursors[k] < term_offsets[k + 1] and docids[cursors[k]] == document:
                score += contributions[cursors[k]]
                cursors[k] += 1
                counts[2] += 1
        dropped = False
        for r in range(essential_from - 1, -1, -1):
            rest = 0.0
            if block_size:
                for v in range(r + 1):
                    rest += bounds_here[order[v]]
            else:
                rest = prefix[r + 1]
            if score + rest < limit:
                dropped = True
                break
            k = order[r]
            counts[3] += 1
            hi = term_offsets[k + 1]
            while cursors[k] < hi and docids[cursors[k]] < document:  # a skip in a real index
                cursors[k] += 1
            if cursors[k] < hi and docids[cursors[k]] == document:
                score += contributions[cursors[k]]
                counts[4] += 1
        if dropped:
            continue
        counts[5] += 1
        if size < depth:
            size = _heap_push(heap, size, score)
            counts[6] += 1
        elif score > heap[0]:
            _heap_replace_least(heap, size, score)
            counts[6] += 1
        else:
            continue
        if size == depth and heap[0] > threshold:
            threshold = heap[0]
            essential_from = _non_essential(prefix, _limit(threshold))
    return heap[0] if size == depth else -np.inf


@njit(cache=False)
def maxscore_all(query_term_offsets, term_offsets, docids, contributions, term_bounds, initials, depth, block_size,
                 counts, thresholds):
    """:func:`maxscore_query` for every query of a prepared set's flat arrays: ``counts[q]`` and ``thresholds[q]``."""
    for q in range(len(query_term_offsets) - 1):
        first, last = query_term_offsets[q], query_term_offsets[q + 1]
        if first == last:
            thresholds[q] = initials[q]
            continue
        thresholds[q] = maxscore_query(docids, contributions, term_offsets[first:last + 1], term_bounds[first:last],
                                       initials[q], depth, block_size, counts[q])


def depth_threshold(scores: np.ndarray, candidate_offsets: np.ndarray, depth: int) -> np.ndarray:
    """Each query's depth-th largest score (-inf for a query with fewer candidates)."""
    thresholds = np.full(len(candidate_offsets) - 1, -np.inf)
    for q in range(len(thresholds)):
        lo, hi = candidate_offsets[q], candidate_offsets[q + 1]
        if hi - lo >= depth:
            thresholds[q] = np.partition(scores[lo:hi], hi - lo - depth)[hi - lo - depth]
    return thresholds


def rescored_threshold(previous: np.ndarray, scores: np.ndarray, candidate_offsets: np.ndarray, depth: int,
                       previous_thresholds: np.ndarray) -> np.ndarray:
    """Each query's depth-th largest score here among the previous point's top ``depth`` (those reaching its
    depth-th, ties included): a lower bound of theta from real documents."""
    thresholds = np.full(len(candidate_offsets) - 1, -np.inf)
    for q in range(len(thresholds)):
        lo, hi = candidate_offsets[q], candidate_offsets[q + 1]
        if hi - lo >= depth:
            kept = scores[lo:hi][previous[lo:hi] >= previous_thresholds[q]]
            thresholds[q] = np.partition(kept, len(kept) - depth)[len(kept) - depth]
    return thresholds


def block_bounds(contributions, term_offsets, global_slots, num_candidates, block_size, order=None) -> np.ndarray:
    """Each candidate's sum, over the terms it holds, of the largest weighted posting in the block of ``block_size``
    postings of that term holding it (a term's postings in ``order``, docid order by default)."""
    if order is not None:
        contributions, global_slots = contributions[order], global_slots[order]
    term_starts = np.repeat(term_offsets[:-1], np.diff(term_offsets))
    block_starts = term_starts + (np.arange(len(contributions)) - term_starts) // block_size * block_size
    starts, sizes = np.unique(block_starts, return_counts=True)
    maxima = np.repeat(np.maximum.reduceat(contributions, starts), sizes)
    return np.bincount(global_slots, weights=maxima, minlength=num_candidates)


@njit(cache=False)
def bounded_daat(candidate_offsets, processing, bounds, scores, postings, initials, depth, counts, thresholds):
    """Each query's candidates visited in ``processing`` order (candidate indices, query by query), a candidate
    skipped when its bound (:func:`block_bounds`) is below the threshold, else its ``postings`` scored and its score
    offered to the top-``depth`` heap; the threshold starts at ``initials[q]`` and rises with the heap.
    ``counts[q]``: postings scored, candidates scored; ``thresholds[q]`` the final one (-inf: the heap not full)."""
    heap = np.empty(depth)
    for q in range(len(candidate_offsets) - 1):
        threshold = initials[q]
        size = 0
        for i in range(candidate_offsets[q], candidate_offsets[q + 1]):
            c = processing[i]
            if bounds[c] < _limit(threshold):
                continue
            counts[q, 0] += postings[c]
            counts[q, 1] += 1
            if size < depth:
                size = _heap_push(heap, size, scores[c])
            elif scores[c] > heap[0]:
                _heap_replace_least(heap, size, scores[c])
            if size == depth and heap[0] > threshold:
                threshold = heap[0]
        thresholds[q] = heap[0] if size == depth else -np.inf


def posting_contributions(model, queries, stats, point) -> np.ndarray:
    """Each posting's weighted score at ``point``, as ``Scorer.score_all`` computes it before adding them."""
    contributions = np.empty(queries.num_postings, dtype=np.float64)
    offsets = queries.term_offsets
    for i, term in enumerate(queries.terms):
        lo, hi = offsets[i], offsets[i + 1]
        part = model.term_scores(term, queries.posting_lengths[lo:hi], queries.posting_unique_terms[lo:hi], stats, point)
        contributions[lo:hi] = model.term_weight(term, point) * part
    return contributions


def term_upper_bounds(model, queries, stats, point, contributions) -> tuple[np.ndarray, np.ndarray]:
    """``(exact, safe)`` upper bounds of each term of the set at ``point``: the largest weighted posting, and the
    model at the term's largest tf and least document length."""
    offsets = queries.term_offsets
    starts = offsets[:-1]
    nonempty = offsets[1:] > starts
    exact = np.zeros(len(queries.terms))
    exact[nonempty] = np.maximum.reduceat(contributions, starts[nonempty])
    safe = np.zeros(len(queries.terms))
    lengths = queries.posting_lengths
    for i, term in enumerate(queries.terms):
        lo, hi = offsets[i], offsets[i + 1]
        if hi > lo:
            extreme = dataclasses.replace(term, tfs=np.array([term.tfs.max()], dtype=np.int32))
            least = np.array([lengths[lo:hi].min()], dtype=lengths.dtype)
            safe[i] = model.term_weight(term, point) * model.term_scores(extreme, least, least, stats, point)[0]
    return exact, safe


def pareto_sizes(queries) -> np.ndarray:
    """Each term's count of (tf, |D|) pairs no other posting beats in both (a larger or equal tf at a shorter or
    equal length): the postings whose BM25 part can be the term's largest at some (k1, b)."""
    sizes = np.zeros(len(queries.terms), dtype=np.int64)
    lengths = queries.posting_lengths
    for i, term in enumerate(queries.terms):
        lo, hi = queries.term_offsets[i], queries.term_offsets[i + 1]
        if hi == lo:
            continue
        order = np.lexsort((-term.tfs.astype(np.int64), lengths[lo:hi]))  # by length, then tf descending
        best = np.maximum.accumulate(term.tfs[order])
        # a frontier point: a tf larger than every shorter (or as short) document's
        sizes[i] = 1 + int(np.count_nonzero(best[1:] > best[:-1]))
    return sizes


def unit_costs(scorer, model, queries, depth: int, repeats: int) -> dict[str, float]:
    """Today's kernel's costs (CPU s, least of ``repeats``): an extra point of a block of 8, its ranking, its
    scoring, a posting's and a candidate's share, the fixed ranking of a point's top ``depth``, a docno column."""
    from grid_floor import rank_block  # benchmarks/grid_floor.py: the kernel's ranking from given scores

    from irgrid.retrieve.ranking import _result_offsets

    points = [model.check_point(point) for point in GRID[TIMED_BLOCK]]
    layout = scorer.grid_layout(model, queries)
    candidate_ranks = layout[0]
    n = len(queries)
    one = least_cpu(lambda: scorer._top_block(model, queries, points[:1], depth, 0, n, layout), repeats)
    eight = least_cpu(lambda: scorer._top_block(model, queries, points, depth, 0, n, layout), repeats)
    marginal = (eight - one) / (len(points) - 1)

    block = np.stack([scorer.score_all(model, queries, point) for point in points])
    offsets, _ = _result_offsets(queries.candidate_offsets, 0, n, depth)
    out = (np.empty((len(points), offsets[-1]), np.int32), np.empty((len(points), offsets[-1]), np.float64))
    no_given = np.zeros((len(points), n))
    args = (queries.candidates, queries.candidate_offsets, candidate_ranks, depth, offsets, *out, 0, no_given)
    rank_block(block, *args)  # compiles
    ranking = least_cpu(lambda: rank_block(block, *args), repeats) / len(points)

    # each point's candidates reaching its theta alone: the ranking's fixed part
    query_of = np.repeat(np.arange(n), np.diff(queries.candidate_offsets))
    fixed = 0.0
    reaching_total = 0
    for j in range(len(points)):
        thresholds = depth_threshold(block[j], queries.candidate_offsets, depth)
        per_candidate = np.repeat(thresholds, np.diff(queries.candidate_offsets))
        keep = block[j] >= per_candidate
        reaching_total += int(keep.sum())
        kept_offsets = np.zeros(n + 1, dtype=queries.candidate_offsets.dtype)
        np.cumsum(np.bincount(query_of[keep], minlength=n), out=kept_offsets[1:])
        kept_result, _ = _result_offsets(kept_offsets, 0, n, depth)
        kept_out = (np.empty((1, kept_result[-1]), np.int32), np.empty((1, kept_result[-1]), np.float64))
        kept_args = (queries.candidates[keep], kept_offsets, candidate_ranks[keep], depth, kept_result, *kept_out, 0,
                     no_given[:1])
        kept_block = np.ascontiguousarray(block[j:j + 1, keep])
        rank_block(kept_block, *kept_args)
        fixed += least_cpu(lambda: rank_block(kept_block, *kept_args), repeats)  # noqa: B023 (called here)
        assert np.array_equal(kept_out[0][0], out[0][j]), "the top alone ranks as the whole"
    fixed /= len(points)
    docnos = least_cpu(lambda: scorer.docno_column(out[0][0]), repeats)
    postings = queries.num_postings
    candidates = len(queries.candidates)
    reaching = reaching_total / len(points)
    return {"one": one, "eight": eight, "marginal": marginal, "ranking": ranking, "scoring": marginal - ranking,
            "per_posting": (marginal - ranking) / postings, "fixed_ranking": fixed,
            "per_candidate": (ranking - fixed) / (candidates - reaching), "docno_column": docnos,
            "reaching": reaching}


def main() -> None:
    parser = grid_arguments(__doc__.splitlines()[0])
    parser.add_argument("--no-timing", action="store_true", help="counts only (a small collection)")
    parser.add_argument("--timing-only", action="store_true", help="the kernel's unit costs only, no counts")
    args = parser.parse_args()

    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer
    from irgrid.runs import read_topics

    scorer = Scorer(IndexReader(args.index))
    model = get_model("bm25")
    points = [model.check_point(point) for point in GRID]
    queries = scorer.prepare(read_topics(args.topics), model, points)
    stats = scorer.stats
    depth = args.depth
    candidate_offsets = queries.candidate_offsets
    n = len(queries)
    postings, candidates = queries.num_postings, len(queries.candidates)
    terms_a_query = np.diff(queries.query_term_offsets)
    print(f"{n} queries, {postings:,} postings, {candidates:,} candidates, terms a query mean "
          f"{terms_a_query.mean():.2f} max {terms_a_query.max()}; depth {depth}; load {os.getloadavg()[0]:.2f}")
    if args.timing_only:
        print_costs(unit_costs(scorer, model, queries, depth, args.repeats), depth, args.repeats)
        return
    frontier = pareto_sizes(queries)
    print(f"(tf, |D|) Pareto frontier a term: mean {frontier.mean():.2f}, max {frontier.max()} (of "
          f"{np.diff(queries.term_offsets).mean():,.0f} postings a term on average)")

    variants = {  # name: (bounds, block size, threshold start)
        "oracle safe": ("safe", 0, "oracle"),
        "oracle": ("exact", 0, "oracle"),
        "oracle block128": ("exact", 128, "oracle"),
        "oracle block64": ("exact", 64, "oracle"),
        "oracle block8": ("exact", 8, "oracle"),
        "daat safe": ("safe", 0, "daat"),
        "daat": ("exact", 0, "daat"),
        "daat block64": ("exact", 64, "daat"),
        "previous": ("exact", 0, "previous"),
        "previous block64": ("exact", 64, "previous"),
    }
    totals = {name: np.zeros(len(COUNTS), dtype=np.int64) for name in variants}
    ideal_variants = {  # name: (block size, postings in docid order or by document length, threshold start)
        "oracle ideal128": (128, False, "oracle"), "oracle ideal64": (64, False, "oracle"),
        "oracle ideal8": (8, False, "oracle"), "daat ideal64": (64, False, "daat"),
        "previous ideal64": (64, False, "previous"), "oracle ideal64 |D|": (64, True, "oracle"),
        "oracle ideal8 |D|": (8, True, "oracle"), "daat ideal64 |D|": (64, True, "daat"),
        "previous ideal64 |D|": (64, True, "previous")}
    ideal_totals = {name: np.zeros(2, dtype=np.int64) for name in ideal_variants}
    term_of = np.repeat(np.arange(len(queries.terms)), np.diff(queries.term_offsets))
    query_of = np.repeat(np.arange(n), np.diff(candidate_offsets))
    by_length = {False: None, True: np.lexsort((queries.docids, queries.posting_lengths, term_of))}
    processing = {False: np.lexsort((queries.candidates, query_of)),
                  True: np.lexsort((queries.candidates, queries.candidate_lengths, query_of))}
    candidate_postings = np.bincount(queries.global_slots, minlength=candidates)
    alone = []  # a point's share of the query terms whose exact bound reaches theta (essential at any threshold)
    previous_scores = previous_thresholds = None
    started = time.process_time()
    for j, point in enumerate(points):
        contributions = posting_contributions(model, queries, stats, point)
        scores = np.bincount(queries.global_slots, weights=contributions, minlength=candidates)
        if j == 0:
            assert np.array_equal(scores.view(np.int64), scorer.score_all(model, queries, point).view(np.int64))
        thetas = depth_threshold(scores, candidate_offsets, depth)
        exact, safe = term_upper_bounds(model, queries, stats, point, contributions)
        term_thetas = np.repeat(thetas, terms_a_query)
        alone.append(float(np.mean(exact[np.isfinite(term_thetas)] >= term_thetas[np.isfinite(term_thetas)])))
        starts = {"oracle": thetas, "daat": np.full(n, -np.inf),
                  "previous": (np.full(n, -np.inf) if previous_scores is None else
                               rescored_threshold(previous_scores, scores, candidate_offsets, depth,
                                                  previous_thresholds))}
        line = []
        has_depth = np.isfinite(thetas)
        for name, (bounds, block_size, start) in variants.items():
            counts = np.zeros((n, len(COUNTS)), dtype=np.int64)
            final = np.empty(n)
            maxscore_all(queries.query_term_offsets, queries.term_offsets, queries.docids, contributions,
                         exact if bounds == "exact" else safe, starts[start], depth, block_size, counts, final)
            assert np.allclose(final[has_depth], thetas[has_depth], rtol=1e-12, atol=0), (name, point)
            point_counts = counts.sum(axis=0)
            totals[name] += point_counts
            scored = point_counts[2] + point_counts[4]
            line.append(f"{name} {scored / 1e6:.2f}M/{point_counts[5] / 1e3:.0f}k")
        print(f"k1 {point['k1']} b {point['b']}: postings scored / documents fully scored: " + ", ".join(line))
        for name, (block_size, reordered, start) in ideal_variants.items():
            bounds = block_bounds(contributions, queries.term_offsets, queries.global_slots, candidates, block_size,
                                  by_length[reordered])
            counts = np.zeros((n, 2), dtype=np.int64)
            final = np.empty(n)
            bounded_daat(candidate_offsets, processing[reordered], bounds, scores, candidate_postings, starts[start],
                         depth, counts, final)
            assert np.allclose(final[has_depth], thetas[has_depth], rtol=1e-12, atol=0), (name, point)
            ideal_totals[name] += counts.sum(axis=0)
        previous_scores, previous_thresholds = scores, thetas
    print(f"(simulated in {time.process_time() - started:.0f} CPU s; load {os.getloadavg()[0]:.2f})")
    print(f"query terms whose exact bound alone reaches theta (of the queries with at least {depth} candidates): "
          f"{min(alone):.3f}-{max(alone):.3f} of them at a point, mean {np.mean(alone):.3f}")

    print(f"\nmeans a point over the {len(points)} points (the {n} queries summed); today: every one of "
          f"{postings:,} postings scored, {candidates:,} candidates ranked")
    print(f"{'variant':18s} " + " ".join(f"{name:>14s}" for name in COUNTS) + "   postings scored  share")
    for name, total in totals.items():
        mean = total / len(points)
        scored = mean[2] + mean[4]
        print(f"{name:18s} " + " ".join(f"{value:14,.0f}" for value in mean) +
              f"   {scored:15,.0f}  {scored / postings:.3f}")

    print("\nblock bounds of the terms a document holds (each known for free; a document skipped when they sum below "
          "the threshold), documents in docid order or by |D|, means a point:")
    for name, (postings_scored, documents) in ideal_totals.items():
        mean_scored = postings_scored / len(points)
        print(f"{name:22s} postings scored {mean_scored:12,.0f} ({mean_scored / postings:.3f})  documents "
              f"{documents / len(points):12,.0f}")
    if args.no_timing:
        return
    costs = print_costs(unit_costs(scorer, model, queries, depth, args.repeats), depth, args.repeats)
    print(f"\nfloor of an extra point (kernel + docno column), CPU s: today {costs['marginal'] + costs['docno_column']:.4f}")
    rows = [(name, total[2] + total[4], total[5]) for name, total in totals.items()]
    rows += [(name, *total) for name, total in ideal_totals.items()]
    for name, scored, ranked in rows:
        scoring = scored / len(points) * costs["per_posting"]
        ranking = ranked / len(points) * costs["per_candidate"] + costs["fixed_ranking"]
        floor = scoring + ranking + costs["docno_column"]
        print(f"{name:22s} scoring {scoring:.4f} + ranking {ranking:.4f} + docno column {costs['docno_column']:.4f} "
              f"= {floor:.4f}")


def print_costs(costs: dict[str, float], depth: int, repeats: int) -> dict[str, float]:
    print(f"\ntoday's kernel, CPU s (least of {repeats}), the block of 8 points k1 1.2-1.5 x b: one point "
          f"{costs['one']:.4f}, 8 points {costs['eight']:.4f}, an extra point {costs['marginal']:.4f} = ranking "
          f"{costs['ranking']:.4f} (grid_floor sampled) + scoring {costs['scoring']:.4f}; a point's top {depth} "
          f"alone ({costs['reaching']:,.0f} reaching theta) ranked in {costs['fixed_ranking']:.4f}; a point's docno "
          f"column {costs['docno_column']:.4f}; load {os.getloadavg()[0]:.2f}")
    print(f"a posting {costs['per_posting'] * 1e9:.2f} ns, a candidate past the top {costs['per_candidate'] * 1e9:.2f} "
          f"ns")
    return costs

if __name__ == "__main__":
    main()
