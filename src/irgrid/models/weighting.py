"""Term-weighting models: BM25 (Lucene idf), BM25 in RSJ form, MBM25, PIV, DFR I(n)L2, TF-IDF, ES.

The formulas are written out in docs/models.md together with the peer they
are checked against.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError
from .base import CollectionStatistics, Parameter, QueryTerm, RetrievalModel, WeightedModel
from .parts import WEIGHTINGS


class BM25(WeightedModel):
    """Okapi BM25 with Lucene's idf, as Anserini/Pyserini and bm25s (method='lucene') compute it.

    score(d, q) = sum_t qtf(t) * idf(t) * tf / (tf + k1 (1 - b + b |d| / avgdl))

    (its parts are declared in :mod:`irgrid.models.parts.bm25`, shared with the fused kernel)

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

    parts = WEIGHTINGS["bm25"]


# --------------------------------------------------------------------------------------------
# The term-weighting functions compared in the axiomatic literature (Fang, Tao & Zhai 2004;
# Cummins & O'Riordan's constraint-violation counts): BM25 in its Robertson-Sparck Jones form,
# pivoted normalisation, DFR I(n)L2, BM25 with the pivoted idf, and a plain TF-IDF.
#
# Every function below must stay finite for any pseudo-document the axiom analysis builds:
# tf >= 1, |D| >= 1, 1 <= df <= N, qtf >= 1. Formulas and sources: docs/models.md.
# --------------------------------------------------------------------------------------------


def rsj_idf(df: int | np.ndarray, num_docs: int) -> np.ndarray:
    """Robertson-Sparck Jones idf without relevance information, ln((N - df + 0.5) / (df + 0.5)).

    NEGATIVE for df > N/2 (zero at df = N/2). Kept signed on purpose: it is the idf of the
    "default BM25" of Fang, Tao & Zhai (2004), and the negative weight of very common terms
    (stop words kept in the index) is one reason that function violates the constraints.
    """
    df = np.asarray(df, dtype=np.float64)
    return np.log((num_docs - df + 0.5) / (df + 0.5))


def pivoted_idf(df: int | np.ndarray, num_docs: int) -> np.ndarray:
    """The idf of pivoted normalisation (Singhal et al. 1996, as in Fang et al. 2004), ln((N + 1) / df).

    Positive for every df <= N.
    """
    df = np.asarray(df, dtype=np.float64)
    return np.log((num_docs + 1.0) / df)


def dfr_idf(df: int | np.ndarray, num_docs: int) -> np.ndarray:
    """Terrier's ``Idf.idfDFR``: log2((N + 1) / (df + 0.5)), the I(n) basic model. Positive for df <= N."""
    df = np.asarray(df, dtype=np.float64)
    return np.log2((num_docs + 1.0) / (df + 0.5))


def okapi_query_factor(qtf: float, k3: float) -> float:
    """(k3 + 1) / (k3 + qtf): Okapi's query-term part (k3 + 1) qtf / (k3 + qtf) DIVIDED by qtf.

    The scorer multiplies every term score by qtf (base.RetrievalModel.term_scores), so a term
    score that carries this factor contributes exactly (k3 + 1) qtf / (k3 + qtf) times the
    document weight. qtf >= 1 always (a query term occurs in the query).
    """
    return (k3 + 1.0) / (k3 + qtf)


