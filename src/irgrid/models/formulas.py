"""Per-posting score formulas shared by the models' numpy methods and the fused kernels.

A formula that the fused query-set kernel (:func:`irgrid.ranking.score_and_rank`)
evaluates per posting is written once here, as a scalar numba function; the
model's ``term_scores`` / ``document_scores`` apply the same function over
arrays (the ``*_array`` loops).  Both paths therefore run the same machine
code and give the same numbers to the last bit: numpy's vectorised ``log1p``
(SIMD) and the C library's differ in the last place for some inputs, so a
formula with a logarithm cannot be written once in numpy and once in numba.

The kernel codes name which formula the fused kernel applies.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

NO_KERNEL = 0
BM25_KERNEL = 1
DIRICHLET_KERNEL = 2
SENTENCE_TFIDF_KERNEL = 3


@njit(cache=True, nogil=True, inline="always")
def bm25_part(tf, doc_length, idf, k1, b, avg_doc_length):
    """Lucene-form BM25 of one posting: idf tf / (tf + k1 (1 - b + b |D| / avgdl))."""
    return idf * tf / (tf + k1 * (1.0 - b + b * doc_length / avg_doc_length))


@njit(cache=True, nogil=True)
def bm25_part_array(tfs, doc_lengths, idf, k1, b, avg_doc_length):
    out = np.empty(len(tfs), np.float64)
    for i in range(len(tfs)):
        out[i] = bm25_part(np.float64(tfs[i]), np.float64(doc_lengths[i]), idf, k1, b, avg_doc_length)
    return out


@njit(cache=True, nogil=True, inline="always")
def dirichlet_part(tf, mu_collection_prob):
    """The matched-term part of Dirichlet query likelihood: log(1 + tf / (mu p(t|C)))."""
    return math.log1p(tf / mu_collection_prob)


@njit(cache=True, nogil=True)
def dirichlet_part_array(tfs, mu_collection_prob):
    out = np.empty(len(tfs), np.float64)
    for i in range(len(tfs)):
        out[i] = dirichlet_part(np.float64(tfs[i]), mu_collection_prob)
    return out


@njit(cache=True, nogil=True, inline="always")
def dirichlet_document(doc_length, mu, query_constant, query_length):
    """The per-document part: sum_t qtf log(mu p(t|C)) - |q| log(|D| + mu)."""
    return query_constant - query_length * math.log(doc_length + mu)


@njit(cache=True, nogil=True)
def dirichlet_document_array(doc_lengths, mu, query_constant, query_length):
    out = np.empty(len(doc_lengths), np.float64)
    for i in range(len(doc_lengths)):
        out[i] = dirichlet_document(np.float64(doc_lengths[i]), mu, query_constant, query_length)
    return out


@njit(cache=True, nogil=True, inline="always")
def sentence_tfidf_part(tf, idf):
    """The sentence-retrieval TF-IDF of one posting: log(tf + 1) idf (Allan, Wade & Bolivar 2003)."""
    return math.log(tf + 1.0) * idf


@njit(cache=True, nogil=True)
def sentence_tfidf_part_array(tfs, idf):
    out = np.empty(len(tfs), np.float64)
    for i in range(len(tfs)):
        out[i] = sentence_tfidf_part(np.float64(tfs[i]), idf)
    return out


#: a term gets a table of its parts when it has at least this many postings per table entry
TABLE_POSTINGS_PER_ENTRY = 4


@njit(cache=True, nogil=True)
def dirichlet_posting_parts(tfs, term_constants, term_offsets, out):
    """:func:`dirichlet_part` of every posting (term ``i``'s at ``term_offsets[i]:term_offsets[i+1]``).

    They depend on mu alone: a grid over other parameters at one mu (SDM's lambdas)
    computes them once instead of once a point.

    A term's tfs are small integers repeated over its postings (a character of a Chinese
    collection has tens of thousands of postings with tfs below 30), so a term with many postings
    for its largest tf gets a table of its parts, one log1p per distinct tf value up to that
    largest, and each posting a lookup: the table holds the values the scalar function gives, so
    the parts are the same to the last bit. On a large query set (DRCD's phrase families) the
    log1p of every posting was a large share of a retrieval job.

    ``out``: a float64 array as long as ``tfs`` to write them into (and returned): a grid's
    next mu reuses the previous mu's array (as large as the query set's postings) instead of a new one.
    """
    table = np.empty(0, np.float64)
    for i in range(len(term_constants)):
        constant = term_constants[i]
        lo, hi = term_offsets[i], term_offsets[i + 1]
        largest = 0
        for p in range(lo, hi):
            largest = max(largest, np.int64(tfs[p]))
        if largest < (hi - lo) // TABLE_POSTINGS_PER_ENTRY:
            if len(table) <= largest:
                table = np.empty(largest + 1, np.float64)
            for tf in range(largest + 1):
                table[tf] = dirichlet_part(np.float64(tf), constant)
            for p in range(lo, hi):
                out[p] = table[tfs[p]]
        else:
            for p in range(lo, hi):
                out[p] = dirichlet_part(np.float64(tfs[p]), constant)
    return out


@njit(cache=True, nogil=True)
def shifted_logs(doc_lengths, mu, out):
    """log(|D| + mu) of each length, exactly as :func:`dirichlet_document` computes it, into ``out`` (returned)."""
    for i in range(len(doc_lengths)):
        out[i] = math.log(np.float64(doc_lengths[i]) + mu)
    return out


def as_float_array(values) -> tuple[np.ndarray, tuple[int, ...]]:
    """``values`` as a flat contiguous float64 array, and the shape to give the result back."""
    array = np.asarray(values, dtype=np.float64)
    return np.ascontiguousarray(array.reshape(-1)), array.shape
