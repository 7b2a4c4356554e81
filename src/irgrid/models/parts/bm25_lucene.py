"""BM25 as Lucene 9 scores it: :mod:`.bm25`'s part over the length Lucene's one-byte norm decodes to."""

from __future__ import annotations

from numba import njit

from .base import Weighting
from .bm25 import bm25_params, bm25_term_constants

# Lucene's SmallFloat.intToByte4 / byte4ToInt (irgrid.models.lucene: the reference port, checked
# against Lucene's own; tests/test_lucene_models.py checks this one against it on every length
# up to 200,000): lengths below NUM_FREE_VALUES are stored exactly, longer ones with 4
# significant bits
_NUM_FREE_VALUES = 24


@njit(cache=True, nogil=True, inline="always")
def lucene_norm_length(length):
    """The length Lucene scores a field of ``length`` tokens with (its norm byte decoded), as a float."""
    n = int(length)
    if n < _NUM_FREE_VALUES:
        return float(n)
    value = n - _NUM_FREE_VALUES
    bits = 0
    while (value >> bits) != 0:
        bits += 1
    if bits < 4:
        return float(n)  # the free values' subnormal range: stored exactly
    shift = bits - 4
    return float(_NUM_FREE_VALUES + ((((value >> shift) & 0x07) | 0x08) << shift))


# error_model="numpy": as bm25_part, a division by zero gives inf instead of raising
@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def bm25_lucene_part(tf, doc_length, idf, params):
    """Lucene BM25 of one posting: idf tf / (tf + k1 (1 - b + b L(|D|) / avgdl)), params (k1, b, avgdl)."""
    return idf * tf / (tf + params[0] * (1.0 - params[1] + params[1] * lucene_norm_length(doc_length) / params[2]))


BM25_LUCENE = Weighting("bm25_lucene", bm25_lucene_part, bm25_params, bm25_term_constants)
