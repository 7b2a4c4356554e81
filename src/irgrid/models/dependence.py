"""Term-dependence models: each scores a query's compiled features (terms and windows).

* ``sdm``, ``fdm``: Metzler & Croft's Markov random field model (2005), sequential
  and full dependence, with Indri's query semantics: every feature is
  Dirichlet-smoothed with its own collection frequency, each group's features are
  averaged (Indri's ``#combine``) and the groups mixed by lambda (``#weight``).
  They share the Dirichlet per-posting formula with ``ql_dirichlet``, so the fused
  kernel scores them from the window postings exactly as it scores terms.
* ``bg``, ``culm``: the bigram language model of the ADM paper (its reference [3])
  and the concept unigram model (its reference [6], Srikanth & Srihari), both
  ``kl_ml`` plus a correction for each query bigram seen in the document.
* ``adm``: the axiomatic dependence model (Ding & Wang, AIRS 2008; seed 000),
  ``kl_ml`` plus a dependence score over the query's term pairs, reconstructed
  from the paper's four constraints (:class:`AxiomaticDependence`).

Formulas, the reconstruction of the lost ones and what each rests on: docs/models.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..errors import ConfigError
from ..features import (
    AnalyzedQuery,
    CompiledFeature,
    contiguous_runs,
    counted,
    ordered_subsets,
    phrase,
    phrase_pairs,
    sequential_pairs,
    term,
    term_pairs,
    unordered,
)
from .base import CollectionStatistics, Parameter, QueryFeature, QueryTerm, RetrievalModel, replaced
from .lm import KLDirichletML, QLDirichlet

TERMS_GROUP = "T"
ORDERED_GROUP = "O"

MU_INDRI = Parameter("mu", 2500.0, 0.0, 1e9, "Dirichlet prior sample size (Indri's default 2500)",
                     low_inclusive=False)
LAMBDA_T = Parameter("lambda_t", 0.85, 0.0, 1.0, "weight of the single terms (Indri's SDM: 0.85)")
LAMBDA_O = Parameter("lambda_o", 0.10, 0.0, 1.0, "weight of the ordered windows #1 (Indri's SDM: 0.10)")
LAMBDA_U = Parameter("lambda_u", 0.05, 0.0, 1.0, "weight of the unordered windows (Indri's SDM: 0.05)")
WINDOW = Parameter("window", 8.0, 2.0, 1e6, "width of the unordered window over a term pair (Indri's SDM: 8)")
DROP_UNSEEN = Parameter("drop_unseen", 0.0, 0.0, 1.0,
                        "0: a query term absent from the collection stays in the query with its windows, scored "
                        "with the 1/(2|C|) background and counted in its group's size (Indri); 1: it is dropped "
                        "with its windows and the groups shrink")


def feature_probability(feature: QueryTerm, stats: CollectionStatistics) -> float:
    """p(f | C) = cf / |C|; a feature never seen in the collection gets Indri's 1 / (2|C|).

    (Indri's ``TermScoreFunctionFactory::get``: ``occurrences ? occurrences/contextSize :
    1.0/double(contextSize*2.)``, "something that never happens in our collection": half an
    occurrence, so the Dirichlet score stays finite and still penalises length.)
    """
    return (feature.cf if feature.cf > 0 else 0.5) / stats.total_length


def whole_number(value: float, name: str, model: str, least: int) -> int:
    if value != int(value) or value < least:
        raise ConfigError(f"model {model!r}: parameter {name}={value:g} must be a whole number >= {least}")
    return int(value)


def unordered_group(width: int) -> str:
    """The group of the unordered windows compiled for window parameter ``width`` (one per grid value)."""
    return f"U{width}"


def sorted_terms(words: Sequence[str]) -> list[tuple]:
    """The query's single terms as (feature, group) pairs, one per occurrence, sorted (the summation order
    of every bag-of-words model here: ``retrieve.analyse_queries`` sorts terms too)."""
    return [(term(word), TERMS_GROUP) for word in sorted(words)]


class FeatureModel(RetrievalModel):
    """A model over compiled query features (abstract): subclasses give :meth:`compile`."""

    uses_features = True
    #: count overlapping window matches (Galago) or only non-overlapping ones (Indri)
    window_overlap = True

    def compile(self, query: AnalyzedQuery, points: Sequence[Mapping[str, float]]) -> list[CompiledFeature]:
        """The features of ``query`` needed to score it at every one of ``points``."""
        raise NotImplementedError

    def keeps_unseen_features(self, points: Sequence[Mapping[str, float]]) -> bool:
        """Whether a feature naming a term absent from the collection is kept (with no postings) for ``points``.

        False: it is dropped when the query set is compiled (no document can match it), as a
        bag-of-words model drops such a term.
        """
        return False

    def annotate(self, features: list[QueryFeature], stats: CollectionStatistics) -> list[QueryFeature]:
        """``features`` of one query, with their statistics, given what the model derives from them.

        Called once per query when the query set is compiled (never per grid point);
        the default derives nothing.
        """
        return features


class MarkovRandomField(FeatureModel, QLDirichlet):
    """Metzler & Croft's MRF model with Indri's semantics (abstract: SDM, FDM give the cliques).

    score(Q, D) = lambda_T / |T| sum_{f in T} log p(f|D) + lambda_O / |O| sum_{f in O} log p(f|D)
                + lambda_U / |U| sum_{f in U} log p(f|D),
    p(f|D) = (tf_{f,D} + mu p(f|C)) / (|D| + mu)

    where |G| is the number of features of group G in the query (Indri's ``#combine``
    averages its children); an empty group adds nothing.  Split as ``ql_dirichlet``:
    each feature's weight w_f = lambda_G qtf_f / |G| multiplies its matched part
    log(1 + tf / (mu p(f|C))), and the per-document part is
    sum_f w_f log(mu p(f|C)) - (sum_f w_f) log(|D| + mu).

    A query term absent from the collection (``drop_unseen`` 0, the default) stays in T
    and its windows in O and U, as Indri keeps them: each is scored as a feature with no
    occurrence, p(f|C) = 1/(2|C|) at the document's own length (Indri's ``NullScorerNode``),
    and counts in |G|.  With ``drop_unseen`` 1 such features are left out and |G| counts
    only the others (:meth:`annotate` records that size for each feature).
    """

    parameters = (MU_INDRI, LAMBDA_T, LAMBDA_O, LAMBDA_U, WINDOW, DROP_UNSEEN)
    # Indri counts a window's matches without overlaps (ListBeliefNode::_documentOccurrences)
    window_overlap = False

    @classmethod
    def check_point(cls, point):
        checked = super().check_point(point)
        if checked["drop_unseen"] not in (0.0, 1.0):
            raise ConfigError(f"model {cls.name!r}: parameter drop_unseen={checked['drop_unseen']:g} must be 0 "
                              "(keep a query term absent from the collection, as Indri) or 1 (drop it)")
        return checked

    def windows(self, points: Sequence[Mapping[str, float]]) -> list[int]:
        return sorted({whole_number(point["window"], "window", self.name, 2) for point in points})

    def keeps_unseen_features(self, points):
        # where every point drops them, they are dropped when compiled: no feature without postings to carry
        return any(point["drop_unseen"] == 0.0 for point in points)

    def annotate(self, features, stats):
        """Each feature annotated with its group's size under ``drop_unseen`` 1 (0 for a feature naming an absent term).

        A term absent from the collection is a single-term feature with cf 0 (every query
        term is one: T holds them all); a window naming one has no occurrence either.
        """
        absent = {f.feature.terms[0] for f in features if f.feature.is_term and f.cf == 0}
        if not absent:
            return [replaced(f, annotation=f.group_size) for f in features]
        names_absent = [any(word in absent for word in f.feature.terms) for f in features]
        seen_sizes: dict[str, int] = {}
        for f, unseen in zip(features, names_absent):
            if not unseen:
                seen_sizes[f.group] = seen_sizes.get(f.group, 0) + f.qtf
        return [replaced(f, annotation=0 if unseen else seen_sizes[f.group]) for f, unseen in zip(features, names_absent)]

    def group_lambda(self, group: str, point: Mapping[str, float]) -> float:
        if group == TERMS_GROUP:
            return point["lambda_t"]
        if group == ORDERED_GROUP:
            return point["lambda_o"]
        return point["lambda_u"] if group == unordered_group(int(point["window"])) else 0.0

    def term_weight(self, term: QueryTerm, point: Mapping[str, float]) -> float:
        if point["drop_unseen"] == 1.0 and term.annotation is not None:
            # a feature naming an absent term weighs 0 (its 0 * log(mu p(f|C)) adds exactly 0.0 to the
            # query's constant, so the scores are those of the query compiled without it, to the bit)
            seen_group_size = term.annotation
            return self.group_lambda(term.group, point) * term.qtf / seen_group_size if seen_group_size else 0.0
        return self.group_lambda(term.group, point) * term.qtf / term.group_size

    def background(self, term, stats):
        return feature_probability(term, stats)


class SequentialDependence(MarkovRandomField):
    """SDM: single terms, ``#1`` and ``#uwN`` over each pair of adjacent query terms.

    Indri's query: ``#weight(lt #combine(q1 .. qn) lo #combine(#1(q1 q2) ..) lu #combine(#uw8(q1 q2) ..))``.
    """

    name = "sdm"
    description = "Markov random field, sequential dependence (Metzler & Croft 2005; Indri semantics)"

    def compile(self, query, points):
        pairs = sequential_pairs(query.terms)
        features = sorted_terms(query.terms) + [(phrase(pair), ORDERED_GROUP) for pair in pairs]
        for width in self.windows(points):
            features += [(unordered(pair, width), unordered_group(width)) for pair in pairs]
        return counted(features)


MAX_TERMS = Parameter("max_terms", 4.0, 2.0, 64.0,
                      "largest subset of query terms given a window (all subsets: the query length)")


class FullDependence(MarkovRandomField):
    """FDM: single terms, ``#1`` over every run of >= 2 adjacent query terms, ``#uwN`` over every subset of >= 2.

    As Metzler & Croft (2005): ordered windows for the contiguous runs, unordered
    windows for all subsets, of width ``window / 2`` per term (Indri's 4 |s| at the
    default 8).  Subsets are capped at ``max_terms`` terms: a verbose query of 20
    terms has a million subsets.
    """

    name = "fdm"
    description = "Markov random field, full dependence (Metzler & Croft 2005; Indri semantics)"
    parameters = (MU_INDRI, LAMBDA_T, LAMBDA_O, LAMBDA_U, WINDOW, MAX_TERMS, DROP_UNSEEN)

    def compile(self, query, points):
        # one group of ordered and one of unordered windows per max_terms (and window) of the grid:
        # a point weighs only its own, so every point averages over exactly its subsets
        caps = sorted({whole_number(point["max_terms"], "max_terms", self.name, 2) for point in points})
        features = sorted_terms(query.terms)
        for cap in caps:
            features += [(phrase(run), f"{ORDERED_GROUP}{cap}") for run in contiguous_runs(query.terms, max_size=cap)]
        for cap in caps:
            subsets = ordered_subsets(query.terms, max_size=cap)
            for width in self.windows(points):
                group = f"{unordered_group(width)}M{cap}"
                features += [(unordered(s, math.ceil(width * len(s) / 2)), group) for s in subsets]
        return counted(features)

    def group_lambda(self, group: str, point: Mapping[str, float]) -> float:
        cap = int(point["max_terms"])
        if group == TERMS_GROUP:
            return point["lambda_t"]
        if group == f"{ORDERED_GROUP}{cap}":
            return point["lambda_o"]
        return point["lambda_u"] if group == f"{unordered_group(int(point['window']))}M{cap}" else 0.0


BIGRAM_WEIGHT = Parameter("bigram_weight", 0.01, 0.0, 1.0,
                          "weight of the document's bigram estimate P_ML(qi | qi-1, D) against the unigram (ADM paper: 0.01)",
                          high_inclusive=False)


class DirichletKLWithFeatures(FeatureModel, KLDirichletML):
    """``kl_ml`` over a query's single terms plus something of its other features (abstract: BG, CULM, ADM).

    Scored query by query from the matrix of the features' counts in the candidates
    (``scores_candidates``): the log of a mixture (BG) or of a pair's smoothed weight
    (ADM) does not split into per-posting parts.  The single terms come first in the
    query's term order, as ``kl_ml``'s, so the unigram part is ``kl_ml``'s to the bit.
    """

    parameters = (KLDirichletML.parameters[0],)
    fused = False
    scores_candidates = True

    def unigram_scores(self, terms, counts, doc_lengths, stats, point, cache=None) -> np.ndarray:
        """kl_ml's score before its 1/|Q| (term parts in the query's term order, then the document part).

        A new array each call; with a ``QueryCache`` it is made once per mu and copied.
        """
        if cache is not None:
            return cache.get_or_make(("unigram", point["mu"]),
                                     lambda: self.unigram_scores(terms, counts, doc_lengths, stats, point)).copy()
        words = [t for t in terms if t.group == TERMS_GROUP]
        scores = np.zeros(counts.shape[1], dtype=np.float64)
        for row, t in enumerate(terms):
            if t.group == TERMS_GROUP:
                # a candidate without the term adds log1p(0) = 0.0: the sums are the scorer's to the bit
                scores += self.term_weight(t, point) * self.term_scores(replace(t, tfs=counts[row]), doc_lengths,
                                                                       None, stats, point)
        scores += self.document_scores(doc_lengths, None, words, stats, point)
        return scores

    def unigram_weight(self, terms) -> float:
        """kl_ml's 1/|Q| (1 for a query left with no term: it has no candidate anyway)."""
        words = [t for t in terms if t.group == TERMS_GROUP]
        return self.query_weight(words) if words else 1.0

    @staticmethod
    def term_rows(terms) -> dict[str, int]:
        """Each single term's row in the count matrix."""
        return {t.feature.terms[0]: row for row, t in enumerate(terms) if t.group == TERMS_GROUP}


