"""The sentence-retrieval TF-IDF (Allan, Wade & Bolivar 2003): log(tf + 1) log((n + 1) / (0.5 + sf)) a posting."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .base import Weighting


def sentence_idf(sf: int, num_sentences: int) -> float:
    """log((n + 1) / (0.5 + sf)): positive for every sf <= n (a term in every sentence too), finite for sf = 0.

    A Python float from ``math.log``, so the numpy path and the fused kernel use the same number.
    """
    return math.log((num_sentences + 1.0) / (0.5 + sf))


@njit(cache=True, nogil=True, inline="always")
def sentence_tfidf_part(tf, doc_length, idf, params):
    """The sentence-retrieval TF-IDF of one posting: log(tf + 1) idf (Allan, Wade & Bolivar 2003)."""
    return math.log(tf + 1.0) * idf


def no_params(model, stats, point):
    return np.zeros(1, dtype=np.float64)


def sentence_term_constants(model, terms, stats, point):
    return np.array([sentence_idf(term.df, stats.num_docs) for term in terms], dtype=np.float64)


SENTENCE_TFIDF = Weighting("sentence_tfidf", sentence_tfidf_part, no_params, sentence_term_constants,
                           reads_length=False)
