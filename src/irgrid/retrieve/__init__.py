"""Score a query set for many parameter points of one model at once.

The postings of each query are read from the index once; every parameter point
is then scored from the same arrays, so a grid of P points costs one postings
read and P cheap vectorised passes.

Ranking contract (docs/architecture.md): candidates are the documents that
contain at least one query term (as in Lucene/Anserini); ranks are by score,
descending, ties broken by docno ascending; at most ``depth`` per query.
Topics with a ``candidates`` column (a list of docnos per query: the re-ranking
protocol of answer-sentence selection, :data:`CANDIDATES_COLUMN`) rank exactly
those documents instead, each one, also those without a query term (scored as a
document where no query term matched).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import logging
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa

from ..features.sentence_parses import SentenceParses
from ..feedback import retrieve_with_feedback
from ..index.format import docno_ranks
from ..models import CollectionStatistics, QueryTerm, RetrievalModel, get_model
from ..models.base import replaced
from ..numba_start import import_arraymath_at_numba_start
from ..runs import CANDIDATES_COLUMN, RUN_COLUMNS, RUN_SCHEMA
from . import populated
from .compiled import compile_query_set
from .populated import flat_postings, gathered, populated_empty
from .prepared import (
    QUERY_CACHE_BYTES,
    PreparedQuery,
    PreparedQuerySet,
    QueryCache,
    analyse_queries,
    feature_counts,
    feature_values,
    warn_of_empty_queries,
)
from .ranking import aot_score_and_rank, result_offsets, top_k

#: grid points a fused kernel scores per pass over the postings: a chunk's slots, tfs and lengths are
#: read once for the block, so a point costs less in a larger block, less so past a few points
#: (benchmarks/HISTORY.md); a block's rankings are held until its last point is used
BLOCK_POINTS = 8
#: postings a block of queries holds at most: a query set whose terms have more is read, scored and
#: ranked a block of consecutive queries at a time (:meth:`Scorer.grid_tops`), so that a query
#: process's memory follows a block (its flat arrays: docids, tfs, slots, candidates) and not the set
QUERY_BLOCK_POSTINGS = 10_000_000
#: result rows (a docid and a score each) one pass over a query set's blocks holds for its points:
#: with more than one block, a grid's points are scored this many rows' worth a pass
PASS_RESULT_ROWS = 25_000_000
log = logging.getLogger(__name__)
#: score_and_rank's outputs when it allocates them itself (Scorer._top_block)
_NO_OFFSETS = np.zeros(0, dtype=np.int64)
_NO_DOCIDS = np.zeros((0, 0), dtype=np.int32)
_NO_SCORES = np.zeros((0, 0), dtype=np.float64)


def _concatenated_tops(tops: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]):
    """One ``(docids, scores, offsets)`` of the rankings of consecutive blocks of queries (of one point, or
    of a block of points: rows of ``docids`` and ``scores``)."""
    offsets = [np.zeros(1, dtype=np.int64)]
    rows_before = 0
    for _, _, block_offsets in tops:
        offsets.append(block_offsets[1:] + rows_before)
        rows_before += int(block_offsets[-1])
    return (np.concatenate([docids for docids, _, _ in tops], axis=-1),
            np.concatenate([scores for _, scores, _ in tops], axis=-1), np.concatenate(offsets))


def _fixed_width_rows(strings: pa.StringArray) -> np.ndarray | None:
    """The bytes of ``strings`` as one fixed-width numpy row each, when all have one length > 0 (else None)."""
    if len(strings) == 0 or strings.null_count:
        return None
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset:strings.offset + len(strings) + 1]
    width = int(offsets[1] - offsets[0])
    if width == 0 or not (np.diff(offsets) == width).all():
        return None
    data = np.frombuffer(strings.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
    return data.view(np.dtype((np.void, width)))


@contextlib.contextmanager
def _cycle_collection_paused():
    """Python's cycle collector off for the block (as it was after).

    Preparing a query set makes several objects for every query term and window (a DRCD phrase
    family's set has 153,273 features, each copied once or twice), which live as long as the set;
    the collector's full passes that their number triggers scanned every live object and were a
    quarter to a third of the preparation's time (benchmarks/HISTORY.md). Objects freed by
    reference counting are freed as ever; the collector runs again after the block.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def query_blocks(index, topics: pd.DataFrame, budget: int | None = None) -> list[pd.DataFrame]:
    """``topics`` cut into blocks of consecutive queries whose terms' postings add up to at most ``budget``
    (:data:`QUERY_BLOCK_POSTINGS` unless given).

    A query's postings are counted from its analysed terms' document frequencies (a feature model's
    windows are not counted: they have at most as many postings as their rarest term); a query over
    the budget on its own is a block alone.  ``[topics]`` when the whole set fits, the usual case.
    """
    budget = QUERY_BLOCK_POSTINGS if budget is None else budget
    queries = analyse_queries(index, topics)
    sizes = [sum(term.df for term in terms) for terms in queries.values()]
    if sum(sizes) <= budget:
        return [topics]
    blocks: list[list[str]] = [[]]
    held = 0
    for qid, size in zip(queries, sizes):
        if blocks[-1] and held + size > budget:
            blocks.append([])
            held = 0
        blocks[-1].append(qid)
        held += size
    qids = topics["qid"].astype(str)
    return [topics[qids.isin(block)] for block in blocks]


class Scorer:
    """Holds an open index and scores prepared queries for any model and parameters."""

    def __init__(self, index, threads: int = 1):
        """``threads``: how many threads a fused-kernel query set is scored and ranked on
        (contiguous ranges of queries; the kernels release the GIL)."""
        # numba's start-up, at the first JIT kernel call if any (none where the AOT module serves every
        # call), without its SciPy import (irgrid.numba_start)
        import_arraymath_at_numba_start()
        self.index = index
        self.threads = max(1, int(threads))
        # the fused BM25 kernel gathers a posting's document length through its docid (the reader's int32)
        self.int_doc_lengths = np.ascontiguousarray(index.doc_lengths, dtype=np.int32)
        self._docno_offsets: tuple[int, pa.Buffer] | None = None  # docno_column's: rows, their offsets
        # Position of each docid in docno order: the tie-break key, stored in the index
        # (IndexReader.docno_rank). int32: the rankers look it up once per ranked candidate, and a
        # smaller table stays in cache
        docno_rank = getattr(index, "docno_rank", None)
        if docno_rank is not None:
            self.docno_order = np.ascontiguousarray(docno_rank, dtype=np.int32)
        else:  # another reader (a test's in-memory index): sorted here
            self.docno_order = docno_ranks(self.docnos_arrow)
        self.stats = CollectionStatistics.from_index(index)

    # The float64 copies of the documents' lengths and unique-term counts are made on first use: the fused
    # kernels read the reader's int32 lengths and a ranking reads no unique-term count, so a process that
    # only ranks with them never writes the copies' fresh pages (8 bytes a document each).
    @functools.cached_property
    def doc_lengths(self) -> np.ndarray:
        """Each document's length, float64, in docid order."""
        return np.asarray(self.index.doc_lengths, dtype=np.float64)

    @functools.cached_property
    def doc_unique_terms(self) -> np.ndarray:
        """Each document's number of distinct terms, float64, in docid order."""
        return np.asarray(self.index.doc_unique_terms, dtype=np.float64)

    @property
    def num_docs(self) -> int:
        return len(self.int_doc_lengths)

    @functools.cached_property
    def docnos_arrow(self) -> pa.Array:
        """The docnos in docid order as an Arrow string array: the reader's when it has them (a
        million Python strings are slow to make), made on first use (a run's docno column)."""
        docnos_arrow = getattr(self.index, "docnos_arrow", None)
        if docnos_arrow is None:
            docnos_arrow = pa.array(np.asarray(self.index.docnos, dtype=object), type=pa.string())
        return docnos_arrow

    @functools.cached_property
    def _docno_rows(self) -> np.ndarray | None:
        return _fixed_width_rows(self.docnos_arrow)

    @functools.cached_property
    def docnos(self) -> np.ndarray:
        """The docnos in docid order, as a numpy array of Python strings (made on first use)."""
        return np.asarray(self.index.docnos, dtype=object)

    def prepare(self, topics: pd.DataFrame, model: RetrievalModel | None = None,
                points: Iterable[Mapping[str, float]] = (), parses=None) -> PreparedQuerySet:
        """Analyse every query and read the postings of all their terms in one pass.

        Each distinct term's postings are read once, however many queries hold it.
        For a model scoring query features (``model.uses_features``: SDM, bigram and
        dependence models), each query is compiled into its features for all of
        ``points`` (:func:`irgrid.retrieve.compiled.compile_query_set`) and every
        window's postings are counted once, then shared by every point (a model
        scoring parse-tree features takes them from ``parses``).  Topics with a
        ``candidates`` column are re-ranked: each query ranks its own candidates only.
        """
        with _cycle_collection_paused():
            return self._prepare(topics, model, points, parses)

    def _prepare(self, topics, model, points, parses) -> PreparedQuerySet:
        if model is not None and model.uses_features:
            qids, per_query = compile_query_set(self.index, topics, model, list(points) or [model.check_point({})],
                                                parses=parses)
            prepared = self._flatten(qids, per_query)
        else:
            queries = analyse_queries(self.index, topics)
            prepared = self._read_flat(list(queries), list(queries.values()))
        if CANDIDATES_COLUMN in topics.columns:
            prepared.allowed = self.allowed_docids(topics, prepared.qids)
        return prepared

    def prepare_weighted(self, weighted: Mapping[str, Mapping[str, float]], postings=None) -> PreparedQuerySet:
        """A query set of weighted terms: qid -> term -> weight (an expanded query of :mod:`irgrid.feedback`).

        A term's weight stands where a query term's frequency does: it multiplies the term's score
        (Lucene's BoostQuery), and a language model's query length is the sum of the weights.
        Terms the collection lacks are dropped; ``postings`` (term -> Postings) may hold them read already.
        """
        term_stats = self.index.term_stats(sorted({term for terms in weighted.values() for term in terms}))
        if postings is None:
            postings = self.index.postings(sorted(term_stats))
        per_query = [
            [QueryTerm(term, float(weight), *term_stats[term], postings[term].docids, postings[term].tfs)
             for term, weight in sorted(terms.items()) if term in term_stats]
            for terms in weighted.values()
        ]
        return self._flatten([str(qid) for qid in weighted], per_query)

    def allowed_docids(self, topics: pd.DataFrame, qids: list[str]) -> list[np.ndarray]:
        """Each query's candidates (docnos of the topics' ``candidates`` column) as sorted docids.

        A docno the index does not hold is left out (qrels often judge documents a collection
        lacks); a query with no candidate ranks nothing.
        """
        docid_of = self.docid_lookup()
        by_qid = {str(qid): listed for qid, listed in zip(topics["qid"], topics[CANDIDATES_COLUMN])}
        allowed = []
        for qid in qids:
            listed = by_qid.get(qid)
            found = [docid_of[d] for d in (list(listed) if listed is not None else []) if d in docid_of]
            allowed.append(np.unique(np.asarray(found, dtype=np.int32)))
        return allowed

    def docid_lookup(self) -> dict[str, int]:
        """docno -> docid, made on first use."""
        if getattr(self, "_docid_of", None) is None:
            self._docid_of = {str(docno): docid for docid, docno in enumerate(self.docnos)}
        return self._docid_of

    def _read_flat(self, qids: list[str], per_query: list[list[QueryTerm]]) -> PreparedQuerySet:
        """:meth:`_flatten` of the queries' analysed terms, their postings read into the flat arrays.

        A term's df is its number of postings, so the layout is known before anything is read, and a
        reader with ``postings_into`` copies each term's postings from the decoded pages straight to
        each place a query holds it (one copy instead of two: a term's own arrays, then the flat ones).
        """
        terms = [t for query_terms in per_query for t in query_terms]
        term_offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum([t.df for t in terms], out=term_offsets[1:])
        placements: dict[str, list[int]] = {}
        for t, start in zip(terms, term_offsets[:-1].tolist()):
            placements.setdefault(t.term, []).append(start)
        if not hasattr(self.index, "postings_into"):  # another reader (a test's in-memory index)
            postings = self.index.postings(sorted(placements))
            return self._flatten(qids, [[replaced(t, docids=postings[t.term].docids, tfs=postings[t.term].tfs)
                                         for t in query_terms] for query_terms in per_query])
        docids, tfs = flat_postings(int(term_offsets[-1]))
        self.index.postings_into(placements, docids, tfs)
        return self._flat_set(qids, per_query, terms, term_offsets, docids, tfs)

    def _flatten(self, qids: list[str], per_query: list[list[QueryTerm]]) -> PreparedQuerySet:
        """The queries' terms (or features) with their postings laid out in flat arrays."""
        terms = [t for query_terms in per_query for t in query_terms]
        term_offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum([len(t.docids) for t in terms], out=term_offsets[1:])
        empty = np.zeros(0, dtype=np.int32)
        docids = np.concatenate([t.docids for t in terms]).astype(np.int32, copy=False) if terms else empty
        tfs = np.concatenate([t.tfs for t in terms]).astype(np.int32, copy=False) if terms else empty
        return self._flat_set(qids, per_query, terms, term_offsets, docids, tfs)

    def _flat_set(self, qids, per_query, terms, term_offsets, docids, tfs) -> PreparedQuerySet:
        """The prepared set of ``terms`` (``per_query``'s, one after the other) whose postings are
        ``docids[term_offsets[i]:term_offsets[i+1]]`` (and ``tfs``)."""
        query_term_offsets = np.zeros(len(per_query) + 1, dtype=np.int64)
        np.cumsum([len(query_terms) for query_terms in per_query], out=query_term_offsets[1:])
        # each query term's postings become views of the flat arrays
        terms = [
            replaced(t, docids=docids[lo:hi], tfs=tfs[lo:hi])
            for t, lo, hi in zip(terms, term_offsets[:-1].tolist(), term_offsets[1:].tolist())
        ]
        return PreparedQuerySet(qids, terms, term_offsets, query_term_offsets, docids, tfs, self)

    def score(self, model: RetrievalModel, query: PreparedQuery, point: Mapping[str, float]) -> np.ndarray:
        """Scores of one query's candidates (aligned with ``query.candidates``)."""
        if model.scores_candidates:
            extra = {"values": feature_values(query)} if model.uses_parses else {}
            return model.candidate_scores(query.terms, feature_counts(query), self.doc_lengths[query.candidates],
                                          self.doc_unique_terms[query.candidates], self.stats, point, **extra)
        scores = np.zeros(len(query.candidates), dtype=np.float64)
        for term, slots in zip(query.terms, query.slots):
            contribution = model.term_scores(
                term, self.doc_lengths[term.docids], self.doc_unique_terms[term.docids], self.stats, point
            )
            scores[slots] += model.term_weight(term, point) * contribution
        return model.complete_scores(
            scores,
            self.doc_lengths[query.candidates],
            self.doc_unique_terms[query.candidates],
            query.terms,
            self.stats,
            point,
        )

    def score_all(self, model: RetrievalModel, queries: PreparedQuerySet, point: Mapping[str, float]) -> np.ndarray:
        """Scores of every query's candidates, aligned with ``queries.candidates``.

        The same numbers as :meth:`score` query by query, to the last bit: each
        candidate's term parts are added in the query's term order starting from
        zero (``np.bincount`` adds in input order), then the model finishes them.
        A model scoring from its candidates' feature counts is scored query by query.
        """
        if model.scores_candidates:
            if not len(queries):
                return np.zeros(0, dtype=np.float64)
            scores = []
            for q in range(len(queries)):
                cache = queries.query_cache(q)
                # the view (each term's slots) is made only when the counts are not kept from an earlier point
                counts = cache.get_or_make("counts", lambda: feature_counts(queries[q]))  # noqa: B023 (called here)
                lengths = queries.candidate_lengths[queries.candidate_offsets[q]:queries.candidate_offsets[q + 1]]
                extra = {}
                if model.uses_parses:
                    # kept beside the counts for every point (not in the byte-budgeted cache: a list of dicts)
                    extra["values"] = cache.setdefault("values", feature_values(queries[q]))
                scores.append(model.candidate_scores(queries.query_terms(q), counts, lengths, None, self.stats, point,
                                                     cache, **extra))
            return np.concatenate(scores)
        contributions = np.empty(queries.num_postings, dtype=np.float64)
        offsets = queries.term_offsets
        for i, term in enumerate(queries.terms):
            lo, hi = offsets[i], offsets[i + 1]
            part = model.term_scores(term, queries.posting_lengths[lo:hi], queries.posting_unique_terms[lo:hi],
                                     self.stats, point)
            contributions[lo:hi] = model.term_weight(term, point) * part
        scores = np.bincount(queries.global_slots, weights=contributions, minlength=len(queries.candidates))
        scores = scores.astype(np.float64, copy=False)  # with no postings at all, bincount gives ints
        candidate_offsets = queries.candidate_offsets
        for q in range(len(queries)):
            lo, hi = candidate_offsets[q], candidate_offsets[q + 1]
            scores[lo:hi] = model.complete_scores(scores[lo:hi], queries.candidate_lengths[lo:hi],
                                                  queries.candidate_unique_terms[lo:hi], queries.query_terms(q),
                                                  self.stats, point)
        return scores

    def rank(self, query: PreparedQuery, scores: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``depth`` candidates by score desc, docno asc: (docids, scores)."""
        if len(scores) > depth:
            # Keep every candidate tied with the depth-th score so the docno tie-break is exact.
            threshold = np.partition(scores, len(scores) - depth)[len(scores) - depth]
            keep = np.flatnonzero(scores >= threshold)
        else:
            keep = np.arange(len(scores))
        docids = query.candidates[keep]
        order = np.lexsort((self.docno_order[docids], -scores[keep]))[:depth]
        return docids[order], scores[keep][order]

    def top(
        self,
        model: RetrievalModel,
        queries: PreparedQuerySet,
        point: Mapping[str, float],
        depth: int = 1000,
        first: int = 0,
        last: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rankings of queries ``first:last`` of a prepared set: ``(docids, scores, offsets)``.

        Query ``first + i``'s ranking is at ``offsets[i]:offsets[i+1]``.  A model with a
        fused kernel is scored and ranked in one pass per query (:func:`irgrid.retrieve.ranking.score_and_rank`);
        any other through its numpy ``term_scores`` (:meth:`score_all`) and :func:`irgrid.retrieve.ranking.top_k`.
        The same runs either way, to the last bit.
        """
        last = len(queries) if last is None else last
        if getattr(queries, "allowed", None) is not None:
            rankings = [self.rank_candidates(model, queries, q, point, depth) for q in range(first, last)]
            offsets = np.zeros(last - first + 1, dtype=np.int64)
            np.cumsum([len(docids) for docids, _ in rankings], out=offsets[1:])
            docids = np.concatenate([d for d, _ in rankings] + [np.zeros(0, np.int32)]).astype(np.int32)
            return docids, np.concatenate([s for _, s in rankings] + [np.zeros(0, np.float64)]), offsets
        if model.weighting is not None:
            docids, scores, offsets = self._top_block(model, queries, [point], depth, first, last)
            return docids[0], scores[0], offsets
        if first == 0 and last == len(queries):
            scores = self.score_all(model, queries, point)
            return top_k(scores, queries.candidates, queries.candidate_offsets, self.docno_order, depth)
        rankings = [self.rank(queries[q], self.score(model, queries[q], point), depth) for q in range(first, last)]
        offsets = np.zeros(last - first + 1, dtype=np.int64)
        np.cumsum([len(docids) for docids, _ in rankings], out=offsets[1:])
        docids = np.concatenate([docids for docids, _ in rankings] + [np.zeros(0, np.int32)]).astype(np.int32)
        scores = np.concatenate([scores for _, scores in rankings] + [np.zeros(0, np.float64)])
        return docids, scores, offsets

    def top_points(
        self,
        model: RetrievalModel,
        queries: PreparedQuerySet,
        points: Sequence[Mapping[str, float]],
        depth: int = 1000,
    ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`top` of the whole set at each of ``points``: the same rankings, to the last bit
        (:meth:`iter_top_points`, all at once)."""
        return list(self.iter_top_points(model, queries, points, depth))

    def iter_top_points(
        self,
        model: RetrievalModel,
        queries: PreparedQuerySet,
        points: Sequence[Mapping[str, float]],
        depth: int = 1000,
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`top` of the whole set at each of ``points`` in order, made a block at a time.

        A model with a fused kernel scores a block of up to :data:`BLOCK_POINTS` points per
        pass over the postings (:func:`irgrid.retrieve.ranking.score_and_rank`; the points of a
        Dirichlet block share their mu); any other model point by point. A block's rankings
        are made when the caller asks for its first point, so a grid's rankings need not all
        be held at once.
        """
        if model.weighting is None or getattr(queries, "allowed", None) is not None:
            for point in points:
                yield self.top(model, queries, point, depth)
            return
        blocks = self._blocks(model, queries, points)
        # more than one pass over the postings reads arrays gathered once for the query set (its ties'
        # docno ranks, its postings' lengths); a single pass gathers what it needs as it goes, which
        # costs it less than gathering them ahead would (benchmarks/HISTORY.md)
        layout = self.grid_layout(model, queries) if len(blocks) > 1 else None
        for block in blocks:
            docids, scores, offsets = self._top_block(model, queries, block, depth, 0, len(queries), layout)
            for j in range(len(block)):
                yield docids[j], scores[j], offsets
            del docids, scores

    def grid_tops(
        self,
        model: RetrievalModel,
        topics: pd.DataFrame,
        points: Sequence[Mapping[str, float]],
        depth: int = 1000,
        parses=None,
    ) -> Iterator[tuple[list[str], tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """Each of ``points``' rankings of the whole of ``topics``, in order: ``(qids, (docids, scores,
        offsets))``, the rankings :meth:`prepare` and :meth:`iter_top_points` make, to the last bit.

        A query set whose postings exceed :data:`QUERY_BLOCK_POSTINGS` is prepared and ranked a
        block of consecutive queries at a time (:func:`query_blocks`; a query's ranking does not
        depend on the queries beside it), the points a group of :data:`PASS_RESULT_ROWS` rows'
        worth at a time: each group reads the blocks' postings again, and memory holds one
        block's postings and one group's rankings.
        """
        blocks = query_blocks(self.index, topics)
        if len(blocks) == 1:
            queries = self.prepare(topics, model, points, parses=parses)
            queries.warn_if_empty()
            for top in self.iter_top_points(model, queries, points, depth):
                yield queries.qids, top
            return
        per_pass = max(BLOCK_POINTS, PASS_RESULT_ROWS // max(1, len(topics) * depth))
        log.info("%d queries in %d blocks of at most %d postings, %d points a pass", len(topics), len(blocks),
                 QUERY_BLOCK_POSTINGS, per_pass)
        for first in range(0, len(points), per_pass):
            group = points[first:first + per_pass]
            qids: list[str] = []
            empty: list[str] = []
            reranking = False
            block_tops = []
            for block in blocks:
                # every point's features are compiled, as for the whole set: a block's numbers are the set's
                queries = self.prepare(block, model, points, parses=parses)
                qids += queries.qids
                empty += queries.empty_qids()
                reranking = queries.allowed is not None
                block_tops.append(list(self.iter_top_points(model, queries, group, depth)))
                del queries
            if first == 0:
                warn_of_empty_queries(empty, len(qids), reranking)
            for j in range(len(group)):
                yield qids, _concatenated_tops([tops[j] for tops in block_tops])
                for tops in block_tops:
                    tops[j] = None  # this point's rankings are the caller's now

    def _blocks(self, model: RetrievalModel, queries: PreparedQuerySet,
                points: Sequence[Mapping[str, float]]) -> list[list[Mapping[str, float]]]:
        """``points`` in order, cut into blocks one kernel pass can score: at most
        :data:`BLOCK_POINTS`, and for a weighting whose parts are computed once a block (Dirichlet's)
        one params row and set of term constants (its mu) a block."""
        blocks: list[list[Mapping[str, float]]] = []
        shared = None
        for point in points:
            key = None
            if model.weighting.shares_block_inputs:
                params, term_constants = queries.kernel_inputs(model, self.stats, point)[:2]
                key = (params.tobytes(), term_constants.tobytes())
            if blocks and len(blocks[-1]) < BLOCK_POINTS and key == shared:
                blocks[-1].append(point)
            else:
                blocks.append([point])
                shared = key
        return blocks

    def grid_layout(self, model: RetrievalModel, queries: PreparedQuerySet) -> tuple[np.ndarray, np.ndarray]:
        """``(candidate_ranks, posting_lengths)`` of ``queries``, what the fused kernel reads when it scores
        them in more than one block of points (:func:`irgrid.retrieve.ranking.score_and_rank`): the docno
        rank of each candidate (``docno_order[candidates]``) and the document length of each posting
        (int32; empty for a weighting whose part reads no length). Gathered on first use and kept with
        the set, 4 bytes a candidate and a posting: once for a grid, where each point's ties and each
        block's lengths would look them up in tables of every document (benchmarks/HISTORY.md)."""
        found = getattr(queries, "_grid_layout", None)
        if found is None or found[0] is not self.docno_order:
            found = (self.docno_order, gathered(self.docno_order, queries.candidates), np.zeros(0, dtype=np.int32))
        if model.weighting.reads_length and not len(found[2]):
            found = (found[0], found[1], gathered(self.int_doc_lengths, queries.docids))
        queries._grid_layout = found
        return found[1], found[2]

    def _top_block(self, model: RetrievalModel, queries: PreparedQuerySet, points: Sequence[Mapping[str, float]],
                   depth: int, first: int, last: int,
                   layout: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Queries ``first:last`` at a block of points in one kernel pass a query: ``(docids, scores, offsets)``,
        point ``j``'s rows at ``docids[j]``, ``scores[j]`` (:func:`irgrid.retrieve.ranking.score_and_rank`).
        ``layout``: None, or :meth:`grid_layout` of ``queries`` (the same rankings, at less cost a point)."""
        no_layout = np.zeros(0, dtype=np.int32)
        candidate_ranks, posting_lengths = (no_layout, no_layout) if layout is None else layout
        params, term_constants, term_weights, query_constants, query_lengths, weights = queries.block_inputs(
            model, self.stats, points)
        weighting = model.weighting
        if weighting.shares_block_inputs:
            # the block's points share params and term constants (Scorer._blocks), so these parts
            posting_parts, candidate_values = queries.block_parts(model, params[0], term_constants[0], first, last)
        else:
            posting_parts = candidate_values = np.zeros(0, dtype=np.float64)
        tabulated = not weighting.reads_length

        def rank_queries(lo: int, hi: int):
            offsets, out_docids, out_scores = _NO_OFFSETS, _NO_DOCIDS, _NO_SCORES  # the kernel allocates them
            if len(points) * depth * (hi - lo) * 12 >= populated.POPULATED_BYTES:  # at most this many bytes of rankings
                # a large set's rankings (tens of MB a block) mapped at once (populated_empty)
                offsets = result_offsets(queries.candidate_offsets, lo, hi, depth)
                shape = (len(points), int(offsets[-1]))
                out_docids = populated_empty(shape[0] * shape[1], np.int32).reshape(shape)
                out_scores = populated_empty(shape[0] * shape[1], np.float64).reshape(shape)
            return aot_score_and_rank(weighting.kernel_key, tabulated, params, term_constants, term_weights,
                                      query_constants, query_lengths, weights, queries.term_offsets,
                                      queries.query_term_offsets, queries.tfs, queries.docids, self.int_doc_lengths,
                                      queries.global_slots, queries.candidates, queries.candidate_offsets,
                                      self.docno_order, depth, lo, hi, posting_parts, candidate_values, candidate_ranks,
                                      posting_lengths, offsets, out_docids, out_scores)

        if self.threads == 1 or last - first < 2:
            return rank_queries(first, last)
        # ranges of about equal numbers of postings, one per thread
        postings = queries.term_offsets[queries.query_term_offsets[first:last + 1]]
        cuts = np.searchsorted(postings, np.linspace(postings[0], postings[-1], self.threads + 1)[1:-1])
        bounds = [first, *sorted(set((first + cuts).tolist()) - {first, last}), last]
        with ThreadPoolExecutor(len(bounds) - 1) as pool:
            return _concatenated_tops(list(pool.map(rank_queries, bounds[:-1], bounds[1:])))

    def rank_candidates(self, model: RetrievalModel, queries: PreparedQuerySet, q: int, point: Mapping[str, float],
                        depth: int) -> tuple[np.ndarray, np.ndarray]:
        """Query ``q`` re-ranking its own candidates (``queries.allowed[q]``): every one ranked, top ``depth``.

        Its candidates without a query term are appended to the documents with one, so the
        model scores them as documents where nothing matched (their length still counts in a
        language model's score), then all are ranked by score desc, docno asc.
        """
        query = queries[q]
        allowed = queries.allowed[q]
        missing = np.setdiff1d(allowed, query.candidates, assume_unique=True)
        extended = PreparedQuery(query.qid, query.terms, np.concatenate([query.candidates, missing]).astype(np.int32),
                                 query.slots)
        scores = self.score(model, extended, point)
        keep = np.isin(extended.candidates, allowed)
        return self.rank(dataclasses.replace(extended, candidates=extended.candidates[keep]), scores[keep], depth)

    def run_table(
        self,
        model: RetrievalModel,
        queries: PreparedQuerySet | Sequence[PreparedQuery],
        point: Mapping[str, float],
        depth: int = 1000,
    ) -> pa.Table:
        """A whole run (qid, docno, rank, score) for one parameter point, as an Arrow table."""
        if not isinstance(queries, PreparedQuerySet):
            return pa.Table.from_pandas(self._run_per_query(model, queries, point, depth), schema=RUN_SCHEMA,
                                        preserve_index=False)
        return self._run_tables(queries, [self.top(model, queries, point, depth)])[0]

    def run_tables(self, model: RetrievalModel, queries: PreparedQuerySet, points: Sequence[Mapping[str, float]],
                   depth: int = 1000) -> list[pa.Table]:
        """The runs of ``points`` as Arrow tables (:meth:`run_table` of each), scored a block of points a pass."""
        return self._run_tables(queries, self.iter_top_points(model, queries, points, depth))

    def docno_column(self, docids: np.ndarray) -> pa.Array:
        """The docnos of ``docids`` as an Arrow string array (``docnos_arrow.take``).

        When every docno has the same length (most collections' ids), one numpy gather of
        fixed-width rows and offsets made by arithmetic: half the cost of Arrow's take,
        which reads each docno's offsets before its bytes (two cache misses a row). The gather is
        ``np.take``, which copies a row of a void dtype at less cost than fancy indexing does, into
        an array whose pages are mapped at once (:func:`~irgrid.retrieve.populated.populated_empty`:
        the runs of a grid are fresh memory each).
        """
        if self._docno_rows is None or len(docids) * self._docno_rows.itemsize >= 2**31:
            return self.docnos_arrow.take(pa.array(docids))
        width = self._docno_rows.itemsize
        # the offsets depend on the number of rows alone: a grid's runs, of as many rows each, share them
        if self._docno_offsets is None or self._docno_offsets[0] != len(docids):
            self._docno_offsets = (len(docids), pa.py_buffer(np.arange(0, (len(docids) + 1) * width, width,
                                                                       dtype=np.int32)))
        return pa.StringArray.from_buffers(len(docids), self._docno_offsets[1],
                                           pa.py_buffer(np.take(self._docno_rows, docids,
                                                                out=populated_empty(len(docids), self._docno_rows.dtype))))

    def _run_tables(self, queries: PreparedQuerySet, tops) -> list[pa.Table]:
        return [self.run_table_of(queries.qids, top, queries) for top in tops]

    def run_table_of(self, qids: Sequence[str], top: tuple[np.ndarray, np.ndarray, np.ndarray],
                     layout_holder=None) -> pa.Table:
        """The run (qid, docno, rank, score) of the rankings ``top`` of the queries ``qids``.

        ``layout_holder`` (a prepared set, or any object) keeps the qid and rank columns between
        calls: the runs of a grid rank the same number of documents a query and share them.
        """
        docids, ranked_scores, offsets = top
        layout = getattr(layout_holder, "_run_layout", None)
        if layout is None or layout[0] != offsets.tobytes():
            counts = np.diff(offsets)
            query_of_row = np.repeat(np.arange(len(qids), dtype=np.int32), counts)
            ranks = (np.arange(len(docids), dtype=np.int64) - offsets[:-1][query_of_row] + 1).astype(np.int32)
            qid_column = pa.DictionaryArray.from_arrays(pa.array(query_of_row), pa.array(list(qids), pa.string()))
            layout = (offsets.tobytes(), qid_column.cast(pa.string()), pa.array(ranks))
            if layout_holder is not None:
                layout_holder._run_layout = layout
        return pa.Table.from_arrays(
            [layout[1], self.docno_column(docids), layout[2], pa.array(ranked_scores)],
            schema=RUN_SCHEMA,
        )

    def run(
        self,
        model: RetrievalModel,
        queries: PreparedQuerySet | Sequence[PreparedQuery],
        point: Mapping[str, float],
        depth: int = 1000,
    ) -> pd.DataFrame:
        """A whole run (qid, docno, rank, score) for one parameter point."""
        if not isinstance(queries, PreparedQuerySet):
            return self._run_per_query(model, queries, point, depth)
        run = self.run_table(model, queries, point, depth).to_pandas()
        # the column types of the per-query path (object strings), whatever pandas' string default
        return run.astype({"qid": object, "docno": object})

    def _run_per_query(self, model, queries, point, depth) -> pd.DataFrame:
        qids, docnos, ranks, scores = [], [], [], []
        for query in queries:
            docids, ranked_scores = self.rank(query, self.score(model, query, point), depth)
            qids.append(np.full(len(docids), query.qid, dtype=object))
            docnos.append(self.docnos[docids])
            ranks.append(np.arange(1, len(docids) + 1, dtype=np.int32))
            scores.append(ranked_scores)
        if not queries:
            return pd.DataFrame({name: pd.Series(dtype=object) for name in RUN_COLUMNS})
        return pd.DataFrame(
            {
                "qid": np.concatenate(qids),
                "docno": np.concatenate(docnos),
                "rank": np.concatenate(ranks),
                "score": np.concatenate(scores),
            }
        )


def retrieve_grid(
    index,
    topics: pd.DataFrame,
    family: str,
    points: Iterable[Mapping[str, float]],
    depth: int = 1000,
    as_arrow: bool = False,
    threads: int = 1,
    parses=None,
) -> list[pd.DataFrame] | list[pa.Table]:
    """Runs of one model family for each parameter point, from one postings read.

    ``as_arrow``: Arrow tables (what :func:`write_run` writes without conversion)
    instead of DataFrames.  ``threads``: see :class:`Scorer`.  ``parses``: the
    collection's sentence parses (a path, or :class:`irgrid.features.sentence_parses.SentenceParses`),
    read only for a model that scores parse-tree features.
    """
    model = get_model(family)
    checked = [model.check_point(point) for point in points]
    if getattr(model, "base", None) is not None:  # a family with a feedback stage (irgrid.feedback)
        return retrieve_with_feedback(Scorer(index, threads=threads), topics, family, checked, depth, as_arrow=as_arrow,
                                      parses=parses)
    scorer = Scorer(index, threads=threads)
    if model.uses_parses and parses is not None and not hasattr(parses, "tree"):
        parses = SentenceParses.load(parses, index)
    layout = types.SimpleNamespace(_run_layout=None)  # the qid and rank columns the points' runs share
    runs = [scorer.run_table_of(qids, top, layout) for qids, top in scorer.grid_tops(model, topics, checked, depth,
                                                                                      parses=parses)]
    if as_arrow:
        return runs
    # the column types of the per-query path (object strings), whatever pandas' string default
    return [run.to_pandas().astype({"qid": object, "docno": object}) for run in runs]


__all__ = [
    "BLOCK_POINTS", "PASS_RESULT_ROWS", "QUERY_BLOCK_POSTINGS", "QUERY_CACHE_BYTES", "PreparedQuery", "PreparedQuerySet",
    "QueryCache", "Scorer", "analyse_queries", "feature_counts", "feature_values", "query_blocks", "retrieve_grid",
    "warn_of_empty_queries",
]
