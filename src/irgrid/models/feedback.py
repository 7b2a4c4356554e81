"""Feedback families as models: ``<family>+<method>`` declares ``<family>``'s parameters and the method's.

What such a family is (its parameters, its first-stage family, the bag-of-words family that scores
its expanded query) is declared here, beside the other families; :mod:`irgrid.feedback` runs it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ConfigError
from .base import Parameter, RetrievalModel

#: feedback methods: the suffix of a family name -> what docs/models.md calls it
FEEDBACK_METHODS = {
    "rm3": "RM3 (Lavrenko & Croft's relevance model interpolated with the query)",
    "rm3_anserini": "RM3 exactly as Anserini's Rm3Reranker",
    "ax_anserini": "axiomatic semantic term matching (Ax) exactly as Anserini's AxiomReranker",
}

_RM3_PARAMETERS = (
    Parameter("fb_docs", 10, 1, 1000, "feedback documents: the first stage's top fb_docs (an integer)"),
    Parameter("fb_terms", 10, 1, 1000, "feedback terms kept in the relevance model (an integer)"),
    Parameter("original_query_weight", 0.5, 0.0, 1.0, "weight of the original query model against the "
              "relevance model (RM3's lambda)"),
)
#: each method's parameters, added to its family's (Anserini's defaults)
FEEDBACK_PARAMETERS = {
    "rm3": (*_RM3_PARAMETERS, Parameter(
        "fb_max_df", 1.0, 0.0, 1.0, "a word found in more than this share of the documents is no feedback word "
        "(Anserini's RM3 fixes 0.1: it keeps stop words out where the analyzer keeps them; 1: every word)")),
    "rm3_anserini": _RM3_PARAMETERS,
    "ax_anserini": (
        Parameter("fb_docs", 20, 1, 1000, "the first stage's top documents in the pool (Anserini's R, an integer)"),
        Parameter("fb_terms", 20, 1, 1000, "words of the expanded query (Anserini's M, an integer)"),
        Parameter("ax_n", 30, 1, 1000, "the pool holds fb_docs x ax_n documents, the rest drawn at random "
                  "(Anserini's N, an integer)"),
        Parameter("ax_beta", 0.4, 0.0, 100.0, "weight of a related word's mutual information (Anserini's beta)"),
        Parameter("ax_seed", 42, 0, 2**31 - 1, "seed of the random draw of the pool (java.util.Random, an integer)"),
    ),
}
_INTEGER_PARAMETERS = ("fb_docs", "fb_terms", "ax_n", "ax_seed")


def is_feedback_family(family: str) -> bool:
    """Whether ``family`` names a family with a feedback stage (it then reads the forward index)."""
    return "+" in family


class FeedbackModel(RetrievalModel):
    """A family with a feedback stage: declares the parameters, scores nothing itself.

    Made per family name by :func:`feedback_model`; :func:`retrieve_with_feedback` runs it.
    """

    base: type[RetrievalModel]
    #: the family that scores the expanded query (:func:`expansion_family`): ``base`` for a bag-of-words family
    expansion: type[RetrievalModel]
    method: str = ""

    @classmethod
    def base_point(cls, point: Mapping[str, float]) -> dict[str, float]:
        return {name: point[name] for name in cls.base.parameter_names()}

    @classmethod
    def feedback_point(cls, point: Mapping[str, float]) -> dict[str, float]:
        return {parameter.name: point[parameter.name] for parameter in FEEDBACK_PARAMETERS[cls.method]}

    @classmethod
    def check_point(cls, point: Mapping[str, float]) -> dict[str, float]:
        checked = super().check_point(point)
        for name in _INTEGER_PARAMETERS:
            if name in checked and checked[name] != int(checked[name]):
                raise ConfigError(f"model {cls.name!r}: parameter {name}={checked[name]:g} is not a whole number")
        cls.base.check_point(cls.base_point(checked))  # the family's own checks (SDM's drop_unseen, ...)
        return checked

    @classmethod
    def expansion_point(cls, point: Mapping[str, float]) -> dict[str, float]:
        """The point of the expansion family: the family's parameters it shares (SDM's mu for QL), or
        those it declares (:func:`expansion_parameters`: the sentence MRF's alpha_i as ql_jm's lambda)."""
        return {name: point[own] for name, own in expansion_parameters(cls.base, cls.expansion).items()}


def _scores_a_bag_of_words(model: type[RetrievalModel]) -> bool:
    return not (model.uses_features or model.scores_candidates or issubclass(model, FeedbackModel))


def _within(inner: Parameter, outer: Parameter) -> bool:
    """Whether every value ``inner`` admits, ``outer`` admits."""
    low = inner.low > outer.low or (inner.low == outer.low and (outer.low_inclusive or not inner.low_inclusive))
    high = inner.high < outer.high or (inner.high == outer.high and (outer.high_inclusive or not inner.high_inclusive))
    return low and high


def expansion_parameters(base: type[RetrievalModel], expansion: type[RetrievalModel]) -> dict[str, str]:
    """Which of ``base``'s parameters each of the expansion family's takes its value from:
    ``{expansion's parameter: base's}``, by name unless ``base`` declares otherwise
    (:attr:`RetrievalModel.expansion_parameters`, with :attr:`RetrievalModel.expands_as`)."""
    declared = base.expansion_parameters if base.expands_as == expansion.name else {}
    return {name: declared.get(name, name) for name in expansion.parameter_names()}


def _declared_expansion(base: type[RetrievalModel], families: Mapping[str, type[RetrievalModel]]
                        ) -> type[RetrievalModel]:
    """The family ``base`` declares (``expands_as``), checked: a bag-of-words family each of whose
    parameters is one of ``base``'s over no wider a range."""
    expansion = families.get(base.expands_as)
    if expansion is None or not _scores_a_bag_of_words(expansion):
        raise ConfigError(f"model family {base.name!r} declares {base.expands_as!r} as the family scoring its "
                          "expanded query, which is no registered bag-of-words family")
    own = {parameter.name: parameter for parameter in base.parameters}
    unknown = sorted(set(base.expansion_parameters) - set(expansion.parameter_names()))
    if unknown:
        raise ConfigError(f"model family {base.name!r}: {expansion.name!r} has no parameter {unknown[0]!r}")
    for parameter in expansion.parameters:
        mapped = own.get(expansion_parameters(base, expansion)[parameter.name])
        if mapped is None or not _within(mapped, parameter):
            raise ConfigError(f"model family {base.name!r}: {expansion.name!r}'s parameter {parameter.name!r} "
                              "takes its value from none of its parameters with the same range")
    return expansion


