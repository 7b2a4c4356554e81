"""Pseudo-relevance feedback as a stage of retrieval: first run -> feedback documents -> weighted query -> run.

A family ``<family>+<method>`` (``bm25_lucene+rm3_anserini``, ``ql_dirichlet+rm3``) is ``<family>``
with a feedback stage: its parameters are the family's plus the method's (:data:`FEEDBACK_PARAMETERS`),
and :func:`retrieve_with_feedback` computes a grid of its points as

1. the first stage: ``<family>`` at the point's own family parameters, once per distinct such
   point of the grid (:func:`first_stage`), down to the most feedback documents any point asks for;
2. the feedback statistics: each feedback document's terms, read once from the index's forward
   index for all points (:func:`document_terms`);
3. per point, each query's expanded query (word -> weight: :mod:`irgrid.feedback.rm3`);
4. the second stage: ``<family>`` at the same family parameters scoring the expanded queries, a
   term's weight multiplying its score as a query frequency does (Lucene's BooleanQuery of
   BoostQuery clauses: the sum of weight x the term's score). The postings of every expanded
   query's terms are read once for the grid.

A family scoring query features (SDM's windows, phrases, ADM's pairs) ranks the feedback documents
in the first stage; the expanded query is a bag of words, scored in the second stage by the
bag-of-words family the feature family is built on (:func:`expansion_family`: SDM's is query
likelihood with its own mu), or the one it declares (the sentence MRF's: its single-term potential,
``ql_jm`` with alpha_i as lambda). This is Anserini's ``-sdm -rm3``: ``Rm3Reranker`` searches a
BooleanQuery of the expanded query's weighted terms with the searcher's similarity.

So a grid over ``fb_docs x fb_terms x original_query_weight`` runs its first stage once.

Topics with a ``candidates`` column (re-ranking: each query ranks its own candidates) keep to them
in both stages: the feedback documents are the top candidates, the second stage ranks every candidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import ConfigError
from ..features.sentence_parses import SentenceParses
from ..models import get_model
from ..models.base import RetrievalModel
from ..runs import CANDIDATES_COLUMN
from .axiom import anserini_axiom_query, pool, pool_words
from .rm3 import anserini_document_vector, anserini_relevance_model, relevance_model

#: postings (summed over a block's queries, a word counted for each query it is in) that the second
#: stage holds at once: it scores the expanded queries a block of queries at a time under this
FEEDBACK_BLOCK_POSTINGS = 20_000_000


def first_stage(scorer, model: RetrievalModel, queries, point: Mapping[str, float], depth: int):
    """The first stage's ranking of every query at one point: ``(docids, scores, offsets)``
    (:meth:`irgrid.retrieve.Scorer.top`). Its own function so that a test can count the calls."""
    return scorer.top(model, queries, point, depth)


def document_terms(index, docids: Iterable[int]) -> dict[int, Counter]:
    """docid -> its analysed terms' counts, from the index's forward index (each document read once)."""
    docids = sorted({int(d) for d in docids})
    return {docid: Counter(terms) for docid, terms in zip(docids, index.forward(docids))}


def expanded_queries(method: str, index, query_tokens: Mapping[str, list[str]], rankings: Mapping[str, tuple],
                     terms_of: Mapping[int, Counter], fb_point: Mapping[str, float],
                     vectors_cache: dict | None = None) -> dict[str, dict[str, float]]:
    """qid -> the expanded query (word -> weight) of ``method`` at one feedback point.

    ``rankings``: qid -> the first stage's (docids, scores) in rank order; ``vectors_cache`` keeps what
    the points of a grid share: Anserini's per-document vectors (they depend on fb_terms only) and the
    document frequencies of the feedback documents' words.
    """
    fb_docs, fb_terms = int(fb_point["fb_docs"]), int(fb_point["fb_terms"])
    vectors_cache = {} if vectors_cache is None else vectors_cache
    if method == "ax_anserini":
        return _axiom_queries(index, query_tokens, rankings, terms_of, fb_point)
    weight = float(fb_point["original_query_weight"])
    max_df = float(fb_point.get("fb_max_df", 1.0))
    out = {}
    if method == "rm3_anserini" or max_df < 1.0:
        df = vectors_cache.get("df")
        if df is None:  # every feedback document's words, looked up once for the grid
            words = sorted({word for counts in terms_of.values() for word in counts})
            df = vectors_cache["df"] = {word: stats[0] for word, stats in index.term_stats(words).items()}
    if method == "rm3" and max_df < 1.0:
        # the counts of the words found in at most fb_max_df of the documents, made once for the grid's
        # points of this fb_max_df; |D| stays the document's length
        key = ("counts below max_df", max_df)
        if key not in vectors_cache:
            common = {word for word, count in df.items() if count / index.num_docs > max_df}
            vectors_cache[key] = {d: Counter({w: tf for w, tf in counts.items() if w not in common})
                                  for d, counts in terms_of.items()}
        terms_of = vectors_cache[key]
    for qid, tokens in query_tokens.items():
        docids, scores = rankings[qid]
        docids, scores = docids[:fb_docs], scores[:fb_docs]
        if method == "rm3":
            out[qid] = relevance_model(tokens, [terms_of[int(d)] for d in docids],
                                       [float(index.doc_lengths[int(d)]) for d in docids], scores, fb_terms, weight)
        else:
            if len(scores) and float(np.min(scores)) < 0.0:
                raise ConfigError(f"feedback method {method!r} weighs each feedback document by its first-stage score, "
                                  f"which must not be negative as Lucene's are not (query {qid!r} has "
                                  f"{float(np.min(scores)):g}): a log-likelihood family takes '+rm3'")
            vectors = []
            for d in docids:
                key = (int(d), fb_terms)
                if key not in vectors_cache:
                    vectors_cache[key] = anserini_document_vector(terms_of[int(d)], df, index.num_docs, fb_terms)
                vectors.append(vectors_cache[key])
            out[qid] = anserini_relevance_model(tokens, vectors, [float(np.float32(s)) for s in scores], fb_terms,
                                                weight)
    return out


def _axiom_queries(index, query_tokens, rankings, terms_of, fb_point) -> dict[str, dict[str, float]]:
    """qid -> Ax's expanded query (:mod:`irgrid.feedback.axiom`); ``terms_of`` holds every pool document."""
    fb_docs = int(fb_point["fb_docs"])
    words_of: dict[int, list[str]] = {}  # each pool document's words, filtered once for every query
    by_docno = _docids_by_docno(index)
    df = {word: stats[0] for word, stats in
          index.term_stats(sorted({t for tokens in query_tokens.values() for t in tokens})).items()}
    out = {}
    for qid, tokens in query_tokens.items():
        docids = rankings[qid][0][:fb_docs]
        chosen = pool(docids, by_docno, fb_docs * int(fb_point["ax_n"]), int(fb_point["ax_seed"]))
        for d in chosen - words_of.keys():
            words_of[d] = pool_words(terms_of[d])
        out[qid] = anserini_axiom_query(tokens, {d: words_of[d] for d in sorted(chosen)}, df, index.num_docs,
                                        int(fb_point["fb_terms"]), float(fb_point["ax_beta"]))
    return out


