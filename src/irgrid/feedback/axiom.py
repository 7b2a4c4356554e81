"""Axiomatic semantic term matching as query expansion (Ax): Anserini's ``AxiomReranker``.

Yang & Fang (ECIR 2013, "Reproducing and generalizing semantic term matching in axiomatic
information retrieval"), after Fang & Zhai (SIGIR 2006): a word is a good expansion of a query
word when their occurrences in a pool of documents share much information. Anserini's
``AxiomReranker`` (0.21, ``-axiom``), which this reproduces:

1. the pool: the first stage's top ``fb_docs`` (R) documents plus documents drawn at random from
   the whole collection until the pool holds R x ``ax_n`` (N) documents. The draw is
   ``java.util.Random(ax_seed)`` (:class:`JavaRandom`) picking positions in the collection sorted
   by docno (``-axiom.deterministic``; without it Anserini draws unseeded and each run differs);
2. the words of the pool's documents (2 or more letters a-z) and the set of documents each is in;
3. each query word q in the pool scores every pool word t: idf(q) qtf(q) for t = q, else
   idf(q) beta qtf(q) I(X_q; X_t) / I(X_q; X_q), with I the mutual information of the two
   words' presence over the pool's documents, idf(q) = ln(floor((N_docs + 1) / df(q)))
   (Java's integer division), beta = ``ax_beta``; each query word keeps its 1000 best words;
4. a word's weight is the sum of its scores over the query words divided by the query's length
   in tokens; the ``fb_terms`` (M) heaviest words, equal weights by the word, are the new query
   (the query's own words are among them only if they score high enough), each word's weight
   its boost.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

_f32 = np.float32
#: AxiomReranker.K: the words each query word passes on to the sum (fb_terms when more)
WORDS_PER_QUERY_WORD = 1000


class JavaRandom:
    """``java.util.Random``: the 48-bit linear congruential generator, and its ``nextInt(bound)``."""

    _MULTIPLIER, _ADDEND, _MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1

    def __init__(self, seed: int):
        self._seed = (int(seed) ^ self._MULTIPLIER) & self._MASK

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * self._MULTIPLIER + self._ADDEND) & self._MASK
        value = self._seed >> (48 - bits)
        return value - (1 << 32) if value >= 1 << 31 else value  # (int): a signed 32-bit value

    def next_int(self, bound: int) -> int:
        if bound & -bound == bound:  # a power of two
            return (bound * self._next(31)) >> 31
        while True:
            bits = self._next(31)
            value = bits % bound
            if bits - value + (bound - 1) < 1 << 31:  # no int overflow: an unbiased draw
                return value


def pool(top_docids: Sequence[int], docids_by_docno: np.ndarray, size: int, seed: int) -> set[int]:
    """AxiomReranker.selectDocs (deterministic): the top documents, then random ones up to ``size``."""
    chosen = {int(d) for d in top_docids}
    random = JavaRandom(seed)
    size = min(size, len(docids_by_docno))
    while len(chosen) < size:
        chosen.add(int(docids_by_docno[random.next_int(len(docids_by_docno))]))
    return chosen


def _mutual_information(x1: int, y1: np.ndarray, both: np.ndarray, total: int) -> np.ndarray:
    """AxiomReranker.computeMutualInformation of word x (in ``x1`` documents) with each word y (in
    ``y1``, ``both`` of them shared with x), in its float probabilities and double logarithms."""
    y1 = y1.astype(np.int64)
    both = both.astype(np.int64)
    x0, y0 = total - x1, total - y1
    n = _f32(total)
    p_x0, p_x1 = _f32(_f32(x0) / n), _f32(_f32(x1) / n)
    p_y0, p_y1 = (y0.astype(np.float32) / n).astype(np.float32), (y1.astype(np.float32) / n).astype(np.float32)
    cells = [  # (count, p(x), p(y)) of 00, 10, 01, 11, summed in Java's order m00 + m10 + m01 + m11
        (total - both - (x1 - both) - (y1 - both), p_x0, p_y0),
        (x1 - both, p_x1, p_y0),
        (y1 - both, p_x0, p_y1),
        (both, p_x1, p_y1),
    ]
    out = np.zeros(len(y1), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for count, p_x, p_y in cells:
            p_xy = (count.astype(np.float32) / n).astype(np.float32)
            ratio = (p_xy / (p_x * p_y).astype(np.float32)).astype(np.float32)
            part = p_xy.astype(np.float64) * np.log(ratio.astype(np.float64))
            out += np.where(p_xy != 0, part, 0.0)
    degenerate = (x1 == 0) | (x0 == 0) | (y1 == 0) | (y0 == 0)
    return np.where(degenerate, 0.0, out)


def pool_words(terms: Iterable[str]) -> list[str]:
    """AxiomReranker.extractTerms' filter: a document's distinct words of 2 or more letters a-z, sorted."""
    return sorted({w for w in terms if len(w) >= 2 and w.isascii() and w.isalpha() and w.islower()})


def anserini_axiom_query(query_tokens: Sequence[str], words_of: Mapping[int, Sequence[str]],
                         df: Mapping[str, int], num_docs: int, fb_terms: int, beta: float) -> dict[str, float]:
    """The expanded query of AxiomReranker (word -> boost) from the pool's documents' words
    (docid -> :func:`pool_words`)."""
    vocabulary = sorted({w for words in words_of.values() for w in words})
    column = {w: i for i, w in enumerate(vocabulary)}
    docs = [d for d, words in words_of.items() if words]  # docIdsCount: the documents with a kept word
    present = np.zeros((len(docs), len(vocabulary)), dtype=np.int8)
    for row, d in enumerate(docs):
        present[row, [column[w] for w in words_of[d]]] = 1
    in_docs = present.sum(axis=0, dtype=np.int64)
    counts: dict[str, int] = {}
    for token in query_tokens:
        counts[token] = counts.get(token, 0) + 1
    totals: dict[str, float] = {}
    order = np.array([w.lower() for w in vocabulary])
    for word, qtf in counts.items():
        if not df.get(word) or word not in column:
            continue
        idf = _f32(math.log((1 + num_docs) // df[word]))
        q = column[word]
        both = present[present[:, q] == 1].sum(axis=0, dtype=np.int64)  # documents holding both q and each word
        self_mi = float(_mutual_information(int(in_docs[q]), in_docs[q:q + 1], both[q:q + 1], len(docs))[0])
        cross = _mutual_information(int(in_docs[q]), in_docs, both, len(docs))
        with np.errstate(divide="ignore", invalid="ignore"):  # a query word in every pool document: I = 0
            scores = float(_f32(_f32(idf * _f32(beta)) * _f32(qtf))) * cross / self_mi
        scores[q] = float(_f32(idf * _f32(qtf)))
        # Double.compare ranks NaN above every number: a NaN takes a place among the 1000, then adds nothing
        best = np.lexsort((order, np.where(np.isnan(scores), -np.inf, -scores)))[:max(fb_terms, WORDS_PER_QUERY_WORD)]
        for i in best:
            if scores[i] > 1e-8:
                totals[vocabulary[i]] = totals.get(vocabulary[i], 0.0) + float(scores[i])
    length = len(query_tokens)
    ranked = sorted(totals.items(), key=lambda item: (-(item[1] / length), item[0].lower()))[:fb_terms]
    return {word: float(_f32(total / length)) for word, total in ranked}