class BigramLM(DirichletKLWithFeatures):
    """BG: the bigram language model of the ADM paper's reference [3], scored as ``kl_ml``.

    log P(Q|D) = sum_i log p_s(qi|D) + sum_{(a,b) in B} log(lambda P_ML(b|a,D) + (1 - lambda) p_s(b|D))
                                      - sum_{(a,b) in B} log p_s(b|D)
    P_ML(b|a,D) = c(#1(a b); D) / c(a; D)   (0 when a is not in D)

    with p_s Dirichlet-smoothed, B the query's bigrams (adjacent query terms) and the
    whole divided by |Q| as ``kl_ml``.  A bigram absent from D adds
    log(1 - lambda), which is why only documents with a bigram are rescored.
    With lambda = 0 every correction is exactly 0 and the score is ``kl_ml``'s to
    the last bit.
    """

    name = "bg"
    description = "bigram language model (Dirichlet unigram, interpolated bigram), KL form"
    parameters = (KLDirichletML.parameters[0], BIGRAM_WEIGHT)

    def pairs(self, query: AnalyzedQuery) -> list[tuple[str, str]]:
        return sequential_pairs(query.terms)

    def compile(self, query, points):
        return counted(sorted_terms(query.terms) + [(phrase(pair), ORDERED_GROUP) for pair in self.pairs(query)])

    def candidate_scores(self, terms, counts, doc_lengths, doc_unique_terms, stats, point, cache=None):
        scores = self.unigram_scores(terms, counts, doc_lengths, stats, point, cache)
        lam = point["bigram_weight"]
        if lam > 0.0:
            row_of = self.term_rows(terms)
            mu = point["mu"]
            lengths = np.asarray(doc_lengths, dtype=np.float64)
            for row, t in enumerate(terms):
                if t.group != ORDERED_GROUP:
                    continue
                first, second = t.feature.terms
                bigram = counts[row].astype(np.float64)
                previous = counts[row_of[first]].astype(np.float64)
                unigram = (counts[row_of[second]] + mu * self.background(terms[row_of[second]], stats)) / (lengths + mu)
                conditional = np.divide(bigram, previous, out=np.zeros_like(bigram), where=previous > 0)
                scores += t.qtf * (np.log(lam * conditional + (1.0 - lam) * unigram) - np.log(unigram))
        scores *= self.unigram_weight(terms)
        return scores


