"""Parsing queries (and, later, sentences) with a packaged spaCy pipeline: phrases, dependency trees."""

from .phrases import PARSED_SUFFIX, parse_topics, parsed_queryset, phrases_of, write_parsed_topics
from .pipeline import DEFAULT_PIPELINE, ParserNotInstalled, load_pipeline

__all__ = [
    "DEFAULT_PIPELINE",
    "PARSED_SUFFIX",
    "ParserNotInstalled",
    "load_pipeline",
    "parse_topics",
    "parsed_queryset",
    "phrases_of",
    "write_parsed_topics",
]
