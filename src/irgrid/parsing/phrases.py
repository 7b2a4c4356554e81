"""Query phrases from a dependency parse: the verbose-query term pairs of the ADM paper (seed 000).

The paper split the Minipar phrases of a verbose query into pairs of adjacent words.
Here a query's phrases are spaCy's noun chunks (base noun phrases read off the
dependency parse) without their determiners and punctuation: "the effects of
high-speed flow" gives ``effects`` and ``high-speed flow``.  A query set ``X+parser``
is query set ``X`` with, per query, its phrases and the parse itself (tokens, tags,
dependency labels, heads) so a reader can see where every pair came from.  The file
is written once per query set and passed along by the rules; the models analyze
each phrase with the index's analyzer (:func:`irgrid.retrieve.compiled.analyzed_queries`).
"""

from __future__ import annotations

import os

import pandas as pd
import pyarrow as pa

from ..io import write_parquet
from ..runs import read_topics
from .pipeline import DEFAULT_PIPELINE, load_pipeline

PARSED_SUFFIX = "+parser"
#: parts of speech left out of a phrase: they carry no content, and the paper's pairs join content
#: words ("What", "the", "'s", "and" and punctuation inside a noun chunk)
OUTSIDE_PHRASES = frozenset({"DET", "PRON", "PUNCT", "CCONJ", "PART", "SPACE"})

PARSED_TOPICS_SCHEMA = pa.schema([
    pa.field("qid", pa.string()),
    pa.field("text", pa.string()),
    pa.field("phrases", pa.list_(pa.string())),
    pa.field("tokens", pa.list_(pa.string())),
    pa.field("tags", pa.list_(pa.string())),
    pa.field("deps", pa.list_(pa.string())),
    pa.field("heads", pa.list_(pa.int32())),
])


def parsed_queryset(name: str) -> str | None:
    """The query set that ``name`` parses (``text+parser`` -> ``text``), or None for a plain query set."""
    return name[: -len(PARSED_SUFFIX)] if name.endswith(PARSED_SUFFIX) and len(name) > len(PARSED_SUFFIX) else None


def phrases_of(doc) -> list[str]:
    """The noun chunks of a parsed text, each without determiners, pronouns, punctuation and conjunctions."""
    phrases = []
    for chunk in doc.noun_chunks:
        words = [token.text for token in chunk if token.pos_ not in OUTSIDE_PHRASES]
        if words:
            phrases.append(" ".join(words))
    return phrases


def parse_topics(topics: pd.DataFrame, pipeline: str = DEFAULT_PIPELINE) -> pd.DataFrame:
    """``topics`` (qid, text) with each query's phrases and parse (see :data:`PARSED_TOPICS_SCHEMA`)."""
    nlp = load_pipeline(pipeline)
    rows = []
    for qid, text, doc in zip(topics["qid"], topics["text"], nlp.pipe([str(t) for t in topics["text"]])):
        rows.append({
            "qid": str(qid),
            "text": str(text),
            "phrases": phrases_of(doc),
            "tokens": [token.text for token in doc],
            "tags": [token.tag_ for token in doc],
            "deps": [token.dep_ for token in doc],
            "heads": [token.head.i for token in doc],
        })
    return pd.DataFrame(rows, columns=PARSED_TOPICS_SCHEMA.names)


def write_parsed_topics(topics_path: str | os.PathLike, out: str | os.PathLike, pipeline: str = DEFAULT_PIPELINE
                        ) -> pd.DataFrame:
    """Parse a topics Parquet file into ``out`` (written atomically); returns the parsed table."""
    parsed = parse_topics(read_topics(topics_path), pipeline)
    write_parquet(pa.Table.from_pandas(parsed, schema=PARSED_TOPICS_SCHEMA, preserve_index=False), out)
    return parsed