def _docids_by_docno(index) -> np.ndarray:
    """The docids in docno order (Anserini sorts its documents by their id field to draw from them)."""
    docnos = np.asarray(index.docnos, dtype=object)
    return np.argsort(docnos, kind="stable").astype(np.int64)


def _pool_docids(index, rankings: Mapping[str, tuple], points: Sequence[Mapping[str, float]]) -> set[int]:
    """Every document an Ax pool of ``points`` can hold: its top documents and the random draw's."""
    by_docno = _docids_by_docno(index)
    out: set[int] = set()
    for point in points:
        fb_docs = int(point["fb_docs"])
        for docids, _ in rankings.values():
            out |= pool(docids[:fb_docs], by_docno, fb_docs * int(point["ax_n"]), int(point["ax_seed"]))
    return out


def retrieve_with_feedback(scorer, topics: pd.DataFrame, family: str, points: Sequence[Mapping[str, float]],
                           depth: int = 1000, as_arrow: bool = False, parses=None):
    """Runs of the feedback family ``family`` at each of ``points`` (checked), as
    :func:`irgrid.retrieve.retrieve_grid` gives them, scored by ``scorer`` (an :class:`irgrid.retrieve.Scorer`
    of the index). ``parses``: the collection's sentence parses (a path or a loaded
    :class:`irgrid.features.sentence_parses.SentenceParses`), read only where the first stage scores
    parse-tree features (the sentence MRF)."""
    model = get_model(family)
    index = scorer.index
    base, expansion = model.base(), model.expansion()
    points = [model.check_point(point) for point in points]
    query_tokens = {str(qid): index.analyzer(text) for qid, text in zip(topics["qid"], topics["text"])}

    # 1. the first stage, once per distinct family point, as deep as its deepest feedback point
    base_points: dict[tuple, dict[str, float]] = {}
    deepest: dict[tuple, int] = {}
    for point in points:
        key = tuple(sorted(model.base_point(point).items()))
        base_points[key] = model.base_point(point)
        deepest[key] = max(deepest.get(key, 0), int(point["fb_docs"]))
    if base.uses_parses and parses is not None and not hasattr(parses, "tree"):
        parses = SentenceParses.load(parses, index)
    first_queries = scorer.prepare(topics, base, list(base_points.values()), parses=parses)
    first_queries.warn_if_empty()
    rankings: dict[tuple, dict[str, tuple]] = {}
    for key, base_point in base_points.items():
        docids, scores, offsets = first_stage(scorer, base, first_queries, base_point, deepest[key])
        rankings[key] = {qid: (docids[offsets[q]:offsets[q + 1]], scores[offsets[q]:offsets[q + 1]])
                         for q, qid in enumerate(first_queries.qids)}
    for ranking in rankings.values():  # a query without a term of the collection ranks nothing
        for qid in query_tokens:
            ranking.setdefault(qid, (np.zeros(0, np.int32), np.zeros(0, np.float64)))
    del first_queries

    # 2. the feedback documents' terms, read once for every point
    feedback_docids = {int(d) for ranking in rankings.values() for docids, _ in ranking.values() for d in docids}
    if model.method == "ax_anserini":
        for key, ranking in rankings.items():
            feedback_docids |= _pool_docids(index, ranking, [p for p in points
                                                             if tuple(sorted(model.base_point(p).items())) == key])
    terms_of = document_terms(index, feedback_docids)

    # 3. each point's expanded queries; 4. their terms' postings read once a block of queries, then
    # each point scores the block: the postings in memory are a block's, however many queries
    vectors_cache: dict = {}
    expanded = [expanded_queries(model.method, index, query_tokens,
                                 rankings[tuple(sorted(model.base_point(point).items()))], terms_of,
                                 model.feedback_point(point), vectors_cache) for point in points]
    words_of = {qid: sorted({word for queries in expanded for word in queries[qid]}) for qid in query_tokens}
    allowed = None
    if CANDIDATES_COLUMN in topics.columns:
        allowed = dict(zip(query_tokens, scorer.allowed_docids(topics, list(query_tokens))))
    tables: list[list[pa.Table]] = [[] for _ in points]
    for block in query_blocks(index, words_of, FEEDBACK_BLOCK_POSTINGS):
        postings = index.postings(sorted({word for qid in block for word in words_of[qid]}))
        for point, queries, parts in zip(points, expanded, tables):
            prepared = scorer.prepare_weighted({qid: queries[qid] for qid in block}, postings)
            if allowed is not None:  # each query re-ranks its own candidates, as in the first stage
                prepared.allowed = [allowed[qid] for qid in block]
            parts.append(scorer.run_table(expansion, prepared, model.expansion_point(point), depth))
        del postings
    runs = []
    for parts in tables:
        table = parts[0] if len(parts) == 1 else pa.concat_tables(parts).combine_chunks()
        # as Scorer.run gives a run: the column types of the per-query path (object strings)
        runs.append(table if as_arrow else table.to_pandas().astype({"qid": object, "docno": object}))
    return runs


def query_blocks(index, words_of: Mapping[str, Sequence[str]], budget: int) -> list[list[str]]:
    """The queries (``words_of``: qid -> the words of its expanded queries, in query order) cut into
    consecutive blocks whose queries' postings add up to at most ``budget`` (a query larger than that
    is a block of its own); one empty block where there are no queries."""
    df = {word: stats[0] for word, stats in
          index.term_stats(sorted({word for words in words_of.values() for word in words})).items()}
    blocks: list[list[str]] = [[]]
    size = 0
    for qid, words in words_of.items():
        cost = sum(df.get(word, 0) for word in words)
        if blocks[-1] and size + cost > budget:
            blocks.append([])
            size = 0
        blocks[-1].append(qid)
        size += cost
    return blocks
