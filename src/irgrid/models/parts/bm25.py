"""BM25 with Lucene's idf: idf tf / (tf + k1 (1 - b + b |D| / avgdl)), no per-document part."""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import Weighting


def lucene_idf(df: int | np.ndarray, num_docs: int) -> np.ndarray:
    """Lucene's BM25 idf, log(1 + (N - df + 0.5) / (df + 0.5)): never negative."""
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((num_docs - df + 0.5) / (df + 0.5))


# error_model="numpy": a division by zero gives inf instead of raising (a divisor is never zero for a
# model's parameters and a non-empty collection), so the kernel's loop over a chunk of postings
# becomes SIMD divisions, the same IEEE quotients
@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def bm25_part(tf, doc_length, idf, params):
    """Lucene-form BM25 of one posting: idf tf / (tf + k1 (1 - b + b |D| / avgdl)), params (k1, b, avgdl)."""
    return idf * tf / (tf + params[0] * (1.0 - params[1] + params[1] * doc_length / params[2]))


def bm25_params(model, stats, point):
    return np.array([point["k1"], point["b"], stats.avg_doc_length], dtype=np.float64)


def bm25_term_constants(model, terms, stats, point):
    # the ufunc over all terms at once gives each term the value lucene_idf(df) gives alone
    return lucene_idf(np.array([term.df for term in terms], dtype=np.float64), stats.num_docs)


BM25 = Weighting("bm25", bm25_part, bm25_params, bm25_term_constants)
