"""A prepared query set: each query's terms, their postings in flat arrays, and where each posting lands.

:meth:`irgrid.retrieve.Scorer.prepare` makes a :class:`PreparedQuerySet`; the scorer's kernels and the
models' numpy paths read its arrays. ``analyse_queries`` is the analysis every path shares (the
scorer, the axiom analysis), so a query's terms and their order are the same whoever computes them.
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from ..aot.loader import guarded
from ..models import CollectionStatistics, QueryTerm, RetrievalModel
from ..models.parts.base import candidate_document_values, document_value_table, tabulated_posting_parts
from .populated import populated_empty
from .ranking import candidate_slots

log = logging.getLogger(__name__)


def analyse_queries(index, topics: pd.DataFrame) -> dict[str, list[QueryTerm]]:
    """Each query's distinct terms (qtf, df, cf), postings not yet read: qid -> terms.

    Queries are analysed with the index's own analyzer; terms absent from the
    collection are dropped (no document can match them, and p(t|C) = 0 would
    make likelihoods -inf); terms are sorted, which fixes the summation order,
    so a score is the same whoever computes it (the scorer, the axiom analysis).
    """
    analyzer = index.analyzer
    counted = {str(qid): Counter(analyzer(text)) for qid, text in zip(topics["qid"], topics["text"])}
    term_stats = index.term_stats(sorted({term for counts in counted.values() for term in counts}))
    no_postings = np.zeros(0, dtype=np.int32)
    queries = {}
    for qid, counts in counted.items():
        terms = [
            QueryTerm(term, int(qtf), int(term_stats[term][0]), int(term_stats[term][1]), no_postings, no_postings)
            for term, qtf in counts.items()
            if term in term_stats
        ]
        queries[qid] = sorted(terms, key=lambda t: t.term)
    return queries


@dataclass
class PreparedQuery:
    """A query's terms with postings, and where each posting lands among the candidates."""

    qid: str
    terms: list[QueryTerm]
    candidates: np.ndarray            # docids containing >= 1 query term (first-occurrence order)
    slots: list[np.ndarray]           # per term: index into candidates of each posting


class _QueryOfSet(PreparedQuery):
    """Query ``q`` of a prepared set, its slots made on first use: a caller that scores and ranks
    through the set's kernels never reads them, and making them copies each of the query's
    postings (the set's slots less the query's first candidate)."""

    def __init__(self, queries: PreparedQuerySet, q: int):
        first, last = queries.query_term_offsets[q], queries.query_term_offsets[q + 1]
        self.qid = queries.qids[q]
        self.terms = queries.terms[first:last]
        self.candidates = queries.candidates[queries.candidate_offsets[q]:queries.candidate_offsets[q + 1]]
        self._queries, self._q = queries, q

    @functools.cached_property
    def slots(self) -> list[np.ndarray]:  # type: ignore[override]
        queries, q = self._queries, self._q
        base = queries.candidate_offsets[q]
        return [queries.global_slots[queries.term_offsets[i]:queries.term_offsets[i + 1]] - base
                for i in range(queries.query_term_offsets[q], queries.query_term_offsets[q + 1])]


#: postings whose parts :meth:`PreparedQuerySet.block_parts` makes at least, when asked for fewer queries
BLOCK_PARTS_POSTINGS = 1 << 20

# the parts' kernels through the ahead-of-time module where it is built (irgrid.aot): a retrieval job of a
# weighting with such parts (Dirichlet's) then runs no JIT kernel and never starts numba's compiler
aot_tabulated_posting_parts = guarded("tabulated_posting_parts", tabulated_posting_parts)
aot_document_value_table = guarded("document_value_table", document_value_table)
aot_candidate_document_values = guarded("candidate_document_values", candidate_document_values)


#: arrays a prepared query set keeps for count-matrix models between grid points, in bytes at most
QUERY_CACHE_BYTES = 512 * 2**20


