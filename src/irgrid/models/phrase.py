"""Phrase models with inseparability (Shi & Nie, SIGIR 2009; seed 001): ``uni``, ``p``, ``pu``, ``pm``.

A query is a sequence of words w_1..w_n and, once its phrases are identified, a
sequence of phrases r_1..r_m (a phrase is one word or several consecutive words;
phrases do not overlap).  Each multi-word phrase r_i is scored both ways and the two
combined by a weighted geometric mean:

    log P(Q|D) = sum_{w outside phrases} log p(w|D)
               + sum_i [ lambda_i log p(r_i|D) + (1 - lambda_i) sum_{w in r_i} log p(w|D) ]

every probability Dirichlet-smoothed with its own collection frequency,
p(f|D) = (tf_{f,D} + mu p(f|C)) / (|D| + mu), a phrase counted as the exact
adjacency window ``#1(w1 .. wk)`` (:mod:`irgrid.features`).  The families differ in
lambda_i only:

=======  ===============================================================================
``uni``  lambda_i = 0: query likelihood over the words (Chinese: the characters)
``p``    lambda_i = 1: the query as a sequence of phrases only
``pu``   lambda_i = ``phrase_weight`` for every phrase (one fixed weight, as Metzler & Croft)
``pm``   lambda_i from the phrase's inseparability (:func:`inseparability_weight`), 0 for a
         phrase whose pointwise mutual information is <= ``pmi_threshold``
=======  ===============================================================================

A phrase the collection never contains (df = 0: its idf is undefined) has no phrase
model in any family: lambda_i = 0, its words stand in for it.  Every family ranks
the same candidates, the documents with at least one query word (a document with
the phrase has its words).  With every lambda_i = 0 ``pm`` scores as ``uni``, and
with every lambda_i = 1 as ``p``, to the last bit: all are one sum in one order,
where a weight of 0 adds an exact 0 (:class:`PhraseModel`).  The reconstruction of the formulas
the extract lost, and what each rests on: docs/models.md ("Phrase model").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..errors import ConfigError
from ..features import AnalyzedQuery, counted, phrase, term
from .base import CollectionStatistics, Parameter, QueryFeature, replaced
from .dependence import MU_INDRI, TERMS_GROUP, FeatureModel, feature_probability
from .lm import QLDirichlet

WORDS_OF_PHRASE_PREFIX = "W"
PHRASE_PREFIX = "P"


def words_group(i: int) -> str:
    """The group of the words of the query's i-th multi-word phrase, again (weighted -lambda_i)."""
    return f"{WORDS_OF_PHRASE_PREFIX}{i}"


def phrase_group(i: int) -> str:
    """The group of the query's i-th multi-word phrase itself (weighted lambda_i)."""
    return f"{PHRASE_PREFIX}{i}"


def phrase_spans(terms: Sequence[str], phrases: Sequence[Sequence[str]] | None) -> list[tuple[int, int]]:
    """``(start, end)`` of each multi-word phrase in the query's terms, in query order, without overlap.

    The phrases were identified on the query's text and analyzed on their own, so each
    is looked for as a run of the query's analyzed terms, left to right from the end of
    the previous one.  A phrase of one term, or one the analysis made unfindable
    (a stop word removed inside it, say), is left to its words.
    """
    spans: list[tuple[int, int]] = []
    if not phrases:
        return spans
    cursor = 0
    for words in phrases:
        k = len(words)
        if k < 2:
            continue
        for start in range(cursor, len(terms) - k + 1):
            if tuple(terms[start:start + k]) == tuple(words):
                spans.append((start, start + k))
                cursor = start + k
                break
    return spans


@dataclass(frozen=True)
class Inseparability:
    """What decides a phrase's weight, from the collection (computed once per query set).

    ``idf`` = log(N / df) of the phrase; ``word_idf`` the mean of its words' idf;
    ``x`` = (idf - word_idf) / idf, the normalised idf difference (0 when idf = 0);
    ``pmi`` = log2(p(r|C) / prod_w p(w|C)), p = cf / |C|.  ``present`` is False for a
    phrase the collection never contains (df = 0): then the rest is undefined (NaN).
    """

    present: bool
    df: int = 0
    cf: int = 0
    idf: float = math.nan
    word_idf: float = math.nan
    x: float = math.nan
    pmi: float = math.nan


