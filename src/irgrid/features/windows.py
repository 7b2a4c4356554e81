"""Window postings: how often a window feature matches in each document, from the stored positions.

The counting rules are Galago's (``OrderedWindowIterator``/``UnorderedWindowIterator``,
which follow Indri's ``#odN``/``#uwN``); docs/models.md ("Window features") sets
them beside Indri's documentation and works examples by hand.  Positions are the
index's token positions: a removed stop word leaves a gap (as in Lucene), so
``#1(a b)`` does not match ``a of b`` even when ``of`` is not indexed.

``#odN(t1 ... tk)`` (``#1`` is ``#od1``)
    For each occurrence of ``t1``, in order: take for every next term its first
    occurrence after the previous term's; the window matches when each such step
    is at most N positions.  Only ``t1``'s occurrences are consumed: the others
    may serve several matches (``#1(a a)`` matches twice in ``a a a``).

``#uwN(t1 ... tk)``
    One occurrence of each term is current, starting with the first ones.  While
    every term has a current occurrence: if the current occurrences span at most N
    positions (last - first + 1 <= N), that is a match; then every current
    occurrence at the earliest position moves to its next (several only when a term
    is repeated).  So overlapping windows count (``#uw2(a b)`` matches twice in
    ``a b a``).

A document's count is the number of matches; the feature's df and cf are then
those of its postings, computed over the whole collection.  The documents are
found first by intersecting the terms' docids (a linear merge); only
documents holding every term have their positions compared.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .query import ORDERED, UNORDERED, Feature

ORDERED_CODE = 0
UNORDERED_CODE = 1


class PositionalPostings(NamedTuple):
    """Several terms' postings with positions, concatenated.

    Term ``t``'s postings are rows ``spans[t][0]:spans[t][1]`` of ``docids``/``tfs``;
    row ``p``'s positions are ``positions[offsets[p]:offsets[p+1]]`` (ascending).
    """

    spans: dict[str, tuple[int, int]]
    docids: np.ndarray     # int32, ascending within a term
    tfs: np.ndarray        # int32
    offsets: np.ndarray    # int64, len(docids) + 1
    positions: np.ndarray  # int32

    @classmethod
    def from_lists(cls, lists: dict[str, tuple[np.ndarray, list[np.ndarray]]]) -> PositionalPostings:
        """From ``term -> (docids, [positions of each posting])`` (small inputs: tests, toy indexes)."""
        spans, docids, positions, lengths = {}, [], [], []
        row = 0
        for word, (ids, per_posting) in lists.items():
            spans[word] = (row, row + len(ids))
            row += len(ids)
            docids.append(np.asarray(ids, dtype=np.int32))
            positions.extend(np.asarray(p, dtype=np.int32) for p in per_posting)
            lengths.extend(len(p) for p in per_posting)
        offsets = np.zeros(row + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        empty = np.zeros(0, np.int32)
        return cls(spans, np.concatenate(docids) if docids else empty,
                   np.asarray(lengths, dtype=np.int32), offsets,
                   np.concatenate(positions) if positions else empty)


class WindowPostings(NamedTuple):
    docids: np.ndarray  # int32, ascending
    counts: np.ndarray  # int32, >= 1

    @property
    def df(self) -> int:
        return len(self.docids)

    @property
    def cf(self) -> int:
        return int(self.counts.sum(dtype=np.int64))


@njit(cache=True, nogil=True)
def count_ordered(positions, starts, ends, width, overlapping):
    """Matches of an ordered window in one document; term ``j``'s positions are ``positions[starts[j]:ends[j]]``.

    ``overlapping`` False keeps only matches that begin at or after the end of the last one
    kept (Indri's ``ListBeliefNode::_documentOccurrences``); True counts every match (Galago).
    """
    k = len(starts)
    index = starts.copy()
    count = 0
    last_end = -1
    while True:
        valid = True
        for j in range(1, k):
            previous_end = positions[index[j - 1]] + 1
            while positions[index[j]] < previous_end:
                index[j] += 1
                if index[j] >= ends[j]:
                    return count  # no later occurrence of term j: no more windows
            if positions[index[j]] - previous_end >= width:
                valid = False
                break
        if valid and (overlapping or positions[index[0]] >= last_end):
            count += 1
            last_end = positions[index[k - 1]] + 1
        index[0] += 1
        if index[0] >= ends[0]:
            return count


@njit(cache=True, nogil=True)
def count_unordered(positions, starts, ends, width, overlapping):
    """Matches of an unordered window in one document (arguments as :func:`count_ordered`)."""
    k = len(starts)
    index = starts.copy()
    count = 0
    last_end = -1
    while True:
        first = positions[index[0]]
        last = first
        for j in range(1, k):
            position = positions[index[j]]
            first = min(first, position)
            last = max(last, position)
        if last + 1 - first <= width and (overlapping or first >= last_end):
            count += 1
            last_end = last + 1
        # every term at the earliest position moves on (several only when a term is repeated)
        for j in range(k):
            if positions[index[j]] == first:
                index[j] += 1
                if index[j] >= ends[j]:
                    return count


@njit(cache=True, nogil=True)
def window_counts(kind, width, docids, offsets, positions, term_lo, term_hi, overlapping):
    """``(docids, counts)`` of a window over k terms whose postings are concatenated.

    Term ``j``'s postings are ``docids[term_lo[j]:term_hi[j]]``, posting ``p``'s
    positions ``positions[offsets[p]:offsets[p+1]]``.  The rarest term drives the
    docid intersection; the others advance by a linear merge.
    """
    k = len(term_lo)
    driver = 0
    for j in range(1, k):
        if term_hi[j] - term_lo[j] < term_hi[driver] - term_lo[driver]:
            driver = j
    most = term_hi[driver] - term_lo[driver]
    out_docids = np.empty(most, np.int32)
    out_counts = np.empty(most, np.int32)
    pointer = term_lo.copy()
    starts = np.empty(k, np.int64)
    ends = np.empty(k, np.int64)
    n = 0
    for p in range(term_lo[driver], term_hi[driver]):
        d = docids[p]
        everywhere = True
        for j in range(k):
            if j == driver:
                continue
            while pointer[j] < term_hi[j] and docids[pointer[j]] < d:
                pointer[j] += 1
            if pointer[j] >= term_hi[j]:
                return out_docids[:n].copy(), out_counts[:n].copy()
            if docids[pointer[j]] != d:
                everywhere = False
                break
        if not everywhere:
            continue
        for j in range(k):
            q = p if j == driver else pointer[j]
            starts[j] = offsets[q]
            ends[j] = offsets[q + 1]
        if kind == ORDERED_CODE:
            c = count_ordered(positions, starts, ends, width, overlapping)
        else:
            c = count_unordered(positions, starts, ends, width, overlapping)
        if c > 0:
            out_docids[n] = d
            out_counts[n] = c
            n += 1
    return out_docids[:n].copy(), out_counts[:n].copy()


@njit(cache=True, nogil=True)
def many_window_counts(kinds, widths, feature_offsets, feature_lo, feature_hi, docids, offsets, positions, overlapping):
    """:func:`window_counts` for many windows in one call: window ``w``'s terms are rows
    ``feature_lo[i]:feature_hi[i]`` for ``i`` in ``feature_offsets[w]:feature_offsets[w+1]``.

    Returns ``(docids, counts, result_offsets)``: window ``w``'s postings at
    ``result_offsets[w]:result_offsets[w+1]``.  (A query set of verbose queries has
    hundreds of thousands of windows: one call each would cost more than the counting.)
    """
    num = len(kinds)
    parts_docids = []
    parts_counts = []
    result_offsets = np.zeros(num + 1, np.int64)
    for w in range(num):
        lo = feature_offsets[w]
        hi = feature_offsets[w + 1]
        found_docids, found_counts = window_counts(kinds[w], widths[w], docids, offsets, positions, feature_lo[lo:hi],
                                                   feature_hi[lo:hi], overlapping)
        parts_docids.append(found_docids)
        parts_counts.append(found_counts)
        result_offsets[w + 1] = result_offsets[w] + len(found_docids)
    out_docids = np.empty(result_offsets[num], np.int32)
    out_counts = np.empty(result_offsets[num], np.int32)
    for w in range(num):
        out_docids[result_offsets[w]:result_offsets[w + 1]] = parts_docids[w]
        out_counts[result_offsets[w]:result_offsets[w + 1]] = parts_counts[w]
    return out_docids, out_counts, result_offsets


_EMPTY = WindowPostings(np.zeros(0, np.int32), np.zeros(0, np.int32))


def many_window_postings(features: list[Feature], postings: PositionalPostings, overlapping: bool = True
                         ) -> list[WindowPostings]:
    """:func:`window_postings` of each of ``features`` (windows), counted in one numba call."""
    runnable = [i for i, f in enumerate(features)
                if all(postings.spans.get(word, (0, 0))[1] > postings.spans.get(word, (0, 0))[0] for word in f.terms)]
    out = [_EMPTY] * len(features)
    if not runnable:
        return out
    chosen = [features[i] for i in runnable]
    kinds = np.array([ORDERED_CODE if f.op == ORDERED else UNORDERED_CODE for f in chosen], dtype=np.int64)
    widths = np.array([f.width for f in chosen], dtype=np.int64)
    feature_offsets = np.zeros(len(chosen) + 1, dtype=np.int64)
    np.cumsum([len(f.terms) for f in chosen], out=feature_offsets[1:])
    spans = [postings.spans[word] for f in chosen for word in f.terms]
    feature_lo = np.array([lo for lo, _ in spans], dtype=np.int64)
    feature_hi = np.array([hi for _, hi in spans], dtype=np.int64)
    docids, counts, result_offsets = many_window_counts(kinds, widths, feature_offsets, feature_lo, feature_hi,
                                                        postings.docids, postings.offsets, postings.positions,
                                                        bool(overlapping))
    bounds = result_offsets.tolist()
    for j, i in enumerate(runnable):
        out[i] = WindowPostings(docids[bounds[j]:bounds[j + 1]], counts[bounds[j]:bounds[j + 1]])
    return out


def window_postings(feature: Feature, postings: PositionalPostings, overlapping: bool = True) -> WindowPostings:
    """The postings of a window feature, from its terms' positional postings (a term absent: none).

    ``overlapping``: count every match (Galago's iterators) or only matches that do not overlap a
    match counted before them, scanning left to right (Indri's belief nodes).
    """
    if feature.op not in (ORDERED, UNORDERED):
        raise ValueError(f"{feature} is not a window")
    spans = [postings.spans.get(word) for word in feature.terms]
    if any(span is None or span[0] == span[1] for span in spans):
        return _EMPTY
    # a repeated term (#1(a a)) names the same rows twice: each copy gets its own cursor
    term_lo = np.array([lo for lo, _ in spans], dtype=np.int64)
    term_hi = np.array([hi for _, hi in spans], dtype=np.int64)
    kind = ORDERED_CODE if feature.op == ORDERED else UNORDERED_CODE
    docids, counts = window_counts(kind, feature.width, postings.docids, postings.offsets, postings.positions,
                                   term_lo, term_hi, bool(overlapping))
    return WindowPostings(docids, counts)
