"""numba kernels of query evaluation: candidate sets and top-k selection for a whole query set.

Scoring itself stays in numpy, in each model's own ``term_scores``: the models
are written once, as formulas, and checked against the papers; these kernels
only do the bookkeeping that numpy cannot do without a sort per query.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def candidate_slots(docids, term_offsets, query_term_offsets, num_docs):
    """Each query's candidates (documents with at least one of its terms) and each posting's slot.

    The postings of term ``i`` are ``docids[term_offsets[i]:term_offsets[i+1]]``;
    query ``q``'s terms are ``query_term_offsets[q]:query_term_offsets[q+1]``.
    Returns ``(candidates, candidate_offsets, slots)``: query ``q``'s candidates
    are ``candidates[candidate_offsets[q]:candidate_offsets[q+1]]`` (in order of
    first occurrence in its postings) and posting ``p`` adds to candidate
    ``slots[p]`` (an index into ``candidates``).  O(postings): a dense
    docid -> slot map (int32: the smallest that fits, as its random accesses
    bound the pass), reset after each query for the documents it touched.
    """
    num_queries = len(query_term_offsets) - 1
    slot_of_doc = np.full(num_docs, -1, np.int32)
    slots = np.empty(len(docids), np.int32)
    candidates = np.empty(len(docids), np.int32)
    candidate_offsets = np.zeros(num_queries + 1, np.int64)
    n = 0
    for q in range(num_queries):
        first = n
        for p in range(term_offsets[query_term_offsets[q]], term_offsets[query_term_offsets[q + 1]]):
            d = docids[p]
            s = slot_of_doc[d]
            if s < 0:
                s = n - first
                slot_of_doc[d] = s
                candidates[n] = d
                n += 1
            slots[p] = first + s
        for c in range(first, n):
            slot_of_doc[candidates[c]] = -1
        candidate_offsets[q + 1] = n
    return candidates[:n].copy(), candidate_offsets, slots


@njit(cache=True, nogil=True, inline="always")
def _sift_down(heap, i, k):
    """Restore the min-heap property of ``heap[:k]`` below position ``i``."""
    while True:
        smallest = i
        left = 2 * i + 1
        if left < k and heap[left] < heap[smallest]:
            smallest = left
        if left + 1 < k and heap[left + 1] < heap[smallest]:
            smallest = left + 1
        if smallest == i:
            return
        heap[i], heap[smallest] = heap[smallest], heap[i]
        i = smallest


@njit(cache=True, nogil=True)
def kth_largest(values, k):
    """The k-th largest of ``values`` (1 <= k <= len): one pass with a min-heap of the k best."""
    heap = values[:k].copy()
    for start in range(k // 2 - 1, -1, -1):
        _sift_down(heap, start, k)
    for j in range(k, len(values)):
        if values[j] > heap[0]:
            heap[0] = values[j]
            _sift_down(heap, 0, k)
    return heap[0]


@njit(cache=True, nogil=True)
def top_k(scores, candidates, candidate_offsets, docno_rank, depth):
    """Each query's ``depth`` best candidates: score descending, ties by docno ascending.

    ``docno_rank[d]`` is document ``d``'s position in docno order.  Every
    candidate tied with the depth-th score takes part in the tie-break, so the
    cut is exact.  Returns ``(docids, scores, offsets)`` with query ``q``'s
    ranking at ``offsets[q]:offsets[q+1]``.
    """
    num_queries = len(candidate_offsets) - 1
    offsets = np.zeros(num_queries + 1, np.int64)
    for q in range(num_queries):
        offsets[q + 1] = offsets[q] + min(depth, candidate_offsets[q + 1] - candidate_offsets[q])
    out_docids = np.empty(offsets[num_queries], np.int32)
    out_scores = np.empty(offsets[num_queries], np.float64)
    for q in range(num_queries):
        lo = candidate_offsets[q]
        hi = candidate_offsets[q + 1]
        segment = scores[lo:hi]
        n = hi - lo
        if n == 0:
            continue
        if n > depth:
            keep = np.flatnonzero(segment >= kth_largest(segment, depth))
        else:
            keep = np.arange(n)
        kept_scores = segment[keep]
        order = np.argsort(-kept_scores)
        # equal scores: by docno (runs of ties are short; insertion sort)
        i = 0
        m = len(order)
        while i < m:
            j = i + 1
            while j < m and kept_scores[order[j]] == kept_scores[order[i]]:
                j += 1
            if j - i > 1:
                for a in range(i + 1, j):
                    item = order[a]
                    rank = docno_rank[candidates[lo + keep[item]]]
                    b = a - 1
                    while b >= i and docno_rank[candidates[lo + keep[order[b]]]] > rank:
                        order[b + 1] = order[b]
                        b -= 1
                    order[b + 1] = item
            i = j
        for r in range(offsets[q + 1] - offsets[q]):
            out_docids[offsets[q] + r] = candidates[lo + keep[order[r]]]
            out_scores[offsets[q] + r] = kept_scores[order[r]]
    return out_docids, out_scores, offsets
