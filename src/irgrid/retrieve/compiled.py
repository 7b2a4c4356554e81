"""A query set compiled into features, each with its postings, once for every grid point.

:func:`analyzed_queries` applies the index's analyzer to each query (and to its
parsed phrases, where the topics carry a ``phrases`` column);
:func:`compile_query_set` asks the model family for each query's features (for all
the grid points to be scored), drops the features that cannot match (unless the
model scores them: SDM and FDM, as Indri does), reads the postings of the terms
once (with positions only for the terms of windows), and counts every distinct
window once, however many queries share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..analysis.tokenize import head_words
from ..errors import ConfigError
from ..features.query import AnalyzedQuery, CompiledFeature, Feature, term
from ..features.windows import many_window_postings
from ..models.base import CollectionStatistics, QueryFeature, RetrievalModel

PHRASES_COLUMN = "phrases"


def analyzed_queries(analyzer, topics: pd.DataFrame, max_phrase_words: int | None = None) -> list[AnalyzedQuery]:
    """Each topic's analyzed terms in query order, and its analyzed phrases where the topics were parsed.

    ``max_phrase_words`` (a model's :attr:`~irgrid.models.base.RetrievalModel.max_phrase_words`): a
    phrase of more words is cut to its last ``max_phrase_words`` words before it is analyzed
    (:func:`irgrid.analysis.tokenize.head_words`); None takes every phrase whole.
    """
    parsed = PHRASES_COLUMN in topics.columns
    queries = []
    for row in topics.itertuples(index=False):
        phrases = None
        if parsed:
            listed = getattr(row, PHRASES_COLUMN)
            texts = list(listed) if listed is not None else []
            if max_phrase_words is not None:
                texts = [head_words(text, max_phrase_words) for text in texts]
            phrases = tuple(tuple(analyzer(text)) for text in texts)
        queries.append(AnalyzedQuery(str(row.qid), tuple(analyzer(row.text)), phrases))
    return queries


@dataclass(frozen=True)
class FeatureStatistics:
    df: int
    cf: int
    docids: np.ndarray
    counts: np.ndarray
    name: str  # the feature in Indri's query language, written once however many queries hold it


def compile_query_set(
    index, topics: pd.DataFrame, model: RetrievalModel, points: Iterable[Mapping[str, float]], parses=None,
    queries: list[AnalyzedQuery] | None = None,
) -> tuple[list[str], list[list[QueryFeature]]]:
    """``(qids, features of each query)``, each feature with its df, cf and postings.

    A feature naming a term absent from the collection is dropped: no document can
    match it (a term alone is dropped by every bag-of-words model here too), unless
    the model keeps it for one of ``points`` (``keeps_unseen_features``: SDM and FDM
    as Indri scores them), when it is kept with df 0, cf 0 and no postings, and
    never counted.  A window of present terms that never matches is kept, with no
    postings: the model scores its absence (Indri's 1 / (2|C|) background for a
    window never seen).  Within a query, features keep the order the model compiled
    them in, which fixes the summation order of a score.  A model that ``uses_parses`` gets each
    feature's values in the documents' parse trees from ``parses``
    (:class:`irgrid.features.sentence_parses.SentenceParses`), once per query set.  ``queries``: the
    topics' :func:`analyzed_queries`, where the caller has them already.
    """
    points = list(points)
    if queries is None:
        queries = analyzed_queries(index.analyzer, topics, model.max_phrase_words)
    compiled = [model.compile(query, points) for query in queries]
    words = sorted({word for features in compiled for c in features for word in c.feature.terms})
    present = index.term_stats(words)
    if not model.keeps_unseen_features(points):
        compiled = [[c for c in features if all(word in present for word in c.feature.terms)] for features in compiled]
    distinct: dict[Feature, None] = dict.fromkeys(c.feature for features in compiled for c in features)
    # only the features whose every term occurs can match: only they are read or counted
    seen, unseen = [], []
    for f in distinct:
        (seen if all(word in present for word in f.terms) else unseen).append(f)
    window_words = sorted({word for f in seen if not f.is_term for word in f.terms})
    term_words = sorted({f.terms[0] for f in seen if f.is_term} - set(window_words))
    no_postings = np.zeros(0, dtype=np.int32)
    statistics: dict[Feature, FeatureStatistics] = {
        f: FeatureStatistics(0, 0, no_postings, no_postings, str(f)) for f in unseen}
    if window_words:
        positional = index.positional_postings(window_words)
        for word, (lo, hi) in positional.spans.items():
            df, cf = present[word]
            statistics[term(word)] = FeatureStatistics(df, cf, positional.docids[lo:hi], positional.tfs[lo:hi], word)
        windows = [feature for feature in seen if not feature.is_term]
        for feature, found in zip(windows, many_window_postings(windows, positional, model.window_overlap)):
            statistics[feature] = FeatureStatistics(found.df, found.cf, found.docids, found.counts, str(feature))
    for word, postings in index.postings(term_words).items():
        df, cf = present[word]
        statistics[term(word)] = FeatureStatistics(df, cf, postings.docids, postings.tfs, word)
    collection = CollectionStatistics.from_index(index)
    per_query = [model.annotate(_query_features(features, statistics), collection) for features in compiled]
    if model.uses_parses:
        if parses is None:
            raise ConfigError(f"model {model.name!r} scores parse-tree features: it needs the collection's "
                              "sentence parses (irgrid retrieve --parses; the workflow passes them for a sentence "
                              "collection)")
        per_query = [model.document_values(features, parses) for features in per_query]
    return [query.qid for query in queries], per_query


def _query_features(features: list[CompiledFeature], statistics: Mapping[Feature, FeatureStatistics]
                    ) -> list[QueryFeature]:
    group_sizes: dict[str, int] = {}
    for c in features:
        group_sizes[c.group] = group_sizes.get(c.group, 0) + c.qtf
    out = []
    for c in features:
        found = statistics[c.feature]
        out.append(QueryFeature(found.name, c.qtf, found.df, found.cf, found.docids, found.counts,
                                feature=c.feature, group=c.group, group_size=group_sizes[c.group]))
    return out
