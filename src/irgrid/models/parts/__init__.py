"""The weighting functions the fused kernel scores: each one file declaring its parts, and this registry.

Adding one: a file here with its :class:`~irgrid.models.parts.base.Weighting`, a line below, and
``weighting = WEIGHTINGS[...]`` on its model (a :class:`~irgrid.models.base.WeightedModel`).
"""

from __future__ import annotations

from .base import Weighting
from .bm25 import BM25
from .dirichlet import DIRICHLET
from .sentence_tfidf import SENTENCE_TFIDF

WEIGHTINGS: dict[str, Weighting] = {weighting.name: weighting for weighting in (BM25, DIRICHLET, SENTENCE_TFIDF)}

__all__ = ["WEIGHTINGS", "Weighting"]