class QueryCache(dict):
    """Arrays of one query that every grid point can reuse, within a budget shared by the query set.

    ``get_or_make(key, make)`` keeps what ``make()`` returns while the budget lasts; past it, it
    makes the array afresh each time: the same numbers, only slower.
    """

    def __init__(self, used: list[int]):
        super().__init__()
        self._used = used

    def get_or_make(self, key, make):
        found = self.get(key)
        if found is None:
            found = make()
            if self._used[0] + found.nbytes <= QUERY_CACHE_BYTES:
                self[key] = found
                self._used[0] += found.nbytes
        return found


class PreparedQuerySet(Sequence):
    """A query set with the postings of all its terms in flat arrays, ready for many parameter points.

    Term ``i`` of the set (queries one after the other, each query's terms
    sorted) has its postings at ``term_offsets[i]:term_offsets[i+1]`` of
    ``docids``/``tfs``; query ``q`` has terms ``query_term_offsets[q]:...[q+1]``
    and candidates ``candidate_offsets[q]:...[q+1]``; posting ``p`` adds to
    candidate ``global_slots[p]``.  Document lengths are gathered once per
    posting and per candidate.  Iterating gives :class:`PreparedQuery` views.

    ``documents`` (a :class:`~irgrid.retrieve.Scorer`) gives ``num_docs`` and, read on first use,
    the float64 ``doc_lengths`` and ``doc_unique_terms`` of every document in docid order.
    """

    def __init__(self, qids, terms, term_offsets, query_term_offsets, docids, tfs, documents):
        self.qids: list[str] = qids
        self.terms: list[QueryTerm] = terms
        self.term_offsets = term_offsets
        self.query_term_offsets = query_term_offsets
        self.docids = docids
        self.tfs = tfs
        self.candidates, self.candidate_offsets, self.global_slots = candidate_slots(
            docids, term_offsets, query_term_offsets, documents.num_docs)
        self._documents = documents
        self.term_qtfs = np.array([term.qtf for term in terms], dtype=np.float64)
        # (model name, point) -> the fused kernel's inputs: a grid point's constants are made once
        self._kernel_inputs: dict = {}
        self._block_inputs: tuple | None = None  # (key, arrays) of the last block asked
        # (model name, params) -> a weighting's per-posting parts and per-candidate document values
        self._block_parts: dict = {}
        # per query: what a count-matrix model keeps between grid points (its counts, a unigram part per mu)
        self._query_caches: dict[int, QueryCache] = {}
        self._cache_bytes = [0]
        #: per query, the docids it re-ranks (topics with a candidates column), or None: rank the collection
        self.allowed: list[np.ndarray] | None = None
        # the qid and rank columns of a run, for the rows per query they were made for: every point of a
        # grid ranks min(depth, candidates) documents a query, so its runs share them (Scorer.run_table)
        self._run_layout: tuple[bytes, pa.Array, pa.Array] | None = None

    @property
    def _doc_lengths(self) -> np.ndarray:
        return self._documents.doc_lengths

    @property
    def _doc_unique_terms(self) -> np.ndarray:
        return self._documents.doc_unique_terms

    # Gathered on first use: the fused kernels need only the lengths, the numpy path all four,
    # and making an array the size of the postings costs more than scoring a BM25 point.
    @functools.cached_property
    def posting_lengths(self) -> np.ndarray:
        return self._doc_lengths[self.docids]

    @functools.cached_property
    def posting_unique_terms(self) -> np.ndarray:
        return self._doc_unique_terms[self.docids]

    @functools.cached_property
    def candidate_lengths(self) -> np.ndarray:
        return self._doc_lengths[self.candidates]

    @functools.cached_property
    def candidate_unique_terms(self) -> np.ndarray:
        return self._doc_unique_terms[self.candidates]

    def kernel_inputs(self, model: RetrievalModel, stats: CollectionStatistics, point: Mapping[str, float]):
        """The fused kernel's inputs for ``model`` at ``point`` (made once per point), plus the query weights."""
        key = (model.name, tuple(sorted(point.items())))
        found = self._kernel_inputs.get(key)
        if found is None:
            params, term_constants, query_constants, query_lengths = model.kernel_inputs(
                self.terms, self.query_term_offsets, stats, point)
            if type(model).term_weight is RetrievalModel.term_weight:
                term_weights = self.term_qtfs
            else:
                term_weights = model.term_weights(self.terms, stats, point)
            weights = np.array([model.query_weight(self.query_terms(q)) if self.query_term_offsets[q + 1] >
                                self.query_term_offsets[q] else 1.0 for q in range(len(self))], dtype=np.float64)
            found = self._kernel_inputs[key] = (params, term_constants, term_weights, query_constants, query_lengths,
                                                weights)
        return found

    def block_inputs(self, model: RetrievalModel, stats: CollectionStatistics,
                     points: Sequence[Mapping[str, float]]) -> tuple[np.ndarray, ...]:
        """:meth:`kernel_inputs` of a block of points, each of the six stacked point by point (the
        fused kernel's layout). The last block's are kept: a caller ranking one query at a time at
        one point asks for the same block at every query, which would otherwise stack the whole set's
        arrays again each time."""
        key = (model.name, tuple(tuple(sorted(point.items())) for point in points))
        if self._block_inputs is None or self._block_inputs[0] != key:
            inputs = [self.kernel_inputs(model, stats, point) for point in points]
            self._block_inputs = (key, tuple(np.ascontiguousarray(np.stack([found[k] for found in inputs]))
                                             for k in range(6)))
        return self._block_inputs[1]

    def block_parts(self, model: RetrievalModel, params: np.ndarray, term_constants: np.ndarray,
                    first: int = 0, last: int | None = None):
        """Each posting's part (a weighting whose part reads no length) and each candidate's document
        value (a weighting with a per-document part; Dirichlet's log(|D| + mu)): the same for every
        point of one block (Scorer._blocks), empty arrays where the weighting has no such part.

        Filled for queries ``first:last`` (all by default), the queries after them up to
        :data:`BLOCK_PARTS_POSTINGS` postings from ``first``, and those filled before for the same
        (model, params): a caller that scores one query at a time makes the parts of the queries
        it reaches, not the whole set's at its first query, and a query's parts are made once.
        The arrays are those of the whole set (their pages mapped at once:
        :func:`~irgrid.retrieve.populated.populated_empty`); the entries of queries not filled yet are
        undefined.

        Kept for the last (model, params) only: they are the size of the postings (hundreds of MB for
        DRCD's phrase families), and the next (model, params) is written into their arrays rather than new
        ones. The arrays handed out before are overwritten then: a caller uses them before
        asking for another block (Scorer._top_block).
        """
        weighting = model.weighting
        last = len(self) if last is None else last
        key = (model.name, params.tobytes())
        found = self._block_parts.get(key)
        if found is None:
            sizes = (0 if weighting.reads_length else len(self.tfs),
                     0 if weighting.document is None else len(self.candidates))
            parts, values, _, _ = self._block_parts.popitem()[1] if self._block_parts else (None, None, None, None)
            if parts is None or (len(parts), len(values)) != sizes:  # another weighting's: not reused
                parts, values = populated_empty(sizes[0], np.float64), populated_empty(sizes[1], np.float64)
            table = (aot_document_value_table(weighting.kernel_key, self._doc_lengths, params)
                     if weighting.document is not None else None)
            found = self._block_parts[key] = (parts, values, table, np.zeros(len(self), dtype=bool))
        parts, values, table, filled = found
        if filled[first:last].all():
            return parts, values
        # at least BLOCK_PARTS_POSTINGS postings' worth of queries from the first asked: a caller asking
        # one query at a time then makes them a few calls a set, not a call (and its overhead) a query
        query_postings = self.term_offsets[self.query_term_offsets]
        last = max(last, int(np.searchsorted(query_postings, query_postings[first] + BLOCK_PARTS_POSTINGS)))
        last = min(last, len(self))
        missing = np.flatnonzero(~filled[first:last]) + first
        # each run of consecutive queries not filled yet: one call a run
        for run in np.split(missing, np.flatnonzero(np.diff(missing) > 1) + 1):
            lo, hi = int(run[0]), int(run[-1]) + 1
            if not weighting.reads_length:
                term_lo, term_hi = self.query_term_offsets[lo], self.query_term_offsets[hi]
                aot_tabulated_posting_parts(weighting.kernel_key, params, self.tfs, term_constants[term_lo:term_hi],
                                            self.term_offsets[term_lo:term_hi + 1], parts)
            if weighting.document is not None:
                rows = slice(self.candidate_offsets[lo], self.candidate_offsets[hi])
                aot_candidate_document_values(weighting.kernel_key, self._doc_lengths, self.candidates[rows], params,
                                              table, values[rows])
            filled[lo:hi] = True
        return parts, values

    def query_cache(self, q: int) -> QueryCache:
        """Query ``q``'s cache of arrays shared by the grid points (all queries share one memory budget)."""
        found = self._query_caches.get(q)
        if found is None:
            found = self._query_caches[q] = QueryCache(self._cache_bytes)
        return found

    def empty_qids(self) -> list[str]:
        """The queries left with no term of the collection after analysis."""
        return [qid for q, qid in enumerate(self.qids) if self.query_term_offsets[q + 1] == self.query_term_offsets[q]]

    def warn_if_empty(self) -> None:
        """Warn of the queries with no term (:func:`warn_of_empty_queries`)."""
        warn_of_empty_queries(self.empty_qids(), len(self), reranking=self.allowed is not None)

    def __len__(self) -> int:
        return len(self.qids)

    def query_terms(self, q: int) -> list[QueryTerm]:
        return self.terms[self.query_term_offsets[q]:self.query_term_offsets[q + 1]]

    def __getitem__(self, q):
        if isinstance(q, slice):
            return [self[i] for i in range(*q.indices(len(self)))]
        return _QueryOfSet(self, range(len(self))[q])

    @property
    def num_postings(self) -> int:
        return len(self.docids)


