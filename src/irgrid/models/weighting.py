"""Term-weighting models (BM25 and, later, PIV, DFR, TF-IDF).

The formulas are written out in docs/models.md together with the peer they
are checked against.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .base import CollectionStatistics, Parameter, QueryTerm, RetrievalModel


def lucene_idf(df: int | np.ndarray, num_docs: int) -> np.ndarray:
    """Lucene's BM25 idf, log(1 + (N - df + 0.5) / (df + 0.5)): never negative."""
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((num_docs - df + 0.5) / (df + 0.5))


class BM25(RetrievalModel):
    """Okapi BM25 with Lucene's idf, as Anserini/Pyserini and bm25s (method='lucene') compute it.

    score(d, q) = sum_t qtf(t) * idf(t) * tf / (tf + k1 (1 - b + b |d| / avgdl))

    Without the classic (k1 + 1) numerator factor, as Lucene (since 8.0), Anserini
    and bm25s score: it scales every score by the same constant, so rankings are
    unchanged, and leaving it out makes our scores equal to the peers'.
    """

    name = "bm25"
    description = "Okapi BM25, Lucene idf"
    parameters = (
        Parameter("k1", 0.9, 0.0, 100.0, "term-frequency saturation"),
        Parameter("b", 0.4, 0.0, 1.0, "document-length normalisation"),
    )

    def term_scores(
        self,
        term: QueryTerm,
        doc_lengths: np.ndarray,
        doc_unique_terms: np.ndarray,
        stats: CollectionStatistics,
        point: Mapping[str, float],
    ) -> np.ndarray:
        k1, b = point["k1"], point["b"]
        tf = term.tfs.astype(np.float64)
        norm = k1 * (1.0 - b + b * doc_lengths / stats.avg_doc_length)
        return lucene_idf(term.df, stats.num_docs) * tf / (tf + norm)
