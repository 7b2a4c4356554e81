"""Why a query scored as it did under a phrase model: each query's phrases, their statistics and lambda_i.

One table per (collection, analyzer, query set, model): a row per multi-word phrase of
each query as the model found it in the analyzed query, with the phrase's df and cf,
its idf and its words' mean idf, the normalised idf difference x, its PMI, and the
weight lambda_i at every distinct setting of the model's weight parameters in the
grid (mu does not change lambda_i).  A query with no phrase gets one row saying so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import pandas as pd

from ..index import IndexReader
from ..io import write_text
from ..models import get_model
from ..models.phrase import PHRASE_PREFIX, PhraseModel, phrase_group, phrase_spans
from ..retrieve.compiled import analyzed_queries, compile_query_set
from ..runs import read_topics

#: the parameters of a phrase model that do not change lambda_i
NOT_WEIGHT_PARAMETERS = frozenset({"mu"})


def weight_settings(model: PhraseModel, points: Iterable[Mapping[str, float]]) -> list[dict[str, float]]:
    """The distinct settings of the model's weight parameters among ``points`` (checked), in ascending order."""
    names = [name for name in model.parameter_names() if name not in NOT_WEIGHT_PARAMETERS]
    settings = sorted({tuple(point[name] for name in names) for point in points})
    return [dict(zip(names, setting)) for setting in settings]


def setting_label(setting: Mapping[str, float]) -> str:
    return "lambda" + ("[" + ",".join(f"{name}={value:g}" for name, value in setting.items()) + "]" if setting else "")


def phrase_weights(index, topics: pd.DataFrame, family: str, points: Iterable[Mapping[str, float]]) -> pd.DataFrame:
    """The phrase table of ``topics`` under model family ``family`` at ``points`` (see the module docstring)."""
    model = get_model(family)
    if not isinstance(model, PhraseModel):
        raise ValueError(f"model family {family!r} is not a phrase model (uni, p, pu, pm)")
    checked = [model.check_point(point) for point in points] or [model.check_point({})]
    settings = weight_settings(model, checked)
    # the same compilation the retrieve job makes: the same phrases, the same statistics
    analyzed = analyzed_queries(index.analyzer, topics, model.max_phrase_words)
    qids, per_query = compile_query_set(index, topics, model, checked, queries=analyzed)
    queries = {query.qid: query for query in analyzed}
    rows = []
    for qid, features in zip(qids, per_query):
        query = queries[qid]
        spans = phrase_spans(query.terms, query.phrases) if model.uses_phrases else []
        compiled = {f.group: f for f in features if f.group.startswith(PHRASE_PREFIX)}
        if not spans:
            rows.append({"qid": qid, "phrase": "", "status": "no phrase: scored as words"})
        for i, (start, end) in enumerate(spans):
            row = {"qid": qid, "phrase": " ".join(query.terms[start:end])}
            feature = compiled.get(phrase_group(i))
            if feature is None:
                rows.append({**row, "status": "a word of the phrase is absent from the collection: scored as words"})
                continue
            found = feature.annotation
            row.update({"df": found.df, "cf": found.cf, "idf": found.idf, "word_idf": found.word_idf, "x": found.x,
                        "pmi": found.pmi})
            row["status"] = "phrase" if found.present else "phrase absent from the collection (df 0): scored as words"
            for setting in settings:
                point = {**checked[0], **setting}
                row[setting_label(setting)] = model.phrase_lambda(found, point)
            rows.append(row)
    columns = ["qid", "phrase", "status", "df", "cf", "idf", "word_idf", "x", "pmi"]
    columns += [setting_label(setting) for setting in settings]
    return pd.DataFrame(rows).reindex(columns=columns)


def write_phrase_weights(index_path: str | os.PathLike, topics_path: str | os.PathLike, family: str,
                         points: Iterable[Mapping[str, float]], out: str | os.PathLike) -> pd.DataFrame:
    """:func:`phrase_weights` of an index and a topics file, written as TSV (atomically)."""
    table = phrase_weights(IndexReader(index_path), read_topics(topics_path), family, points)
    write_text(table.to_csv(sep="\t", index=False, float_format="%.6g"), out)
    return table