class ConceptUnigramLM(BigramLM):
    """CULM (Srikanth & Srihari 2003): the query as a sequence of concepts, a concept's words as a bigram chain.

    log P(Q|D) = sum_c log P(c|D),  P(w1..wk|D) = p_s(w1|D) prod_{j>=2} (lambda P_ML(wj|wj-1,D) + (1-lambda) p_s(wj|D))

    i.e. ``bg`` with the bigrams taken inside the query's concepts only: its parsed
    phrases where the query set was parsed (a word outside every phrase is a concept
    of one word); on a query set without a parse the query is one concept and CULM
    scores as ``bg``.
    """

    name = "culm"
    description = "concept unigram language model (bigrams inside the query's phrases), KL form"

    def pairs(self, query):
        if query.phrases is None:
            return sequential_pairs(query.terms)
        return phrase_pairs(query.phrases)


ADM_WINDOW = Parameter("window", 8.0, 2.0, 1e6, "co-occurrence window N: both terms of a pair within N positions")
ADM_ALPHA = Parameter("alpha", 0.5, 0.0, 1.0, "weight of the pair's own document frequency in P(wi,wj|C) "
                      "(1 - alpha: the independence estimate DF(wi) DF(wj) / N^2)", low_inclusive=False,
                      high_inclusive=False)