def idf(df: int, num_docs: int) -> float:
    return math.log(num_docs / df)


def inseparability(phrase_feature: QueryFeature, word_stats: Mapping[str, tuple[int, int]],
                   stats: CollectionStatistics) -> Inseparability:
    """The :class:`Inseparability` of a phrase from its df/cf and its words' (``word_stats``: term -> (df, cf))."""
    if phrase_feature.df == 0:
        return Inseparability(present=False, df=0, cf=0)
    words = phrase_feature.feature.terms
    phrase_idf = idf(phrase_feature.df, stats.num_docs)
    word_idf = sum(idf(word_stats[w][0], stats.num_docs) for w in words) / len(words)
    x = (phrase_idf - word_idf) / phrase_idf if phrase_idf > 0.0 else 0.0
    log_phrase = math.log2(phrase_feature.cf / stats.total_length)
    log_words = sum(math.log2(word_stats[w][1] / stats.total_length) for w in words)
    return Inseparability(True, phrase_feature.df, phrase_feature.cf, phrase_idf, word_idf, x, log_phrase - log_words)


def inseparability_weight(x: float, t1: float, t2: float, lambda_max: float) -> float:
    """lambda_i from the normalised idf difference x: 0 up to t1, ``lambda_max`` from t2, linear between.

    Non-decreasing in x for any t1 <= t2 (a step at t1 when t1 = t2).
    """
    if x <= t1:
        return 0.0
    if x >= t2:
        return lambda_max
    # rounded twice, the product can land an ulp above lambda_max (a subnormal lambda_max, or x - t1 within
    # an ulp of t2 - t1): the clamp keeps the range the paper states and changes no value inside it
    return min(lambda_max, lambda_max * (x - t1) / (t2 - t1))


def with_annotation(feature: QueryFeature, annotation: Inseparability | None) -> QueryFeature:
    """``dataclasses.replace(feature, annotation=annotation)`` (:func:`~irgrid.models.base.replaced`: on
    every phrase and phrase word of a query set, 85,000 on DRCD's test set)."""
    return replaced(feature, annotation=annotation)


