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
    Returns ``(candidates, candidate_offsets, slots)``: query ``q``'s
    candidates are ``candidates[candidate_offsets[q]:candidate_offsets[q+1]]``
    (in order of first occurrence in its postings), and posting ``p`` adds to
    candidate ``candidate_offsets[q] + slots[p]``.  O(postings): a dense
    docid -> slot map, reset after each query for the documents it touched.
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
            slots[p] = s
        for c in range(first, n):
            slot_of_doc[candidates[c]] = -1
        candidate_offsets[q + 1] = n
    return candidates[:n].copy(), candidate_offsets, slots


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
        if n > depth:
            threshold = -np.partition(-segment, depth - 1)[depth - 1]
            keep = np.flatnonzero(segment >= threshold)
        else:
            keep = np.arange(n)
        # docno order first, then a stable sort by score: (score desc, docno asc)
        keep = keep[np.argsort(docno_rank[candidates[lo + keep]], kind="mergesort")]
        keep = keep[np.argsort(-segment[keep], kind="mergesort")]
        m = offsets[q + 1] - offsets[q]
        for i in range(m):
            out_docids[offsets[q] + i] = candidates[lo + keep[i]]
            out_scores[offsets[q] + i] = segment[keep[i]]
    return out_docids, out_scores, offsets
