"""The weighting functions the fused kernel scores, each one file declaring its parts; ``WEIGHTINGS``
names the project's own for their families (the kernel finds a weighting by its key, not here).

Adding one: a file here with its :class:`~irgrid.models.parts.base.Weighting` and the family that
scores with it (a :class:`~irgrid.models.base.WeightedModel` with ``parts`` set to it), and the
family's line in :data:`irgrid.models.MODEL_FAMILIES` (tests/test_weighting_parts.py does this).
"""

from __future__ import annotations

from .base import Weighting
from .bm25 import BM25
from .bm25_lucene import BM25_LUCENE
from .dirichlet import DIRICHLET
from .sentence_tfidf import SENTENCE_TFIDF

WEIGHTINGS: dict[str, Weighting] = {weighting.name: weighting for weighting in (BM25, BM25_LUCENE, DIRICHLET, SENTENCE_TFIDF)}

__all__ = ["WEIGHTINGS", "Weighting"]
