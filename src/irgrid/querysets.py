"""Query-set names, and the word filter ``X+minNwords``.

A query set is one the collection's registry entry defines (``text``, ``title``, ``desc``...) or
one derived from it, named by suffixes, in this order::

    BASE [+minNwords] [+parser | +list | +pmi | +segmenter | +judged | +alljudged]

``+minNwords``
    the queries of BASE that have N or more words, in BASE's order (:func:`keep_min_words`):
    the ADM paper's short queries are title queries of more than two words, ``title+min3words``.
``+parser``, ``+list``, ``+pmi``, ``+segmenter``
    each query with its phrases (:mod:`irgrid.parsing`, :mod:`irgrid.phrases`);
``+judged``
    each query with its judged documents, which its runs re-rank (:mod:`irgrid.sentences.protocol`).

So ``title+min3words+parser`` parses the filtered titles. Words are counted as the English
analyzers' tokenizer (``lucene``) splits the query, before stop words are removed and before
stemming: the papers that filter (seed 000) keep stop words, and a count that does not depend on
the analyzer keeps one query set the same queries under every analyzer an experiment compares
(the topics are made once per collection, not per analyzer). ``high-speed flow`` is three words,
``U.S.A.`` one, ``the effect of`` three.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .analysis.tokenize import lucene_tokenize
from .errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

#: query sets made from another: X+parser (a dependency parse and its noun phrases, irgrid.parsing),
#: X+list, X+pmi, X+segmenter (phrases from a list, collection PMI or a Chinese segmenter, irgrid.phrases);
#: X+judged, X+alljudged (each query re-ranks its judged documents; the questions with a relevant one,
#: or all: irgrid.sentences.protocol)
DERIVED_QUERYSET_SUFFIXES = ("+parser", "+list", "+pmi", "+segmenter", "+judged", "+alljudged")
#: the word filter's suffix: N without leading zeros, so one filter has one name (and one set of files)
MIN_WORDS_SUFFIX = re.compile(r"\+min([1-9][0-9]*)words$")
#: a '+'-separated part of a name that looks meant as the word filter (min3, min0words, min3word...)
_LOOKS_LIKE_MIN_WORDS = re.compile(r"min[0-9]*(?:words?)?", re.IGNORECASE)
EXAMPLE = "title+min3words"
#: the workflow's wildcard for the query set a derived query set is made from: a registry query set,
#: filtered or not (``title``, ``title+min3words``)
FILTERED_QUERYSET_WILDCARD = r"[^/+]+(?:\+min[1-9][0-9]*words)?"


@dataclass(frozen=True)
class QuerySetName:
    """A query-set name read as ``base [+minNwords] [+derivation]``."""

    base: str
    min_words: int | None = None
    derivation: str | None = None  # "parser", "list", "pmi", "segmenter", "judged", "alljudged"


def parse_queryset(name: str) -> QuerySetName:
    """The parts of a query-set name (see the module docstring); a name without suffixes is all base.

    Reads from the right, so a registry query set whose own name holds a ``+`` (``title+desc``) is
    still a base. Malformed filters are not reported here: :func:`check_queryset_name` does.
    """
    rest, derivation = name, None
    for suffix in DERIVED_QUERYSET_SUFFIXES:
        if rest.endswith(suffix) and len(rest) > len(suffix):
            rest, derivation = rest[: -len(suffix)], suffix[1:]
            break
    min_words = None
    found = MIN_WORDS_SUFFIX.search(rest)
    if found and found.start() > 0:
        rest, min_words = rest[: found.start()], int(found.group(1))
    return QuerySetName(rest, min_words, derivation)


def base_queryset(name: str) -> str:
    """The registry's query set that query set ``name`` is made from (``title+min3words+parser`` -> ``title``)."""
    return parse_queryset(name).base


def min_words_queryset(name: str) -> tuple[str, int] | None:
    """``(query set filtered, N)`` of a name ending in the word filter (``title+min3words`` ->
    ``("title", 3)``), or None for any other name (``title``, ``title+min3words+parser``)."""
    parsed = parse_queryset(name)
    if parsed.min_words is None or parsed.derivation is not None:
        return None
    return parsed.base, parsed.min_words