def expansion_family(base: type[RetrievalModel], families: Mapping[str, type[RetrievalModel]]
                     ) -> type[RetrievalModel] | None:
    """The family that scores a bag of weighted words for ``base``: the one ``base`` declares
    (``expands_as``: the sentence MRF's single-term potential is ``ql_jm`` with its alpha_i as lambda),
    else ``base`` itself where it scores one, else the nearest registered bag-of-words family ``base``
    is defined on (its method resolution order), whose parameters ``base`` has (SDM, FDM and the
    phrase models: ql_dirichlet; BG, CULM, ADM: kl_ml); None where there is none."""
    if base.expands_as:
        return _declared_expansion(base, families)
    for cls in base.__mro__:
        if (isinstance(cls, type) and issubclass(cls, RetrievalModel) and _scores_a_bag_of_words(cls)
                and getattr(cls, "name", "") and families.get(cls.name) is cls
                and set(cls.parameter_names()) <= set(base.parameter_names())):
            return cls
    return None


_MADE: dict[str, type[FeedbackModel]] = {}


def feedback_model(family: str, families: Mapping[str, type[RetrievalModel]]) -> type[FeedbackModel]:
    """The class of the feedback family ``family`` (``<family>+<method>``), its first-stage family
    looked up in ``families`` (:func:`irgrid.models.get_model` passes the registry)."""
    made = _MADE.get(family)
    if made is None:
        base_name, _, method = family.rpartition("+")
        if method not in FEEDBACK_METHODS:
            raise ConfigError(f"unknown feedback method {method!r} in model family {family!r}; "
                              f"known methods: {', '.join(sorted(FEEDBACK_METHODS))}")
        if "+" in base_name:
            raise ConfigError(f"model family {family!r}: {base_name!r} has a feedback stage already")
        if base_name not in families:
            raise ConfigError(f"unknown model family {base_name!r}; known families: {', '.join(sorted(families))}")
        base = families[base_name]
        expansion = expansion_family(base, families)
        if expansion is None:
            raise ConfigError(f"model family {family!r}: the expanded query is a bag of words, and {base_name!r} "
                              "is built on no bag-of-words family to score it with")
        clashing = set(base.parameter_names()) & {p.name for p in FEEDBACK_PARAMETERS[method]}
        if clashing:
            raise ConfigError(f"model family {family!r}: {base_name!r} has parameters {sorted(clashing)} of its own")
        made = _MADE[family] = type(f"{base.__name__}Feedback", (FeedbackModel,), {
            "name": family,
            "description": f"{base.description}, with feedback: {FEEDBACK_METHODS[method]}",
            "parameters": (*base.parameters, *FEEDBACK_PARAMETERS[method]),
            "base": base,
            "expansion": expansion,
            "method": method,
            # the first stage's query set is prepared with the collection's parses (the sentence MRF's)
            "uses_parses": base.uses_parses,
        })
    return made
