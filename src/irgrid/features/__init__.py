"""Query features: terms, phrases and windows compiled from a query, and their postings."""

from .query import (
                    ORDERED,
                    TERM,
                    UNORDERED,
                    AnalyzedQuery,
                    CompiledFeature,
                    Feature,
                    contiguous_runs,
                    counted,
                    ordered,
                    ordered_subsets,
                    phrase,
                    phrase_pairs,
                    sequential_pairs,
                    term,
                    term_pairs,
                    unordered,
)
from .windows import PositionalPostings, WindowPostings, many_window_postings, window_postings

__all__ = [
    "ORDERED",
    "TERM",
    "UNORDERED",
    "AnalyzedQuery",
    "CompiledFeature",
    "Feature",
    "PositionalPostings",
    "WindowPostings",
    "contiguous_runs",
    "counted",
    "many_window_postings",
    "ordered",
    "ordered_subsets",
    "phrase",
    "phrase_pairs",
    "sequential_pairs",
    "term",
    "term_pairs",
    "unordered",
    "window_postings",
]