ADM_BETA = Parameter("beta", 0.5, 0.0, 1.0, "weight of the pair's own count in P(wi,wj|D) "
                     "(1 - beta: the independence estimate C_D(wi) C_D(wj) / |D|^2)", low_inclusive=False)
PAIR_GROUP_PREFIX = "L"


def pair_group(width: int) -> str:
    return f"{PAIR_GROUP_PREFIX}{width}"


class AxiomaticDependence(DirichletKLWithFeatures):
    """ADM (Ding & Wang 2008): ``kl_ml`` plus a dependence score over the query's term pairs L.

    The paper's equations were lost in extraction; this is the reconstruction of
    docs/models.md ("ADM"), built to satisfy its four constraints:

        P(wi,wj|C) = alpha DF(wi,wj)/N + (1 - alpha) DF(wi) DF(wj) / N^2        (C1, C2)
        P(wi,wj|D) = beta C_D(wi,wj)/|D| + (1 - beta) C_D(wi) C_D(wj) / |D|^2   (C3, C4)
        RSV_DEP(Q,D) = sum_{(wi,wj) in L} P(wi,wj|Q) log(1 + |D| P(wi,wj|D) / (mu P(wi,wj|C)))
        score = RSV_UG(Q,D) + RSV_DEP(Q,D),  P(wi,wj|Q) = 1/|L|

    DF(wi,wj) is the number of documents where wi and wj occur within N positions
    (the df of ``#uwN(wi wj)``) and C_D(wi,wj) its count in D; RSV_DEP is the
    matched-term part of Dirichlet smoothing (as ``log(1 + tf / (mu p(t|C)))`` for a
    term) with P(wi,wj|C) as the background and mu shared with the unigram part.
    It is 0 for a document without one of the pair's terms, and grows only as the
    log of the pair's evidence: the bound on over-scoring the paper asks for.  L is
    the adjacent query terms, or the pairs inside the parsed phrases on a parsed
    query set (:func:`irgrid.features.term_pairs`); a pair of one term twice is left
    out, and a query without a pair scores as ``kl_ml``.
    """

    name = "adm"
    description = "axiomatic dependence model: Dirichlet KL plus a smoothed term-pair score (reconstructed)"
    parameters = (KLDirichletML.parameters[0], ADM_WINDOW, ADM_ALPHA, ADM_BETA)

    @staticmethod
    def pairs(query: AnalyzedQuery) -> list[tuple[str, str]]:
        return [pair for pair in term_pairs(query) if pair[0] != pair[1]]

    def compile(self, query, points):
        widths = sorted({whole_number(point["window"], "window", self.name, 2) for point in points})
        features = sorted_terms(query.terms)
        for width in widths:
            features += [(unordered(pair, width), pair_group(width)) for pair in self.pairs(query)]
        return counted(features)

    @staticmethod
    def collection_weight(pair_df, first_df, second_df, num_docs, alpha):
        """P(wi,wj|C): the pair's document frequency, interpolated with its independence estimate."""
        return alpha * pair_df / num_docs + (1.0 - alpha) * (first_df / num_docs) * (second_df / num_docs)

    @staticmethod
    def document_weight(pair_count, first_count, second_count, doc_lengths, beta):
        """P(wi,wj|D): the pair's count in D, interpolated with its independence estimate."""
        lengths = np.asarray(doc_lengths, dtype=np.float64)
        return beta * pair_count / lengths + (1.0 - beta) * (first_count / lengths) * (second_count / lengths)

    def dependence_scores(self, terms, counts, doc_lengths, stats, point) -> np.ndarray:
        """RSV_DEP of each candidate (0 where the query has no pair)."""
        scores = np.zeros(counts.shape[1], dtype=np.float64)
        group = pair_group(int(point["window"]))
        pairs = [(row, t) for row, t in enumerate(terms) if t.group == group]
        if not pairs:
            return scores
        row_of = self.term_rows(terms)
        mu, lengths = point["mu"], np.asarray(doc_lengths, dtype=np.float64)
        weight_of_pair = 1.0 / sum(t.qtf for _, t in pairs)  # P(wi,wj|Q) = 1/|L|
        for row, t in pairs:
            first, second = (terms[row_of[word]] for word in t.feature.terms)
            background = self.collection_weight(t.df, first.df, second.df, stats.num_docs, point["alpha"])
            in_document = self.document_weight(counts[row], counts[row_of[first.feature.terms[0]]],
                                               counts[row_of[second.feature.terms[0]]], lengths, point["beta"])
            scores += t.qtf * weight_of_pair * np.log1p(lengths * in_document / (mu * background))
        return scores

    def candidate_scores(self, terms, counts, doc_lengths, doc_unique_terms, stats, point, cache=None):
        unigram = self.unigram_scores(terms, counts, doc_lengths, stats, point, cache)
        unigram *= self.unigram_weight(terms)
        return unigram + self.dependence_scores(terms, counts, doc_lengths, stats, point)