class PhraseModel(FeatureModel, QLDirichlet):
    """The phrase model (abstract): subclasses say what lambda_i is (:meth:`phrase_weight`).

    Scored by the fused Dirichlet kernel as SDM is, a feature's weight multiplying its
    per-posting part, in the form

        log P(Q|D) = sum_w qtf_w log p(w|D) + sum_i lambda_i [log p(r_i|D) - sum_{w in r_i} log p(w|D)]

    (the words: their qtf; phrase i: lambda_i; the words of phrase i once more: -lambda_i),
    the paper's formula rearranged so that lambda_i = 0 leaves ``uni``'s sum untouched.
    """

    parameters = (MU_INDRI,)
    # a phrase of distinct words cannot overlap itself; for a repeated word, Indri's count
    window_overlap = False
    #: the family compiles the query's phrases (``uni`` does not: it has none)
    uses_phrases = True
    #: the paper's phrases came from a dictionary limited to phrases of 4 words or fewer (seed 001), as
    #: a phrase list here is (irgrid.phrases.lists.MAX_PHRASE_WORDS); a longer noun phrase of a parse is
    #: cut to its last 4 words, the head and its nearest modifiers (irgrid.analysis.tokenize.head_words)
    max_phrase_words = 4

    def compile(self, query: AnalyzedQuery, points):
        # every word with its qtf, sorted, as ql_dirichlet sums them (so uni is ql_dirichlet's scores and
        # pm with every lambda_i = 0 is uni's, to the bit), then each phrase and, again, its words: the
        # phrase weighted lambda_i and its words -lambda_i, which moves lambda_i of their weight to the phrase
        features = [(term(word), TERMS_GROUP) for word in sorted(query.terms)]
        spans = phrase_spans(query.terms, query.phrases) if self.uses_phrases else []
        for i, (start, end) in enumerate(spans):
            features.append((phrase(query.terms[start:end]), phrase_group(i)))
            features += [(term(word), words_group(i)) for word in query.terms[start:end]]
        return counted(features)

    def annotate(self, features, stats):
        word_stats = {f.feature.terms[0]: (f.df, f.cf) for f in features if f.feature.is_term}
        found = {f.group[len(PHRASE_PREFIX):]: inseparability(f, word_stats, stats)
                 for f in features if f.group.startswith(PHRASE_PREFIX)}
        return [with_annotation(f, found.get(f.group[1:])) if f.group != TERMS_GROUP else f for f in features]

    def phrase_weight(self, phrase: Inseparability, point: Mapping[str, float]) -> float:
        """lambda_i of a phrase the collection contains."""
        raise NotImplementedError

    def phrase_lambda(self, annotation: Inseparability | None, point: Mapping[str, float]) -> float:
        """lambda_i: 0 for a phrase absent from the collection (or whose words are), else :meth:`phrase_weight`."""
        if annotation is None or not annotation.present:
            return 0.0
        return self.phrase_weight(annotation, point)

    def term_weight(self, term, point):
        if term.group == TERMS_GROUP:
            return float(term.qtf)
        lam = self.phrase_lambda(term.annotation, point)
        return lam * term.qtf if term.group.startswith(PHRASE_PREFIX) else -lam * term.qtf

    def background(self, term, stats):
        return feature_probability(term, stats)

    def kernel_inputs(self, terms, query_term_offsets, stats, point):
        # QLDirichlet.kernel_inputs, the same numbers without its Python loops over every term at
        # every point (a DRCD grid: 150,000 terms x 20 points): what does not depend on the point is
        # gathered once per query set, the rest is array arithmetic, each value the same IEEE
        # operation as the scalar code's (np.log of an array gives the bits of np.log of each
        # element) and each query's sums added in the same order (query_sums)
        inputs = self._set_inputs(terms, stats)
        mu = point["mu"]
        term_constants = mu * inputs.backgrounds
        weights = self.input_weights(inputs, point)
        constants, lengths = query_sums(weights * np.log(term_constants), weights,
                                        np.asarray(query_term_offsets, dtype=np.int64))
        return np.array([mu], dtype=np.float64), term_constants, constants, lengths

    def term_weights(self, terms, stats, point):
        return self.input_weights(self._set_inputs(terms, stats), point)

    def input_weights(self, inputs: PhraseSetInputs, point: Mapping[str, float]) -> np.ndarray:
        """:meth:`term_weight` of every term of a query set (``inputs``), as an array."""
        lambdas = np.array([self.phrase_lambda(annotation, point) for annotation in inputs.annotations],
                           dtype=np.float64)
        lam = lambdas[inputs.annotation_of]
        # qtf for a word, lambda_i qtf for phrase i, -lambda_i qtf for its words (-0.0 for lambda_i = 0,
        # as the scalar code gives)
        return np.where(inputs.kinds == WORD_KIND, inputs.qtfs,
                        np.where(inputs.kinds == PHRASE_KIND, lam, -lam) * inputs.qtfs)

    def _set_inputs(self, terms, stats) -> PhraseSetInputs:
        """The per-term values of a query set that no grid point changes, made at its first point."""
        # one query set's, kept with its terms list (so ``is`` cannot match a later set's list) for
        # as long as the model: an instance a retrieval (irgrid.models.get_model)
        cached = getattr(self, "_set_inputs_cache", None)
        if cached is not None and cached[0] is terms and cached[1] == stats:
            return cached[2]
        annotations: list[Inseparability | None] = []
        position: dict[int, int] = {}
        kinds = np.empty(len(terms), dtype=np.int8)
        annotation_of = np.zeros(len(terms), dtype=np.int64)
        for i, t in enumerate(terms):
            if t.group == TERMS_GROUP:
                kinds[i] = WORD_KIND
                continue
            kinds[i] = PHRASE_KIND if t.group.startswith(PHRASE_PREFIX) else WORDS_OF_PHRASE_KIND
            # a phrase and its words share one annotation: its lambda_i is computed once a point
            # (the ids are those of objects the terms hold, alive as long as the cache)
            j = position.get(id(t.annotation))
            if j is None:
                j = position[id(t.annotation)] = len(annotations)
                annotations.append(t.annotation)
            annotation_of[i] = j
        inputs = PhraseSetInputs(
            backgrounds=np.array([self.background(t, stats) for t in terms], dtype=np.float64),
            qtfs=np.array([float(t.qtf) for t in terms], dtype=np.float64),
            kinds=kinds, annotations=annotations or [None], annotation_of=annotation_of)
        self._set_inputs_cache = (terms, stats, inputs)
        return inputs


