"""numba kernels of query evaluation: candidate sets and top-k selection for a whole query set.

Scoring stays in each model's own ``term_scores`` (numpy) for most models; for
the models that name a ``weighting`` (BM25, Dirichlet query likelihood: the
ones grids are swept over most; the sentence-retrieval TF-IDF),
:func:`score_and_rank` scores and ranks each query in one pass over its
postings, calling the same declared scalar parts (:mod:`irgrid.models.parts`) as
the model's numpy methods.

The kernels' hot loops index through unsigned integers (positions in the postings, slots,
positions in a query's scores, docids): numba wraps a negative signed index around the array's
end, a compare and select at each access that it drops only where it can prove the index
non-negative (a range from zero, not an offset read from an array).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from ..aot.loader import guarded
from ..models.parts.base import posting_part
from .populated import populated_empty


def candidate_slots(docids, term_offsets, query_term_offsets, num_docs):
    """Each query's candidates (documents with at least one of its terms) and each posting's slot.

    The postings of term ``i`` are ``docids[term_offsets[i]:term_offsets[i+1]]``;
    query ``q``'s terms are ``query_term_offsets[q]:query_term_offsets[q+1]``.
    Returns ``(candidates, candidate_offsets, slots)``: query ``q``'s candidates
    are ``candidates[candidate_offsets[q]:candidate_offsets[q+1]]`` (in order of
    first occurrence in its postings) and posting ``p`` adds to candidate
    ``slots[p]`` (an index into ``candidates``). The two arrays the size of the
    postings are :func:`irgrid.retrieve.populated.populated_empty`'s (:func:`_candidate_slots_into`).
    """
    slots = populated_empty(len(docids), np.int32)
    candidates = populated_empty(len(docids), np.int32)
    candidate_offsets = aot_candidate_slots_into(docids, term_offsets, query_term_offsets, num_docs, slots, candidates)
    n = int(candidate_offsets[-1])
    # the buffer was sized for distinct postings; a copy of what was used costs a pass over fresh pages, so a
    # view is returned unless most of the buffer went unused (queries sharing many documents)
    if 4 * n < 3 * len(docids):
        return candidates[:n].copy(), candidate_offsets, slots
    return candidates[:n], candidate_offsets, slots


@njit(cache=True, nogil=True)
def _candidate_slots_into(docids, term_offsets, query_term_offsets, num_docs, slots, candidates):
    """:func:`candidate_slots` into ``slots`` and ``candidates`` (as long as ``docids``): the candidate offsets.

    O(postings): a dense docid -> slot map (int32: the smallest that fits, as its random accesses
    bound the pass). The map holds set-wide slots, which only grow from query to query: an entry
    below the query's first slot is an earlier query's, so the map is never reset (a second random
    access a candidate). A term's postings are distinct documents, so the query's first term's are
    all new candidates (no lookup), and its last term's are never looked up again (no map write).
    Every index is unsigned (postings, slots, docids below num_docs): numba wraps a negative signed
    index around the array's end, a compare and select at each access that cost the loop as much as
    the map's random accesses.
    """
    num_queries = len(query_term_offsets) - 1
    slot_of_doc = np.full(num_docs, -1, np.int32)
    candidate_offsets = np.zeros(num_queries + 1, np.int64)
    one = np.uint64(1)
    n = np.uint64(0)
    for q in range(num_queries):
        first = np.int32(n)
        first_term, end_term = query_term_offsets[q], query_term_offsets[q + 1]
        for i in range(first_term, end_term):
            remembered = i < end_term - 1
            start, stop = np.uint64(term_offsets[i]), np.uint64(term_offsets[i + 1])
            if i == first_term:
                for p in range(start, stop):
                    d = np.uint32(docids[p])
                    if remembered:
                        slot_of_doc[d] = np.int32(n)
                    candidates[n] = d
                    slots[p] = np.int32(n)
                    n += one
                continue
            for p in range(start, stop):
                d = np.uint32(docids[p])
                s = slot_of_doc[d]
                if s < first:  # not among this query's candidates yet
                    s = np.int32(n)
                    if remembered:
                        slot_of_doc[d] = s
                    candidates[n] = d
                    n += one
                slots[p] = s
        candidate_offsets[q + 1] = n
    return candidate_offsets


@njit(cache=True, nogil=True)
def kth_largest(values, k):
    """The k-th largest of ``values`` (1 <= k <= len): a selection (``np.partition``) on a copy.

    The value a full sort puts there; for the 1,000-4,000 candidates of a query too short to
    sample (an eighth of the synthetic set's), less than half the cost of a min-heap of the k best,
    whose every entering score is a mispredicted sift.
    """
    n = len(values)
    return np.partition(values.copy(), n - k)[n - k]


#: a segment longer than this many times the depth finds its threshold from a sample first
SAMPLE_WHEN_LONGER = 4
#: scores in the sample
SAMPLE_SIZE = 512


@njit(cache=True, nogil=True)
def best_positions(scores, depth):
    """Positions of a superset of the ``depth`` best scores: every score >= some threshold.

    The threshold is a high quantile of a strided sample of ``SAMPLE_SIZE``
    scores, chosen so that about 1.5 ``depth`` scores reach it (:func:`_sample_threshold`); one
    pass collects them (:func:`_collect_reaching`).  When fewer than ``depth`` reach it (an
    unlucky sample), or the segment is short, the threshold is the depth-th
    largest score itself (a selection over all scores).  Every score tied with the
    depth-th largest is always included, so the docno tie-break can be exact.
    """
    return _best_positions(scores, depth, np.empty(len(scores), np.int64))


@njit(cache=True, nogil=True)
def _best_positions(scores, depth, work):
    """:func:`best_positions` into ``work`` (at least ``len(scores)`` long, reused by the caller): a view of it."""
    n = len(scores)
    if n <= depth:
        for c in range(n):
            work[c] = c
        return work[:n]
    if n > SAMPLE_WHEN_LONGER * depth:
        count = _collect_reaching(scores, _sample_threshold(scores, depth), work)
        if count >= depth:
            return work[:count]
    return work[:_collect_reaching(scores, kth_largest(scores, depth), work)]


@njit(cache=True, nogil=True)
def _sample_threshold(scores, depth):
    """The sampled threshold of :func:`best_positions`: of a strided sample of ``SAMPLE_SIZE`` scores
    (``scores[::n // SAMPLE_SIZE][:SAMPLE_SIZE]``), the (a + 1)-th largest, ``a`` the sample's share of
    1.5 ``depth``.

    The value a selection over the sample gives, found by a sorted buffer of the a + 1 largest
    sampled scores: a is a few dozen, and past the first few sampled scores most are below the
    buffer's least, one comparison each; a selection (``np.partition``) of a copy of the sample cost
    more (benchmarks/HISTORY.md).
    """
    n = len(scores)
    step = max(1, n // SAMPLE_SIZE)
    size = min(SAMPLE_SIZE, (n + step - 1) // step)
    kept = min(int(1.5 * depth * size / n), size - 1) + 1
    stride = np.uint64(step)
    largest = np.empty(kept, np.float64)  # ascending: largest[0] is the least kept
    for i in range(np.uint64(kept)):
        largest[i] = scores[i * stride]
    largest.sort()
    for i in range(np.uint64(kept), np.uint64(size)):
        value = scores[i * stride]
        if value > largest[0]:
            j = 1
            while j < kept and largest[j] < value:
                largest[j - 1] = largest[j]
                j += 1
            largest[j - 1] = value
    return largest[0]


@njit(cache=True, nogil=True)
def _collect_reaching(scores, threshold, work):
    """The positions of the scores >= ``threshold``, ascending, into ``work``: their count.

    A word of 64 comparisons at a time (SIMD compares, no branch), then a write per set bit found
    by its trailing zeros: most words hold a few of the ~1.5 ``depth`` positions a sampled threshold
    keeps, so this costs less than a branch-free write of every position (benchmarks/HISTORY.md).
    """
    one = np.uint64(1)
    n = np.uint64(len(scores))
    count = np.uint64(0)
    whole = n - n % np.uint64(64)
    for start in range(np.uint64(0), whole, np.uint64(64)):
        reaching = np.uint64(0)
        for i in range(np.uint64(64)):
            reaching |= np.uint64(scores[start + i] >= threshold) << i
        while reaching:
            work[count] = start + trailing_zeros(reaching)
            count += one
            reaching &= reaching - one
    for c in range(whole, n):
        work[count] = c
        count += np.uint64(scores[c] >= threshold)
    return np.int64(count)


#: more items than this many times the depth, collected by a threshold, are cut at the depth-th before the sort
AT_DEPTH_WHEN_OVER = 2


@njit(cache=True, nogil=True)
def _at_depth(scores, positions, depth):
    """``positions`` cut to those whose score reaches the ``depth``-th largest among them (ties kept).

    The items past it cannot rank within ``depth``. Only for more than ``AT_DEPTH_WHEN_OVER``
    ``depth`` items (an unlucky sample, or many scores tied at the threshold): sorting the ~1.5
    ``depth`` a sampled threshold leaves costs less than this selection (benchmarks/HISTORY.md).
    """
    m = len(positions)
    if m <= AT_DEPTH_WHEN_OVER * depth:
        return positions
    values = np.empty(m, np.float64)
    for i in range(m):
        values[i] = scores[positions[i]]
    kth = np.partition(values, m - depth)[m - depth]
    count = 0
    for i in range(m):  # in place: an item is written at or before where it was read
        position = positions[i]
        positions[count] = position
        count += values[i] >= kth
    return positions[:count]


_SIGN = np.int64(-(2**63))
_MAGNITUDE = np.int64(2**63 - 1)


@njit(cache=True, nogil=True, inline="always")
def _item_bits(m):
    """``(shift, low)``: the low ``shift`` bits of a key, mask ``low``, hold an item's index among ``m``."""
    shift = 1
    while (1 << shift) < m:
        shift += 1
    return shift, (1 << shift) - 1


@njit(cache=True, nogil=True, inline="always")
def _item_key(score_bits, low, item):
    """The sort key of the item at ``item`` whose score's bits are ``score_bits``: the bits of -score (its
    sign flipped) as an int64 whose signed order is the float order, the item in the low bits."""
    key = score_bits ^ _SIGN
    if key < 0:
        key ^= _MAGNITUDE
    return (key & ~low) | item


#: bits of a key sorted per pass of :func:`_prefix_sorted_keys`
RADIX_BITS = 11
#: the highest varying bits of the score keys that the radix passes order by (two passes); the
#: insertion pass of :func:`sort_by_score_then_docno` orders the rare keys equal in these bits
PREFIX_BITS = 2 * RADIX_BITS


@njit(cache=True, nogil=True)
def _prefix_sorted_keys(keys, index_bits):
    """``keys`` (int64) ordered by their highest ``PREFIX_BITS`` bits that vary, above the low ``index_bits``.

    An LSD radix sort of ``RADIX_BITS`` a pass over those bits only: the keys of a query's best
    items share their high bits (close scores), and bits below the prefix tell apart only keys
    closer than 2**-PREFIX_BITS of the keys' spread, so two passes order all but a few keys, which the exact insertion
    pass of :func:`sort_by_score_then_docno` puts in place; the low ``index_bits`` (the item's
    index, which the caller writes in index order) are never sorted on. Keys equal in the sorted
    bits keep their input order (a stable sort), except below 64 keys, which are sorted in full.
    """
    m = len(keys)
    if m < 64:
        keys.sort()
        return keys
    radix = np.uint64(1 << RADIX_BITS)
    mask = radix - np.uint64(1)
    values = keys.view(np.uint64) ^ np.uint64(1 << 63)  # signed order as unsigned: flip the sign bit
    all_ones, any_ones = values[0], values[0]
    for i in range(m):
        all_ones &= values[i]
        any_ones |= values[i]
    varying = (all_ones ^ any_ones) >> np.uint64(index_bits)
    top = index_bits  # one past the highest varying bit
    while varying:
        varying >>= np.uint64(1)
        top += 1
    spare = np.empty(m, np.uint64)
    counts = np.empty(1 << RADIX_BITS, np.int64)
    shift = max(index_bits, top - PREFIX_BITS)
    while shift < top:
        counts[:] = 0
        for i in range(m):
            counts[(values[i] >> np.uint64(shift)) & mask] += 1
        total = 0
        for digit in range(1 << RADIX_BITS):
            count = counts[digit]
            counts[digit] = total
            total += count
        for i in range(m):  # stable: equal digits keep the order of the previous passes
            digit = (values[i] >> np.uint64(shift)) & mask
            spare[np.uint64(counts[digit])] = values[i]
            counts[digit] += 1
        values, spare = spare, values
        shift += RADIX_BITS
    return (values ^ np.uint64(1 << 63)).view(np.int64)


@njit(cache=True, nogil=True)
def sort_by_score_then_docno(scores, positions, candidates, docno_rank, candidate_ranks):
    """``positions`` ordered by score descending, ties by docno ascending (``scores`` contiguous).

    One integer sort of keys made of the negated score's order-preserving bits
    with the low bits replaced by the item's index (so a key carries its item),
    over the highest varying bits only (:func:`_prefix_sorted_keys`), then an
    insertion pass with the exact comparison, which only moves items within a
    run of keys equal in those bits: tied scores (many, for short queries and
    integer lengths: most neighbours in a query's best thousand) or scores equal
    but for their lowest bits. A docno rank is looked up only where a score
    ties with its predecessor's: a random access into a table of every document.
    Cheaper than an argsort of the floats and a tie-break.

    ``candidate_ranks``: empty, or the docno rank of each of ``candidates`` (aligned with ``scores``:
    ``docno_rank[candidates[c]]`` gathered once for a grid, ``Scorer.grid_layout``), read instead of
    the table of every document: a tie's lookup then stays within the query's segment.
    """
    m = len(positions)
    shift, low = _item_bits(m)
    item_bits = np.uint64(low)
    bits = scores.view(np.int64)
    keys = np.empty(m, np.int64)
    for i in range(m):
        keys[i] = _item_key(bits[np.uint64(positions[i])], low, i)
    keys = _prefix_sorted_keys(keys, shift)
    # each item's score, gathered once: the pass below compares them often
    order = np.empty(m, np.int64)
    item_scores = np.empty(m, np.float64)
    for i in range(m):
        position = np.uint64(positions[np.uint64(keys[i]) & item_bits])
        order[i] = position
        item_scores[i] = scores[position]
    # one loop a source of ranks: a branch on the source inside the loop doubled its cost
    if len(candidate_ranks):
        _insert_by_candidate_ranks(order, item_scores, candidate_ranks)
    else:
        _insert_by_docno_rank(order, item_scores, candidates, docno_rank)
    return order


@njit(cache=True, nogil=True, inline="always")
def _insert_by_docno_rank(order, item_scores, candidates, docno_rank):
    """The exact insertion pass of :func:`sort_by_score_then_docno`, ties' ranks from the table of every document."""
    for a in range(1, len(order)):
        position, score = order[a], item_scores[a]
        b = a - 1
        if item_scores[b] > score:  # in place already: the usual case
            continue
        rank = docno_rank[np.uint32(candidates[np.uint64(position)])]
        while b >= 0 and (item_scores[b] < score
                          or (item_scores[b] == score
                              and docno_rank[np.uint32(candidates[np.uint64(order[b])])] > rank)):
            order[b + 1], item_scores[b + 1] = order[b], item_scores[b]
            b -= 1
        order[b + 1], item_scores[b + 1] = position, score


@njit(cache=True, nogil=True, inline="always")
def _insert_by_candidate_ranks(order, item_scores, candidate_ranks):
    """The exact insertion pass of :func:`sort_by_score_then_docno`, ties' ranks from the segment's own."""
    for a in range(1, len(order)):
        position, score = order[a], item_scores[a]
        b = a - 1
        if item_scores[b] > score:  # in place already: the usual case
            continue
        rank = candidate_ranks[np.uint64(position)]
        while b >= 0 and (item_scores[b] < score
                          or (item_scores[b] == score and candidate_ranks[np.uint64(order[b])] > rank)):
            order[b + 1], item_scores[b + 1] = order[b], item_scores[b]
            b -= 1
        order[b + 1], item_scores[b + 1] = position, score


@njit(cache=True, nogil=True)
def _write_by_candidate_ranks(scores, positions, candidates, candidate_ranks, depth, out_docids, out_scores, out_at):
    """The first ``min(depth, len(positions))`` of ``positions`` in the order of
    :func:`sort_by_score_then_docno` (ties by ``candidate_ranks``), their docids and scores into
    ``out_*[out_at:]``.

    The same keys and passes as :func:`sort_by_score_then_docno`, but each collected item's rank and
    docid are read in the pass that makes the keys, where the positions ascend (``candidate_ranks``
    and ``candidates`` read in order), and travel with the item: neither the insertion pass's
    ties nor the output then read the query's arrays at random (benchmarks/HISTORY.md).
    """
    m = len(positions)
    shift, low = _item_bits(m)
    item_bits = np.uint64(low)
    bits = scores.view(np.int64)
    keys = np.empty(m, np.int64)
    ranks = np.empty(m, np.int32)
    docids = np.empty(m, np.int32)
    for i in range(m):
        position = np.uint64(positions[i])
        keys[i] = _item_key(bits[position], low, i)
        ranks[i] = candidate_ranks[position]
        docids[i] = candidates[position]
    keys = _prefix_sorted_keys(keys, shift)
    order = np.empty(m, np.int32)  # the items' docids, in order
    item_scores = np.empty(m, np.float64)
    item_ranks = np.empty(m, np.int32)
    for i in range(m):
        item = np.uint64(keys[i]) & item_bits
        order[i] = docids[item]
        item_scores[i] = scores[np.uint64(positions[item])]
        item_ranks[i] = ranks[item]
    _insert_with_ranks(order, item_scores, item_ranks)
    at = np.uint64(out_at)
    for r in range(np.uint64(min(depth, m))):
        out_docids[at + r] = order[r]
        out_scores[at + r] = item_scores[r]


@njit(cache=True, nogil=True, inline="always")
def _insert_with_ranks(order, item_scores, item_ranks):
    """The exact insertion pass of :func:`_write_by_candidate_ranks`: each item's rank beside its score."""
    for a in range(1, len(order)):
        score = item_scores[a]
        b = a - 1
        if item_scores[b] > score:  # in place already: the usual case
            continue
        item, rank = order[a], item_ranks[a]
        while b >= 0 and (item_scores[b] < score or (item_scores[b] == score and item_ranks[b] > rank)):
            order[b + 1], item_scores[b + 1], item_ranks[b + 1] = order[b], item_scores[b], item_ranks[b]
            b -= 1
        order[b + 1], item_scores[b + 1], item_ranks[b + 1] = item, score, rank


@njit(cache=True, nogil=True)
def _rank_segment(scores, candidates, docno_rank, depth, out_docids, out_scores, out_at, work, candidate_ranks):
    """The ``min(depth, n)`` best of ``scores`` (candidates ``candidates``) into ``out_*[out_at:]``.

    Score descending, ties by docno ascending (``docno_rank[d]``: document
    ``d``'s position in docno order, distinct for every document).  ``work``: an
    int64 buffer at least ``len(scores)`` long. ``candidate_ranks``: empty, or ``docno_rank[candidates]``
    (:func:`sort_by_score_then_docno`).
    """
    positions = _at_depth(scores, _best_positions(scores, depth, work), depth)
    if len(candidate_ranks):
        _write_by_candidate_ranks(scores, positions, candidates, candidate_ranks, depth, out_docids, out_scores, out_at)
        return
    order = sort_by_score_then_docno(scores, positions, candidates, docno_rank, candidate_ranks)
    at = np.uint64(out_at)
    for r in range(np.uint64(min(depth, len(scores)))):
        position = np.uint64(order[r])
        out_docids[at + r] = candidates[position]
        out_scores[at + r] = scores[position]


@njit(cache=True, nogil=True)
def _result_offsets(candidate_offsets, first_query, last_query, depth):
    """``(offsets, most)``: where each of queries ``first_query:last_query``'s ``min(depth, candidates)`` rows
    start in a ranking of them, their total last; the most candidates of a query."""
    offsets = np.zeros(last_query - first_query + 1, np.int64)
    most = 0
    for q in range(first_query, last_query):
        n = candidate_offsets[q + 1] - candidate_offsets[q]
        offsets[q - first_query + 1] = offsets[q - first_query] + min(depth, n)
        most = max(most, n)
    return offsets, most


@njit(cache=True, nogil=True)
def top_k(scores, candidates, candidate_offsets, docno_rank, depth):
    """Each query's ``depth`` best candidates: score descending, ties by docno ascending.

    ``docno_rank[d]`` is document ``d``'s position in docno order.  Every
    candidate tied with the depth-th score takes part in the tie-break, so the
    cut is exact.  Returns ``(docids, scores, offsets)`` with query ``q``'s
    ranking at ``offsets[q]:offsets[q+1]``.
    """
    num_queries = len(candidate_offsets) - 1
    offsets, most = _result_offsets(candidate_offsets, 0, num_queries, depth)
    out_docids = np.empty(offsets[num_queries], np.int32)
    out_scores = np.empty(offsets[num_queries], np.float64)
    work = np.empty(most, np.int64)
    no_ranks = np.zeros(0, np.int32)  # ties look their docno ranks up in docno_rank
    for q in range(num_queries):
        lo = candidate_offsets[q]
        hi = candidate_offsets[q + 1]
        _rank_segment(scores[lo:hi], candidates[lo:hi], docno_rank, depth, out_docids, out_scores, offsets[q], work,
                      no_ranks)
    return out_docids, out_scores, offsets


def result_offsets(candidate_offsets, first_query, last_query, depth) -> np.ndarray:
    """Where each of queries ``first_query:last_query``'s ranking starts in :func:`score_and_rank`'s
    outputs (``min(depth, candidates)`` rows a query), their total last.

    The same integers as the kernels' :func:`_result_offsets`, in numpy: a call from Python to a JIT
    kernel would start numba in a process whose other kernels come from the ahead-of-time module
    (:mod:`irgrid.aot`)."""
    counts = np.diff(np.asarray(candidate_offsets[first_query:last_query + 1], dtype=np.int64))
    offsets = np.zeros(last_query - first_query + 1, np.int64)
    np.cumsum(np.minimum(counts, depth), out=offsets[1:])
    return offsets


#: postings of a term whose parts :func:`score_and_rank` computes before adding them to the candidates
POSTINGS_CHUNK = 512


# error_model="numpy": a float division by zero gives inf instead of raising, so the division needs no
# check and the loop over a chunk's postings becomes SIMD divisions (the same IEEE quotients: a
# divisor is never zero for a model's parameters and a non-empty collection)
@njit(cache=True, nogil=True, error_model="numpy")
def score_and_rank(weighting, tabulated, params, term_constants, term_weights, query_constants, query_lengths, query_weights,
                   term_offsets, query_term_offsets, tfs, docids, doc_lengths, slots, candidates, candidate_offsets,
                   docno_rank, depth, first_query, last_query, posting_parts, document_values, candidate_ranks,
                   posting_lengths, offsets, out_docids, out_scores):
    """Score and rank queries ``first_query:last_query`` of a prepared set for a block of P points, one pass each.

    Point ``j``'s inputs are row ``j`` of ``params`` (P, per model), ``term_constants`` and
    ``term_weights`` (P, terms), ``query_constants``, ``query_lengths`` and ``query_weights``
    (P, queries): what the model's ``kernel_inputs`` gives for that point.  Each posting's slot,
    tf and length are read once for the whole block, a chunk of them at a time, and each point's
    ``weight * part`` of the chunk is added to the point's row of the query's block (P rows of
    its candidates' scores, in cache for a few points: the caller cuts a grid into blocks).

    ``weighting`` is the ``kernel_key`` of a registered :class:`irgrid.models.parts.base.Weighting`,
    taken as a numba literal: the kernel is compiled (and cached) once per weighting, its
    per-posting part (:func:`~irgrid.models.parts.base.posting_part`) inlined.

    A chunk's document lengths (for a part that reads them) are gathered once for the block's points, from the int32
    ``doc_lengths`` (every document's, in docid order) through the postings' ``docids``; a length
    is an integer, so its float64 is the one the numpy path uses. Gathering them for the whole
    query set ahead of the kernel cost an array of 8 bytes a posting whose fresh pages took longer
    to fault in than a point's scoring; the gather here costs a few nanoseconds a posting and block
    instead (benchmarks/HISTORY.md).
    Each point's scores are
    added in posting order from zero, then the per-document part and the query weight are
    applied, exactly as ``Scorer.score`` and ``RetrievalModel.complete_scores`` do, so the
    numbers are the same to the last bit, whatever the block.  Returns ``(docids, scores,
    offsets)``: point ``j``'s ranking of query ``first_query + i`` is at
    ``docids[j, offsets[i]:offsets[i+1]]`` (every point ranks min(depth, candidates) a query).
    The caller may pass them: ``offsets`` as :func:`result_offsets` gives them and outputs of
    (P, ``offsets[-1]``) whose pages it mapped at once
    (:func:`irgrid.retrieve.populated.populated_empty`: a block's rankings are tens of MB); or
    empty arrays, and the kernel allocates them.

    For a ``tabulated`` weighting (a part that reads no length: Dirichlet's, the sentence
    TF-IDF's), ``posting_parts`` holds each posting's part, computed once for the block's
    shared params and term constants by the same scalar function
    (:func:`irgrid.models.parts.base.tabulated_posting_parts`); else it is empty and each
    point's part is computed here. For a weighting with a per-document part,
    ``document_values`` holds its value for each candidate
    (:func:`~irgrid.models.parts.base.candidate_document_values`: Dirichlet's log(|D| + mu)) and each
    score adds ``query_constant - query_length * value``; else it is empty. A grid at one mu
    then costs a multiply-add per posting and candidate.

    A grid of several blocks takes two arrays gathered once for the query set (empty arrays otherwise):
    ``candidate_ranks``, the docno rank of each of ``candidates`` (``Scorer.grid_layout``), which
    the tie-break then reads instead of ``docno_rank``; and ``posting_lengths``, each
    posting's document length (int32, ``doc_lengths[docids]``), read in order instead of gathered
    through the docids for every block. The same integers either way, so the same scores.

    Positions in the postings and the block's slots are unsigned (the module's note on indices).
    """
    num_points = params.shape[0]
    most = 0
    for q in range(first_query, last_query):
        most = max(most, candidate_offsets[q + 1] - candidate_offsets[q])
    if len(offsets) == 0:  # small outputs: allocated here (a call from Python to map them costs more)
        offsets = _result_offsets(candidate_offsets, first_query, last_query, depth)[0]
        out_docids = np.empty((num_points, offsets[-1]), np.int32)
        out_scores = np.empty((num_points, offsets[-1]), np.float64)
    block = np.empty(most * num_points, np.float64)
    work = np.empty(most, np.int64)
    # a chunk of one term's postings, each point's weight * part in a row of its own: computed over the
    # postings (contiguous tfs and lengths: SIMD divisions, the bulk of BM25's cost), then added to the
    # point's row of the block (point-major: each point's scores are contiguous for its ranking)
    parts = np.empty(num_points * POSTINGS_CHUNK, np.float64)
    lengths = np.empty(POSTINGS_CHUNK, np.float64)
    chunk_size = np.uint64(POSTINGS_CHUNK)
    for q in range(first_query, last_query):
        lo = candidate_offsets[q]
        n = candidate_offsets[q + 1] - lo
        first_slot = np.uint64(lo)
        block[:n * num_points] = 0.0
        for i in range(query_term_offsets[q], query_term_offsets[q + 1]):
            end = np.uint64(term_offsets[i + 1])
            for start in range(np.uint64(term_offsets[i]), end, chunk_size):
                m = min(chunk_size, end - start)
                if not tabulated and len(posting_lengths):  # gathered once for the grid: read in order
                    for t in range(m):
                        lengths[t] = np.float64(posting_lengths[start + t])
                elif not tabulated:
                    for t in range(m):
                        lengths[t] = np.float64(doc_lengths[np.uint32(docids[start + t])])
                for j in range(num_points):
                    row = parts[j * POSTINGS_CHUNK:j * POSTINGS_CHUNK + m]
                    constant, weight = term_constants[j, i], term_weights[j, i]
                    if tabulated:  # posting(tf, constant), computed once for the block
                        for t in range(m):
                            row[t] = weight * posting_parts[start + t]
                    else:
                        point = params[j]
                        for t in range(m):
                            row[t] = weight * posting_part(weighting, np.float64(tfs[start + t]), lengths[t], constant, point)
                for j in range(num_points):
                    row = block[j * n:(j + 1) * n]
                    chunk = parts[j * POSTINGS_CHUNK:j * POSTINGS_CHUNK + m]
                    for t in range(m):
                        row[np.uint64(slots[start + t]) - first_slot] += chunk[t]
        for j in range(num_points):
            scores = block[j * n:(j + 1) * n]
            if len(document_values):
                constant, length = query_constants[j, q], query_lengths[j, q]
                for c in range(np.uint64(n)):
                    # constant - length * document(|D|, params), its value computed once for the block
                    scores[c] += constant - length * document_values[first_slot + c]
            weight = query_weights[j, q]
            if weight != 1.0:
                for c in range(n):
                    scores[c] *= weight
            ranks = candidate_ranks[lo:lo + n] if len(candidate_ranks) else candidate_ranks
            _rank_segment(scores, candidates[lo:lo + n], docno_rank, depth, out_docids[j], out_scores[j],
                          offsets[q - first_query], work, ranks)
    return out_docids, out_scores, offsets


#: _candidate_slots_into and score_and_rank as candidate_slots and the Scorer call them: the ahead-of-time module's
#: when it is built and fresh and the arguments are of its types (score_and_rank: at a key it was built for), else
#: the JIT's (irgrid.aot.loader.guarded)
aot_candidate_slots_into = guarded("candidate_slots_into", _candidate_slots_into)
aot_score_and_rank = guarded("score_and_rank", score_and_rank)