def _as_float(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


K1 = Parameter("k1", 1.2, 0.0, 100.0, "term-frequency saturation")
B = Parameter("b", 0.75, 0.0, 1.0, "document-length normalisation")
K3 = Parameter("k3", 1000.0, 0.0, 1e9, "query-term-frequency saturation")


class OkapiRSJForm(RetrievalModel):
    """BM25 as Robertson et al. and Fang, Tao & Zhai (2004) write it, with a pluggable idf (abstract).

    score(Q, D) = sum_{t in Q and D} idf(t) * (k1 + 1) tf / (k1 ((1 - b) + b |D| / avgdl) + tf)
                                            * (k3 + 1) qtf / (k3 + qtf)

    ``term_scores`` returns the summand divided by qtf (see :func:`okapi_query_factor`): the
    scorer's multiplication by qtf restores it exactly.
    """

    parameters = (K1, B, K3)

    def idf(self, term: QueryTerm, stats: CollectionStatistics) -> np.ndarray:
        raise NotImplementedError

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        k1, b, k3 = point["k1"], point["b"], point["k3"]
        tf = _as_float(term.tfs)
        norm = k1 * ((1.0 - b) + b * _as_float(doc_lengths) / stats.avg_doc_length)
        tf_part = (k1 + 1.0) * tf / (norm + tf)
        return self.idf(term, stats) * tf_part * okapi_query_factor(term.qtf, k3)


class BM25RSJ(OkapiRSJForm):
    """"Default BM25" of the axiomatic papers: Okapi BM25 with the (signed) RSJ idf, (k1 + 1) and k3.

    idf(t) = ln((N - df + 0.5) / (df + 0.5)), negative for terms in more than half the documents.
    Unlike ``bm25`` (Lucene's idf, no (k1 + 1), no k3), this is the textbook formula of
    Fang, Tao & Zhai (2004), Section 4.2.
    """

    name = "bm25_rsj"
    description = "Okapi BM25, Robertson-Sparck Jones idf (negative for df > N/2), with (k1+1) and k3"

    def idf(self, term, stats):
        return rsj_idf(term.df, stats.num_docs)


class MBM25(OkapiRSJForm):
    """Modified BM25 (Cummins & O'Riordan): ``bm25_rsj`` with the pivoted-normalisation idf ln((N + 1) / df)."""

    name = "mbm25"
    description = "BM25 (RSJ-form tf and k3 parts) with the pivoted-normalisation idf ln((N+1)/df)"

    def idf(self, term, stats):
        return pivoted_idf(term.df, stats.num_docs)


class PivotedNormalisation(RetrievalModel):
    """Pivoted document-length normalisation (Singhal et al. 1996) in the form of Fang et al. (2004).

    score(Q, D) = sum_{t in Q and D} qtf * (1 + ln(1 + ln tf)) / ((1 - s) + s |D| / avgdl) * ln((N + 1) / df)
    """

    name = "piv"
    description = "pivoted length normalisation (Singhal et al. 1996; Fang et al. 2004 form)"
    parameters = (Parameter("s", 0.2, 0.0, 1.0, "pivot slope"),)

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        s = point["s"]
        tf = _as_float(term.tfs)
        norm = (1.0 - s) + s * _as_float(doc_lengths) / stats.avg_doc_length
        return (1.0 + np.log1p(np.log(tf))) / norm * pivoted_idf(term.df, stats.num_docs)


class InL2(RetrievalModel):
    """DFR I(n)L2 exactly as Terrier's ``InL2.score`` (terrier-core, org/terrier/matching/models/InL2.java).

    TF   = tf * log2(1 + c * avgdl / |D|)             (Normalisation 2)
    NORM = 1 / (TF + 1)                               (Laplace after-effect L)
    w    = TF * log2((N + 1) / (df + 0.5)) * NORM     (I(n): Terrier's Idf.idfDFR)

    Terrier multiplies by ``keyFrequency``, the query term's weight, which is its number of
    occurrences in the query (MatchingQueryTerms; only query expansion normalises it by the
    maximum): here that is the scorer's multiplication by qtf.
    """

    name = "inl2"
    description = "DFR I(n)L2 (Amati & van Rijsbergen 2002), as Terrier's InL2"
    parameters = (
        Parameter("c", 1.0, 0.0, 1e9, "term-frequency normalisation (Normalisation 2)", low_inclusive=False),
    )

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        c = point["c"]
        tfn = _as_float(term.tfs) * np.log2(1.0 + c * stats.avg_doc_length / _as_float(doc_lengths))
        return tfn / (tfn + 1.0) * dfr_idf(term.df, stats.num_docs)


class TFIDF(RetrievalModel):
    """Plain TF-IDF: SMART 'ltn' document weights against raw query counts, no length normalisation.

    score(Q, D) = sum_{t in Q and D} qtf * (1 + ln tf) * ln(N / df)

    (Salton & Buckley 1988; Manning, Raghavan & Schuetze 2008, Sections 6.2 and 6.4.1.) The
    weight is 0 for a term in every document (df = N), never negative. No parameters.
    """

    name = "tfidf"
    description = "TF-IDF, SMART ltn document weight (1 + ln tf) ln(N/df), no length normalisation"
    parameters = ()

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        tf = _as_float(term.tfs)
        df = float(term.df)
        return (1.0 + np.log(tf)) * np.log(stats.num_docs / df)


class EvolvedScheme(RetrievalModel):
    """ES, Cummins & O'Riordan's evolved term-weighting scheme, with its length term as parameters.

    w(t, D) = tf / (tf + k + c (|D| / avgdl)^p) * sqrt(cf^3 N / df^4)

    The global part ``sqrt(cf^3 N / df^4)`` is the same in every copy found; the copies disagree
    on the length term of the local part (docs/models.md, "ES"): ``k=0.45, c=1, p=0.5`` is
    ``tf / (tf + 0.45 + sqrt(|D|/avgdl))`` (the defaults: the copy citing Cummins's chapter that
    the constraints issue names), ``k=0, c=0.45, p=1`` is ``tf / (tf + 0.45 |D|/avgdl)`` (the
    other copy) and ``k=0, c=0.45, p=0.5`` the third reading.
    """

    name = "es"
    description = "evolved scheme ES (Cummins & O'Riordan): local tf/(tf + k + c (|D|/avgdl)^p), global sqrt(cf^3 N/df^4)"
    parameters = (
        Parameter("k", 0.45, 0.0, 100.0, "constant of the local part's denominator"),
        Parameter("c", 1.0, 0.0, 100.0, "weight of the length term (|D|/avgdl)^p"),
        Parameter("p", 0.5, 0.0, 4.0, "exponent of the length ratio |D|/avgdl"),
    )

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        tf = _as_float(term.tfs)
        ratio = _as_float(doc_lengths) / stats.avg_doc_length
        local = tf / (tf + point["k"] + point["c"] * ratio ** point["p"])
        cf, df = float(term.cf), float(term.df)
        return local * math.sqrt(cf ** 3 * stats.num_docs / df ** 4)


class WordCount(RetrievalModel):
    """Word overlap: the answer-selection baselines "word count" and "weighted word count".

    score(Q, D) = |{t in Q and D}|                 (idf = 0)
    score(Q, D) = sum_{t in Q and D} ln(N/df)      (idf = 1)

    i.e. the number of distinct question (non-stop) words that occur in the candidate, each
    weighted by its idf in the second form (Yih et al., ACL 2013, Section 6.2's "Word Cnt" and
    "Wgt Word Cnt", as castorini's implementation counts them: the intersection of the two word
    sets; the idf here is the index's, over the pooled sentences).  How often a word occurs in
    the question or the candidate does not count.
    """

    name = "word_count"
    description = "word overlap: question words present in the candidate, optionally idf-weighted"
    parameters = (Parameter("idf", 0.0, 0.0, 1.0, "1: weight each word by ln(N/df) (weighted word count); 0: count"),)

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        if point["idf"] not in (0.0, 1.0):
            raise ConfigError(f"model {self.name!r}: parameter idf={point['idf']:g} must be 0 or 1")
        weight = np.log(stats.num_docs / float(term.df)) if point["idf"] == 1.0 else 1.0
        return np.full(len(term.docids), weight, dtype=np.float64)

    def term_weight(self, term, point):
        return 1.0  # a word counts once however often the question repeats it
