"""Query sets with identified phrases: ``X+list``, ``X+pmi`` and ``X+segmenter``.

The phrase model of Shi & Nie (SIGIR 2009) scores a query's phrases beside its words, so
each query needs its phrases.  Besides the dependency parse (``X+parser``,
:mod:`irgrid.parsing.phrases`), three methods find them:

``list``
    the multi-word entries of a phrase list found in the query (:mod:`.lists`);
``pmi``
    the adjacent word pairs of the query with a high PMI in the collection (:mod:`.pmi`);
``segmenter``
    the words of two or more characters of a Chinese query as jieba segments it (:mod:`.segment`).

A query set ``X+method`` is query set ``X`` with a ``phrases`` column (the query's phrases
as surface strings of its text, in query order), written once per query set; the models
analyze each phrase with the index's analyzer (:func:`irgrid.retrieve.compiled.analyzed_queries`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import pandas as pd
import pyarrow as pa

from ..analysis.tokenize import WORD_RE
from ..errors import ConfigError
from ..io import write_parquet
from ..runs import read_topics
from .lists import PhraseTable, match_phrases, read_phrase_list
from .pmi import pmi_phrases
from .segment import HAN_RE, segment_phrases

#: the phrase identification methods, each the suffix of its query sets (``text+pmi``)
METHODS = ("list", "pmi", "segmenter")

PHRASE_TOPICS_SCHEMA = pa.schema([
    pa.field("qid", pa.string()),
    pa.field("text", pa.string()),
    pa.field("phrases", pa.list_(pa.string())),
])


def identified_queryset(name: str) -> tuple[str, str] | None:
    """``(base query set, method)`` of a query set with identified phrases (``text+pmi`` ->
    ``("text", "pmi")``), or None for any other name (``text``, ``text+parser``)."""
    base, sep, method = name.rpartition("+")
    return (base, method) if sep and base and method in METHODS else None


def phrase_words(phrase: str) -> list[str]:
    """The words of a phrase as the analyzers here count them: each Han character is a word
    of its own, and every other maximal run of letters and digits is a word."""
    words = []
    for token in (phrase or "").split():
        words.extend(_split_words(token))
    return words


def _split_words(token: str) -> list[str]:
    out = []
    for run in WORD_RE.findall(token):
        start = 0
        for match in HAN_RE.finditer(run):
            if match.start() > start:
                out.append(run[start: match.start()])
            out.append(match.group())
            start = match.end()
        if start < len(run):
            out.append(run[start:])
    return out


def has_phrase(phrases: Iterable[str]) -> bool:
    """True when one of ``phrases`` has two or more words (:func:`phrase_words`).

    That is, a phrase that analyzes to two or more terms under the analyzers here: two words
    separated by a space or punctuation (``boundary layer``, ``high-speed``), or two Han
    characters (``城市``, which the Chinese analyzers index one character a term).  A
    one-word phrase (``effects``) is no phrase for the phrase models.
    """
    return any(len(phrase_words(phrase)) >= 2 for phrase in phrases if phrase is not None)


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ConfigError(f"unknown phrase identification method {method!r}; known: {', '.join(METHODS)}")


def identify_phrases(topics: pd.DataFrame, method: str, *, phrase_list: str | os.PathLike | Sequence[str] | None = None,
                     documents: Iterable[str] | None = None, pmi_threshold: float = 3.0, min_count: int = 3,
                     convert: str = "t2s") -> pd.DataFrame:
    """``topics`` (qid, text) with each query's phrases by ``method`` (see the module docstring).

    ``phrase_list`` (method ``list``): a phrase-list file or a sequence of phrases.
    ``documents`` (method ``pmi``): the collection's document texts, read once.
    ``pmi_threshold``, ``min_count``: see :func:`irgrid.phrases.pmi.pmi_phrases`.
    ``convert`` (method ``segmenter``): the OpenCC conversion before segmenting, or ``"none"``.
    Returns a DataFrame qid, text, phrases (a list of strings per query).
    """
    _check_method(method)
    qids = [str(qid) for qid in topics["qid"]]
    texts = ["" if text is None or (isinstance(text, float) and pd.isna(text)) else str(text) for text in topics["text"]]
    if method == "list":
        if phrase_list is None:
            raise ConfigError("phrase identification method 'list' needs a phrase list (config key phrases.list)")
        entries = read_phrase_list(phrase_list) if isinstance(phrase_list, (str, os.PathLike)) else list(phrase_list)
        table = PhraseTable.of(entries)
        phrases = [match_phrases(text, table) for text in texts]
    elif method == "pmi":
        if documents is None:
            raise ConfigError("phrase identification method 'pmi' needs the collection's documents")
        found = pmi_phrases(dict(zip(range(len(texts)), texts)), documents, pmi_threshold, min_count)
        phrases = [found[i] for i in range(len(texts))]
    else:
        phrases = [segment_phrases(text, convert) for text in texts]
    return pd.DataFrame({"qid": qids, "text": texts, "phrases": phrases}, columns=PHRASE_TOPICS_SCHEMA.names)


def write_phrase_topics(topics_path: str | os.PathLike, out: str | os.PathLike, method: str, *,
                        phrase_list: str | os.PathLike | Sequence[str] | None = None,
                        documents: Iterable[str] | None = None, pmi_threshold: float = 3.0, min_count: int = 3,
                        convert: str = "t2s") -> pd.DataFrame:
    """Identify the phrases of a topics Parquet file into ``out`` (written atomically, schema
    :data:`PHRASE_TOPICS_SCHEMA`); returns the table (see :func:`identify_phrases`)."""
    _check_method(method)
    table = identify_phrases(read_topics(topics_path), method, phrase_list=phrase_list, documents=documents,
                             pmi_threshold=pmi_threshold, min_count=min_count, convert=convert)
    write_parquet(pa.Table.from_pandas(table, schema=PHRASE_TOPICS_SCHEMA, preserve_index=False), out)
    return table
