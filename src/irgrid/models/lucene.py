"""Models scored exactly as Lucene 9 scores them (Anserini's ``-bm25`` and ``-qld``): ``bm25_lucene``, ``ql_lucene``.

Two things make Lucene's numbers differ from the textbook formulas that ``bm25`` and
``ql_dirichlet`` compute:

* **One-byte document lengths.**  Lucene stores a field's length (its number of tokens after
  stop words) as a norm of one byte, ``SmallFloat.intToByte4``, and scores with the length that
  byte decodes to (``SmallFloat.byte4ToInt``): exact up to 23 tokens, then 4 significant bits,
  e.g. 41 -> 40, 100 -> 96, 1000 -> 984.  :func:`lucene_length` is that round trip (a port of
  ``org.apache.lucene.util.SmallFloat``, checked against Lucene 9's on every length up to
  200,000: ``tests/test_lucene_models.py``).  The average length stays exact,
  sumTotalTermFreq / docCount.
* **LMDirichletSimilarity's own estimate.**  p(t|C) = (cf + 1) / (|C| + 1), and each matched
  term's score qtf * (log(1 + tf / (mu p(t|C))) + log(mu / (|D| + mu))) is clipped at 0; a term
  the document lacks adds nothing (Lucene scores matches only).  The textbook query likelihood
  adds log(mu p / (|D| + mu)) for every query term, matched or not.

What is not reproduced: Lucene computes in 32-bit floats (scores agree to ~1e-6 relative, so
only exact ties can order differently); ties are broken by docno ascending here, by Lucene's
internal docid in Lucene and by docid in Anserini's output.
"""

from __future__ import annotations

import numpy as np

from .base import Parameter, RetrievalModel, WeightedModel
from .parts import WEIGHTINGS


def _long_to_int4(value: int) -> int:
    """Lucene's SmallFloat.longToInt4: 4 significant bits and a shift, order preserved."""
    bits = value.bit_length()
    if bits < 4:
        return value  # subnormal
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _int4_to_long(value: int) -> int:
    bits, shift = value & 0x07, (value >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


#: lengths below this are stored exactly (SmallFloat.NUM_FREE_VALUES = 255 - longToInt4(Integer.MAX_VALUE))
NUM_FREE_VALUES = 255 - _long_to_int4(2**31 - 1)


def int_to_byte4(length: int) -> int:
    """The norm byte (0-255) Lucene stores for a field of ``length`` tokens (SmallFloat.intToByte4)."""
    if length < 0:
        raise ValueError(f"a length is never negative, got {length}")
    if length < NUM_FREE_VALUES:
        return length
    return NUM_FREE_VALUES + _long_to_int4(length - NUM_FREE_VALUES)


def byte4_to_int(byte: int) -> int:
    """The length a norm byte decodes to (SmallFloat.byte4ToInt)."""
    return byte if byte < NUM_FREE_VALUES else NUM_FREE_VALUES + _int4_to_long(byte - NUM_FREE_VALUES)


#: the decoded length of every norm byte (Lucene's LENGTH_TABLE)
LENGTH_TABLE = np.array([byte4_to_int(b) for b in range(256)], dtype=np.float64)


def lucene_length(lengths) -> np.ndarray:
    """Each length as Lucene scores it: encoded to its norm byte and decoded back."""
    lengths = np.asarray(lengths, dtype=np.int64)
    encoded = np.array([int_to_byte4(int(n)) for n in lengths.ravel()], dtype=np.int64)
    return LENGTH_TABLE[encoded].reshape(lengths.shape)


class BM25Lucene(WeightedModel):
    """BM25 as Lucene 9's BM25Similarity (Anserini ``-bm25``): ``bm25`` with one-byte document lengths.

    score(d, q) = sum_t qtf idf(t) tf / (tf + k1 (1 - b + b L(|d|) / avgdl)),
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)),  L = :func:`lucene_length`, avgdl exact.
    Its parts are declared in :mod:`irgrid.models.parts.bm25_lucene` (L computed per posting from
    the length), shared with the fused kernel.
    """

    name = "bm25_lucene"
    description = "BM25 exactly as Lucene 9 / Anserini: one-byte document lengths"
    parameters = (
        Parameter("k1", 0.9, 0.0, 100.0, "term-frequency saturation"),
        Parameter("b", 0.4, 0.0, 1.0, "document-length normalisation"),
    )

    parts = WEIGHTINGS["bm25_lucene"]


class QLLucene(RetrievalModel):
    """Dirichlet query likelihood as Lucene 9's LMDirichletSimilarity (Anserini ``-qld``).

    score(d, q) = sum_{t in q and d} qtf max(0, ln(1 + tf / (mu p(t|C))) + ln(mu / (L(|d|) + mu))),
    p(t|C) = (cf + 1) / (|C| + 1),  L = :func:`lucene_length`.
    """

    name = "ql_lucene"
    description = "Dirichlet query likelihood exactly as Lucene 9 / Anserini: clipped at 0, (cf+1)/(|C|+1)"
    parameters = (Parameter("mu", 1000.0, 0.0, 1e9, "Dirichlet prior sample size (Anserini's default 1000)",
                            low_inclusive=False),)

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        mu = float(point["mu"])
        collection_probability = (term.cf + 1.0) / (stats.total_length + 1.0)
        tfs = np.asarray(term.tfs, dtype=np.float64)
        lengths = lucene_length(doc_lengths)
        scores = np.log1p(tfs / (mu * collection_probability)) + np.log(mu / (lengths + mu))
        return np.maximum(scores, 0.0)


__all__ = ["BM25Lucene", "QLLucene", "byte4_to_int", "int_to_byte4", "lucene_length"]
