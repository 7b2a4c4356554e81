"""The model registry: config names a model family by its ``name``."""

from __future__ import annotations

from ..errors import ConfigError
from .base import CollectionStatistics, Parameter, QueryTerm, RetrievalModel
from .lm import QLDirichlet
from .weighting import BM25

MODEL_FAMILIES: dict[str, type[RetrievalModel]] = {model.name: model for model in (BM25, QLDirichlet)}


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
    "MODEL_FAMILIES",
    "Parameter",
    "QLDirichlet",
    "QueryTerm",
    "RetrievalModel",
    "get_model",
]
