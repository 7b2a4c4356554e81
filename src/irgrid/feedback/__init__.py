"""Pseudo-relevance feedback: a first run's top documents expand the query for a second run.

A model family ``<family>+<method>`` (e.g. ``bm25_lucene+rm3_anserini``) is ``<family>`` with a
feedback stage: declared in :mod:`irgrid.models.feedback`, run by :mod:`irgrid.feedback.stage`; the
methods are in :mod:`irgrid.feedback.rm3` and :mod:`irgrid.feedback.axiom`.
"""

from ..models.feedback import FEEDBACK_METHODS, FEEDBACK_PARAMETERS, FeedbackModel, feedback_model, is_feedback_family
from .stage import retrieve_with_feedback

__all__ = ["FEEDBACK_METHODS", "FEEDBACK_PARAMETERS", "FeedbackModel", "feedback_model", "is_feedback_family",
           "retrieve_with_feedback"]