WORD_KIND, PHRASE_KIND, WORDS_OF_PHRASE_KIND = 0, 1, 2


@dataclass(frozen=True)
class PhraseSetInputs:
    """A query set's terms as :meth:`PhraseModel.kernel_inputs` needs them, one entry a term.

    ``kinds``: a query word, a phrase or a word of a phrase again; ``annotation_of``: the
    phrase's annotation in ``annotations`` (0 for a word, unused).
    """

    backgrounds: np.ndarray
    qtfs: np.ndarray
    kinds: np.ndarray
    annotations: list
    annotation_of: np.ndarray


@njit(cache=True, nogil=True)
def query_sums(products, weights, query_term_offsets):
    """Each query's sum of ``products`` and of ``weights`` (its terms' rows), added one term at a time
    from 0.0 in query order: the bits of parts.dirichlet.dirichlet_query_constants' loop (numpy's sums add pairwise)."""
    num_queries = len(query_term_offsets) - 1
    constants = np.zeros(num_queries, np.float64)
    lengths = np.zeros(num_queries, np.float64)
    for q in range(num_queries):
        constant = 0.0
        length = 0.0
        for i in range(query_term_offsets[q], query_term_offsets[q + 1]):
            constant += products[i]
            length += weights[i]
        constants[q] = constant
        lengths[q] = length
    return constants, lengths


class UnigramWords(PhraseModel):
    """Uni: Dirichlet query likelihood over the query's words (``ql_dirichlet``'s scores, to the bit)."""

    name = "uni"
    description = "phrase paper's Uni: query likelihood over words (Chinese: characters), Dirichlet"
    uses_phrases = False
    ranks_as = "ql_dirichlet"

    def phrase_weight(self, phrase, point):
        return 0.0


class PhrasesOnly(PhraseModel):
    """P: the query as a sequence of phrases only (a multi-word phrase one unit, other words words)."""

    name = "p"
    description = "phrase paper's P: the query as a sequence of phrases only, Dirichlet"

    def phrase_weight(self, phrase, point):
        return 1.0


PHRASE_WEIGHT = Parameter("phrase_weight", 0.5, 0.0, 1.0, "the one weight of every phrase against its words")


class FixedPhraseWeight(PhraseModel):
    """PU: phrases and words combined with one fixed weight for every phrase (weighted geometric mean)."""

    name = "pu"
    description = "phrase paper's PU: phrase and word models, one fixed weight for all phrases"
    parameters = (MU_INDRI, PHRASE_WEIGHT)

    def phrase_weight(self, phrase, point):
        return point["phrase_weight"]


T1 = Parameter("t1", 0.1, -1.0, 1.0, "normalised idf difference at and below which a phrase gets weight 0 "
               "(lost in the extract; docs/models.md)", high_param="t2")
T2 = Parameter("t2", 0.4, -1.0, 1.0, "normalised idf difference from which a phrase gets lambda_max (paper: 0.4)")
LAMBDA_MAX = Parameter("lambda_max", 0.9, 0.0, 1.0, "the highest weight of a phrase (paper: 0.9)")
PMI_THRESHOLD = Parameter("pmi_threshold", 1.0, -1e9, 1e9, "phrases whose PMI (bits) is at most this are "
                          "scored as words (paper: 1)")


class PhraseInseparability(PhraseModel):
    """PM: each phrase weighted by its inseparability, the normalised idf difference of phrase and words."""

    name = "pm"
    description = "phrase paper's PM: per-phrase weight from the normalised idf difference (reconstructed)"
    parameters = (MU_INDRI, T1, T2, LAMBDA_MAX, PMI_THRESHOLD)

    def phrase_weight(self, phrase, point):
        if point["t1"] > point["t2"]:
            raise ConfigError(f"model {self.name!r}: t1={point['t1']:g} must not exceed t2={point['t2']:g}")
        if phrase.pmi <= point["pmi_threshold"]:
            return 0.0
        return inseparability_weight(phrase.x, point["t1"], point["t2"], point["lambda_max"])
