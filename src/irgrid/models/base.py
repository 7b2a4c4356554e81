"""What every retrieval model is: a name, declared parameters, and a score.

A model scores a document as a sum over the query terms it contains plus an
optional per-document part (length normalisation or smoothing mass that does not
depend on which query terms matched). That split covers every bag-of-words model
of the papers reproduced here and lets :mod:`irgrid.retrieve` gather the
postings of a query once and score a whole parameter grid from the same arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import ConfigError
from .parts.base import Weighting, as_float_array, document_parts_array, posting_parts_array


@dataclass(frozen=True)
class Parameter:
    """A declared model parameter with its admissible range."""

    name: str
    default: float
    low: float
    high: float
    description: str
    low_inclusive: bool = True
    high_inclusive: bool = True
    #: another parameter of the model whose value bounds this one from above (t1 <= t2)
    high_param: str = ""

    def check(self, value: float, model: str) -> float:
        value = float(value)
        above_low = value >= self.low if self.low_inclusive else value > self.low
        below_high = value <= self.high if self.high_inclusive else value < self.high
        if not (above_low and below_high):
            left = "[" if self.low_inclusive else "("
            right = "]" if self.high_inclusive else ")"
            raise ConfigError(
                f"model {model!r}: parameter {self.name}={value:g} is outside "
                f"{left}{self.low:g}, {self.high:g}{right} ({self.description})"
            )
        return value


@dataclass(frozen=True)
class CollectionStatistics:
    """Collection-wide counts every model may use."""

    num_docs: int
    total_length: int
    avg_doc_length: float
    num_terms: int = 0

    @classmethod
    def from_index(cls, index) -> CollectionStatistics:
        """The statistics an index records in its stats.json."""
        stats = index.stats
        return cls(
            num_docs=int(stats["num_docs"]),
            total_length=int(stats["total_length"]),
            avg_doc_length=float(stats["avg_doc_length"]),
            num_terms=int(stats.get("num_terms", 0)),
        )


@dataclass(frozen=True)
class QueryTerm:
    """One distinct query term with its statistics and postings."""

    term: str
    qtf: int            # occurrences in the query (a float weight in a weighted query: Scorer.prepare_weighted)
    df: int             # documents containing the term
    cf: int             # occurrences in the collection
    docids: np.ndarray  # int32, ascending
    tfs: np.ndarray     # int32, aligned with docids


@dataclass(frozen=True)
class QueryFeature(QueryTerm):
    """A feature of a query (a term or a window, :mod:`irgrid.features`) with its postings.

    ``term`` is the feature written in Indri's query language, ``tfs`` its counts;
    ``group`` names the group the model compiled it into and ``group_size`` is the
    sum of the qtfs of that group's features in the same query (the normaliser of
    Indri's ``#combine``).  ``annotation`` holds what the model derived for the feature
    from the statistics of the query's other features once the query set is compiled
    (:meth:`irgrid.models.dependence.FeatureModel.annotate`; the phrase model: the
    inseparability of the feature's phrase), None where it derived nothing.
    """

    feature: object = None  # irgrid.features.Feature
    group: str = ""
    group_size: int = 1
    annotation: object = None
    #: values of the feature in each document of its postings beside the counts (name -> array aligned
    #: with ``docids``; the sentence model: where the feature's terms sit in the sentence's parse tree)
    values: object = None


def replaced(term: QueryTerm, **changes) -> QueryTerm:
    """``dataclasses.replace(term, **changes)``: a shallow copy of a query term (or feature) with those fields changed.

    Made as copy.copy makes it (the instance's fields copied as they are), without replace's pass
    over every field through the frozen ``__init__``: three times slower, and a query set's terms
    are copied once each as they are laid out (150,000 of them a DRCD query set and family).
    The classes have no ``__post_init__`` that a copy would skip; ``changes`` must name fields
    (unchecked: the callers name them in the code).
    """
    clone = object.__new__(type(term))
    clone.__dict__.update(term.__dict__)
    clone.__dict__.update(changes)  # a frozen dataclass: its __setattr__ refuses, its __dict__ does not
    return clone


class RetrievalModel:
    """Base class: subclasses set ``name``, ``parameters`` and the two score parts.

    A model may also name the :class:`~irgrid.models.parts.base.Weighting` (``weighting``)
    that the fused kernel of :mod:`irgrid.retrieve.ranking` scores in one pass over a query set's
    postings, with the per-term and per-query constants of :meth:`kernel_inputs`: a
    :class:`WeightedModel`, whose ``term_scores`` and ``document_scores`` call the same
    declared scalar parts, so both give the same numbers to the last bit.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    #: the weighting the fused kernel of irgrid.retrieve.ranking scores this model by (None: no fused path)
    weighting: ClassVar[Weighting | None] = None
    #: True for a model scoring compiled query features (terms and windows, irgrid.features):
    #: its query set is prepared with :meth:`compile`, not as a bag of terms
    uses_features: ClassVar[bool] = False
    #: True for a feature model that scores each query from the matrix of its features'
    #: counts in its candidates (:meth:`candidate_scores`) rather than per posting
    scores_candidates: ClassVar[bool] = False
    #: True for a feature model whose features carry values from the documents' dependency parses
    #: (:class:`irgrid.models.sentence.SentenceMRF`): its query set is prepared with the collection's parses
    uses_parses: ClassVar[bool] = False
    #: the family whose ranking this one reproduces (KL divergence with an ML query model ranks as
    #: Dirichlet query likelihood), so that fair-budget checks treat them as one family; "" for none
    ranks_as: ClassVar[str] = ""
    #: the bag-of-words family that scores this family's expanded query (``<family>+rm3``:
    #: :func:`irgrid.models.feedback.expansion_family`) where this family declares it rather than being
    #: defined on it: a registered family's name, "" for none declared (the sentence MRF: ``ql_jm``)
    expands_as: ClassVar[str] = ""
    #: with ``expands_as``: which of this family's parameters each of the expansion family's takes its
    #: value from, ``{expansion family's parameter: this family's}`` (one not named: the same name)
    expansion_parameters: ClassVar[Mapping[str, str]] = {}
    #: the most words a query phrase may have for this family: a longer one (a long noun phrase of a
    #: parse) is cut to its last this many words before analysis (irgrid.retrieve.compiled.analyzed_queries);
    #: None takes every phrase whole
    max_phrase_words: ClassVar[int | None] = None

    @classmethod
    def parameter_names(cls) -> list[str]:
        return [parameter.name for parameter in cls.parameters]

    @classmethod
    def check_point(cls, point: Mapping[str, float]) -> dict[str, float]:
        """Validate a parameter point; missing parameters take their defaults."""
        declared = {parameter.name: parameter for parameter in cls.parameters}
        unknown = sorted(set(point) - set(declared))
        if unknown:
            raise ConfigError(
                f"model {cls.name!r} has no parameter {', '.join(map(repr, unknown))}; "
                f"its parameters are {sorted(declared) or 'none'}"
            )
        return {
            name: parameter.check(point.get(name, parameter.default), cls.name)
            for name, parameter in declared.items()
        }

    def term_scores(
        self,
        term: QueryTerm,
        doc_lengths: np.ndarray,
        doc_unique_terms: np.ndarray,
        stats: CollectionStatistics,
        point: Mapping[str, float],
    ) -> np.ndarray:
        """Score contribution of one query term for each document in its postings.

        ``doc_lengths`` and ``doc_unique_terms`` are aligned with ``term.docids``.
        The result is multiplied by the term's query frequency by the caller.
        """
        raise NotImplementedError

    def complete_scores(
        self,
        scores: np.ndarray,
        doc_lengths: np.ndarray,
        doc_unique_terms: np.ndarray,
        terms: list[QueryTerm],
        stats: CollectionStatistics,
        point: Mapping[str, float],
    ) -> np.ndarray:
        """Add the per-document part and apply the query weight to summed term parts, in place.

        The one place that finishes a score: the scorer and the axiom analysis both call
        it, so a document scored either way gets the same number to the last bit.
        """
        document_part = self.document_scores(doc_lengths, doc_unique_terms, terms, stats, point)
        if document_part is not None:
            scores += document_part
        if terms:
            weight = self.query_weight(terms)
            if weight != 1.0:
                scores *= weight
        return scores

    def kernel_inputs(
        self, terms: list[QueryTerm], query_term_offsets: np.ndarray, stats: CollectionStatistics,
        point: Mapping[str, float],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What the fused kernel needs: ``(params, term_constants, query_constants, query_lengths)``.

        ``terms`` are the query set's terms, query ``q``'s at
        ``query_term_offsets[q]:query_term_offsets[q+1]``; the arrays are float64,
        one entry per term and per query.  Only for a model with a ``weighting``.
        """
        raise NotImplementedError(f"model {self.name!r} has no fused kernel")

    def term_weight(self, term: QueryTerm, point: Mapping[str, float]) -> float:
        """What a term's (or feature's) per-posting part is multiplied by: its query frequency here.

        A model weighting groups of features (SDM's lambdas) overrides it; the scorer and
        the fused kernels both take the weight from here, so both paths stay bit-identical.
        """
        return float(term.qtf)

    def term_weights(self, terms: Sequence[QueryTerm], stats: CollectionStatistics,
                     point: Mapping[str, float]) -> np.ndarray:
        """:meth:`term_weight` of every term of a query set, as an array (what the fused kernels take).

        A model whose weights are array arithmetic over the set overrides it with the same
        numbers (the phrase models: 150,000 terms a DRCD query set, at each of 44 points).
        """
        return np.array([self.term_weight(term, point) for term in terms], dtype=np.float64)

    def candidate_scores(self, terms, counts, doc_lengths, doc_unique_terms, stats, point, cache=None) -> np.ndarray:
        """Scores of a query's candidates from ``counts`` (features x candidates): ``scores_candidates`` models.

        A model that ``uses_parses`` also takes ``values``: per feature, its values (name -> array)
        aligned with the candidates (:func:`irgrid.retrieve.feature_values`).

        ``cache`` (a ``retrieve.QueryCache`` or None) keeps arrays that do not depend on every
        parameter between the points of a grid; the numbers are the same with or without it.
        """
        raise NotImplementedError(f"model {self.name!r} scores per posting")

    def query_weight(self, terms: list[QueryTerm]) -> float:
        """A factor applied to every score of the query (1: none); e.g. 1/|Q| for a KL score."""
        return 1.0

    def document_scores(
        self,
        doc_lengths: np.ndarray,
        doc_unique_terms: np.ndarray,
        terms: list[QueryTerm],
        stats: CollectionStatistics,
        point: Mapping[str, float],
    ) -> np.ndarray | None:
        """Per-document part independent of which query terms matched (None: zero)."""
        return None


class WeightedModel(RetrievalModel):
    """A model scored by a declared :class:`~irgrid.models.parts.base.Weighting` (``parts``).

    Its numpy ``term_scores``, ``document_scores`` and ``kernel_inputs`` come from the
    declaration, and ``weighting`` (the fused kernel's) is ``parts`` unless the class sets
    ``fused = False`` (a family scoring per query from feature counts that keeps the parts).
    """

    parts: ClassVar[Weighting]
    #: False for a subclass with no fused path (its ``weighting`` is then None)
    fused: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.weighting = getattr(cls, "parts", None) if cls.fused else None

    def term_scores(self, term, doc_lengths, doc_unique_terms, stats, point):
        parts = self.parts
        tfs, shape = as_float_array(term.tfs)
        lengths, _ = as_float_array(doc_lengths)
        constant = float(parts.term_constants(self, [term], stats, point)[0])
        return posting_parts_array(parts.kernel_key, tfs, lengths, constant,
                                   parts.point_params(self, stats, point)).reshape(shape)

    def document_scores(self, doc_lengths, doc_unique_terms, terms, stats, point):
        parts = self.parts
        if parts.document is None:
            return None
        constant, query_length = parts.query_constants(self, terms, stats, point)
        lengths, shape = as_float_array(doc_lengths)
        return document_parts_array(parts.kernel_key, lengths, parts.point_params(self, stats, point),
                                    float(constant), float(query_length)).reshape(shape)

    def kernel_inputs(self, terms, query_term_offsets, stats, point):
        return self.parts.kernel_inputs(self, terms, query_term_offsets, stats, point)
