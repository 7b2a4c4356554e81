"""The model registry: config names a model family by its ``name``."""

from __future__ import annotations

from ..errors import ConfigError
from .base import CollectionStatistics, Parameter, QueryTerm, RetrievalModel
from .lm import (KLDirichletML, QLAbsoluteDiscounting, QLDirichlet, QLGJM1, QLGJM2, QLJelinekMercer, QLTwoStage,
                 SmoothedQueryLikelihood, smoothed_probabilities)
from .weighting import BM25

MODEL_FAMILIES: dict[str, type[RetrievalModel]] = {
    model.name: model
    for model in (BM25, QLJelinekMercer, QLDirichlet, QLAbsoluteDiscounting, QLTwoStage, QLGJM1, QLGJM2, KLDirichletML)
}


def get_model(family: str) -> RetrievalModel:
    """An instance of the model family named ``family``."""
    try:
        return MODEL_FAMILIES[family]()
    except KeyError:
        raise ConfigError(
            f"unknown model family {family!r}; known families: {', '.join(sorted(MODEL_FAMILIES))}"
        ) from None


__all__ = [
    "BM25",
    "CollectionStatistics",
    "KLDirichletML",
    "MODEL_FAMILIES",
    "Parameter",
    "QLAbsoluteDiscounting",
    "QLDirichlet",
    "QLGJM1",
    "QLGJM2",
    "QLJelinekMercer",
    "QLTwoStage",
    "QueryTerm",
    "RetrievalModel",
    "SmoothedQueryLikelihood",
    "get_model",
    "smoothed_probabilities",
]