def warn_of_empty_queries(empty: Sequence[str], num_queries: int, reranking: bool) -> None:
    """Queries left with no term of the collection after analysis (all stop words, unknown words,
    empty text) match nothing: they score 0 in every measure and count in its mean, worth a warning."""
    if empty:
        examples = ", ".join(repr(qid) for qid in empty[:5]) + (", ..." if len(empty) > 5 else "")
        effect = ("rank their candidates in one tie" if reranking
                  else "retrieve nothing, score 0 in every measure and count in its mean")
        log.warning("%d of %d queries have no term of the collection after analysis (they %s): %s",
                    len(empty), num_queries, effect, examples)


def feature_counts(query: PreparedQuery) -> np.ndarray:
    """The count of each of a query's terms or features in each of its candidates: (features, candidates)."""
    counts = np.zeros((len(query.terms), len(query.candidates)), dtype=np.int32)
    for row, (term, slots) in enumerate(zip(query.terms, query.slots)):
        counts[row, slots] = term.tfs
    return counts


def feature_values(query: PreparedQuery) -> list[dict[str, np.ndarray] | None]:
    """Each feature's values (``QueryFeature.values``) in each candidate: per feature, name -> array, 0 where absent.

    None for a feature without values (a single term).
    """
    out: list[dict[str, np.ndarray] | None] = []
    for term, slots in zip(query.terms, query.slots):
        values = getattr(term, "values", None)
        if values is None:
            out.append(None)
            continue
        row = {}
        for name, per_posting in values.items():
            array = np.zeros(len(query.candidates), dtype=np.float64)
            array[slots] = per_posting
            row[name] = array
        out.append(row)
    return out