def check_queryset_name(name: str, source: str, key: str) -> None:
    """A ConfigError naming ``source`` and ``key`` when ``name`` writes the word filter wrongly.

    Caught: a part that looks like the filter but is not ``minNwords`` with N >= 1 (``title+min3``,
    ``title+min0words``, ``title+min03words``) and the filter after a derivation
    (``title+parser+min3words``: the filter comes first, ``title+min3words+parser``).
    """
    parsed = parse_queryset(name)
    misplaced = [part for part in parsed.base.split("+")[1:] if _LOOKS_LIKE_MIN_WORDS.fullmatch(part)]
    if parsed.min_words is not None and parse_queryset(parsed.base).derivation is not None:
        misplaced.append(f"min{parsed.min_words}words")
    if not misplaced:
        return
    part = misplaced[0]
    if MIN_WORDS_SUFFIX.fullmatch("+" + part):
        raise ConfigError(f"{source}: {key}: query set {name!r}: the word filter +{part} comes right after the "
                          "registry's query set and before +parser, +list, +pmi, +segmenter or +judged, "
                          f"e.g. {EXAMPLE}+parser")
    raise ConfigError(f"{source}: {key}: query set {name!r}: the word filter is written +minNwords with N a whole "
                      f"number from 1, no leading zero (keep the queries of N or more words), e.g. {EXAMPLE}; "
                      f"found +{part}")


def query_words(text: str | None) -> list[str]:
    """The words of a query as the filter counts them: the ``lucene`` tokenizer's tokens, stop words kept."""
    return lucene_tokenize(text or "")


def keep_min_words(topics: pd.DataFrame, min_words: int, queryset: str, source: str | os.PathLike = "topics"
                   ) -> pd.DataFrame:
    """The rows of ``topics`` whose ``text`` has ``min_words`` or more words (:func:`query_words`), in order.

    Every column is kept. A filter that keeps no query is a ConfigError naming the query set and
    ``source`` (the topics file): a row of no query would be a table row of nothing.
    """
    # deferred: the workflow imports this module to plan; pandas and pyarrow come in only when a query set is written
    import pandas as pd

    if isinstance(min_words, bool) or not isinstance(min_words, int) or min_words < 1:
        raise ConfigError(f"query set {queryset!r}: the word filter needs a whole number of words from 1, "
                          f"not {min_words!r}")
    counts = [len(query_words(None if pd.isna(text) else str(text))) for text in topics["text"]]
    kept = topics[[count >= min_words for count in counts]].reset_index(drop=True)
    if kept.empty:
        longest = max(counts, default=0)
        raise ConfigError(f"{source}: query set {queryset!r} keeps no query: none of the {len(topics)} queries "
                          f"has {min_words} or more words (the longest has {longest})")
    return kept


def write_min_words_topics(topics_path: str | os.PathLike, out: str | os.PathLike, min_words: int,
                           queryset: str) -> pd.DataFrame:
    """:func:`keep_min_words` of a topics Parquet file into ``out`` (written atomically); returns the kept rows."""
    # deferred: the workflow imports this module to plan; pandas and pyarrow come in only when a query set is written
    import pyarrow as pa
    import pyarrow.parquet as pq

    # deferred: the workflow imports this module to plan; pandas and pyarrow come in only when a query set is written
    from .io import write_parquet
    from .runs import read_topics

    topics = read_topics(topics_path)
    kept = keep_min_words(topics, min_words, queryset, topics_path)
    schema = pq.read_schema(topics_path).remove_metadata()
    write_parquet(pa.Table.from_pandas(kept, schema=schema, preserve_index=False), out)
    log.info("%s: kept %d of %d queries (%d or more words), dropped %s", queryset, len(kept), len(topics), min_words,
             sorted(set(topics["qid"].astype(str)) - set(kept["qid"].astype(str))))
    return kept
