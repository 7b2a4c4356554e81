"""Constraint-violation analysis: how often a model breaks the four term-weighting constraints.

The analysis of Cummins & O'Riordan's poster ("measuring constraint violations"): for each query
and each of the top ``depth`` documents of a run, grow a pseudo-document one term at a time in
the document's own order, score every prefix against the query (collection statistics stay
those of the real collection) and count, at every addition, whether the change of score obeys

* C1: adding a query term increases the score;
* C2: adding a non-query term decreases the score;
* C3: the increase from adding a query term is smaller than the increase from adding the
  previous occurrence of the same term;
* C4: along three successive non-query additions the score reductions shrink.

The exact definitions (first term, ties, tolerance, C4's window) are in docs/axioms.md; in short,
with ``s_i`` the score of the prefix of length i and ``d_i = s_i - s_{i-1}`` (i >= 2 only: the
first term is the starting pseudo-document, not an addition):

    C1  w_i in Q,   d_i <= 0                                  (a tie is a violation)
    C2  w_i not in Q, d_i >= 0
    C3  w_i in Q, j < i the previous occurrence of w_i with j >= 2:  d_i >= d_j
    C4  w_{i-2}, w_{i-1}, w_i not in Q, i-2 >= 2, r = -d:  r_{i-1} >= r_{i-2} or r_i >= r_{i-1}
        (one check per addition: every window of three successive non-query additions)

where "<= 0", ">=", ... compare within a tolerance ``rtol * max_i |s_i|`` (a difference that small
is a tie, and ties are violations).

All documents of a query are laid out as one array of prefixes: the prefix unique-term counts
come from a cumulative sum of first occurrences, each query term's prefixes and their term
frequencies from one numba pass over its occurrences, and the model is called once per query
term (``term_scores``) and once for the per-document part (``document_scores``) for all prefixes
of all documents at once, exactly as the :class:`irgrid.retrieve.Scorer` calls it for whole
documents, so the score of a full pseudo-document equals the run's score. Summing the terms'
scores and the checks are numba loops too (one pass, no temporaries). The layout does not depend
on the model: :func:`analyse_runs` builds it once per query for all the runs of a query set
(:class:`QueryPrefixes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd
from numba import njit

from ..errors import ConfigError
from ..models import CollectionStatistics, QueryTerm, RetrievalModel, get_model
from ..retrieve import analyse_queries

CONSTRAINTS = ("C1", "C2", "C3", "C4")
PER_DOC_COLUMNS = ["qid", "docno", *CONSTRAINTS, "length"]
#: Differences within ``DEFAULT_RTOL * max |score|`` of the document are ties (see docs/axioms.md).
DEFAULT_RTOL = 1e-12
#: analyse_run reads the forward index for about this many documents at a time.
FORWARD_BATCH_DOCS = 20_000


# ------------------------------------------------------------------------------ prefixes
@dataclass
class PrefixLayout:
    """All prefixes of a batch of documents, one entry per token (= per prefix).

    Token ``k`` of the concatenated documents ends the prefix of length ``position[k]`` of
    document ``doc[k]``; ``query[k]`` says whether that token is a query term.
    """

    lengths: np.ndarray     # int64, per document
    starts: np.ndarray      # int64, index of each document's first token
    doc: np.ndarray         # int64, per token: which document
    position: np.ndarray    # int64, per token: prefix length (1-based position in the document)
    unique: np.ndarray      # int64, per token: distinct terms in the prefix
    codes: np.ndarray       # int64, per token: term code (distinct terms of the batch)
    vocabulary: pd.Index    # term of each code
    query: np.ndarray       # bool, per token: the token is one of the query terms

    @property
    def num_tokens(self) -> int:
        return len(self.codes)


def _query_terms(query_terms: Sequence[Any]) -> list[QueryTerm]:
    """QueryTerms (empty postings) from objects with term, qtf, df, cf."""
    empty = np.zeros(0, dtype=np.int32)
    return [QueryTerm(str(t.term), int(t.qtf), int(t.df), int(t.cf), empty, empty) for t in query_terms]


def _per_doc_cumsum(indicator: np.ndarray, starts: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Cumulative sum of ``indicator`` restarted at every document start."""
    total = np.cumsum(indicator, dtype=np.int64)
    before = np.concatenate(([0], total))[starts]  # sum over the tokens of earlier documents
    return total - before[doc]


@dataclass
class DocumentBatch:
    """Documents as term codes, with each prefix's length and number of distinct terms.

    Independent of the query: analyse_run codes the documents of many queries once and
    :meth:`take` s each query's documents from them.
    """

    lengths: np.ndarray     # int64, per document
    starts: np.ndarray      # int64, index of each document's first token
    codes: np.ndarray       # int64, per token: term code
    position: np.ndarray    # int64, per token: prefix length (1-based position in the document)
    unique: np.ndarray      # int64, per token: distinct terms in the prefix
    vocabulary: pd.Index    # term of each code

    @classmethod
    def from_terms(cls, docs: Sequence[Sequence[str]]) -> DocumentBatch:
        """Code ``docs`` (lists of analysed terms, in document order)."""
        lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
        num_tokens = int(lengths.sum())
        starts = np.cumsum(lengths) - lengths
        tokens = np.fromiter(chain.from_iterable(docs), dtype=object, count=num_tokens)
        codes, uniques = pd.factorize(tokens)
        codes = codes.astype(np.int64, copy=False)
        vocabulary = pd.Index(uniques, dtype=object)
        doc = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
        position = np.arange(num_tokens, dtype=np.int64) - np.repeat(starts, lengths) + 1
        # first occurrence of each (document, term): np.unique's return_index is the first index
        first = np.zeros(num_tokens, dtype=bool)
        if num_tokens:
            first[np.unique(doc * max(len(vocabulary), 1) + codes, return_index=True)[1]] = True
        return cls(lengths, starts, codes, position, _per_doc_cumsum(first, starts, doc), vocabulary)

    def take(self, rows: Sequence[int]) -> DocumentBatch:
        """The documents ``rows`` (in that order, repeats allowed) as a batch of their own."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.lengths[rows]
        starts = np.cumsum(lengths) - lengths
        tokens = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(self.starts[rows] - starts, lengths)
        return DocumentBatch(lengths, starts, self.codes[tokens], self.position[tokens], self.unique[tokens],
                             self.vocabulary)

    def layout(self, query_terms: Sequence[Any]) -> PrefixLayout:
        """The prefixes of these documents for a query."""
        doc = np.repeat(np.arange(len(self.lengths), dtype=np.int64), self.lengths)
        query_codes = self.vocabulary.get_indexer([str(t.term) for t in query_terms])
        # a lookup by code: one gather over the tokens instead of np.isin's sort of them
        is_query_code = np.zeros(len(self.vocabulary), dtype=bool)
        is_query_code[query_codes[query_codes >= 0]] = True
        return PrefixLayout(self.lengths, self.starts, doc, self.position, self.unique, self.codes,
                            self.vocabulary, is_query_code[self.codes])


def prefix_layout(docs: Sequence[Sequence[str]], query_terms: Sequence[Any]) -> PrefixLayout:
    """Lay out every prefix of ``docs`` (lists of analysed terms, in document order) for a query."""
    return DocumentBatch.from_terms(docs).layout(query_terms)


@njit(cache=True, nogil=True)
def _term_prefixes(occurrences, doc, starts, lengths, position, unique):
    """(prefixes holding the term, its tf, their length, their distinct terms) from the term's
    token indices (ascending).

    In each document holding the term these are the prefixes from its first occurrence to the
    end of the document; tf is the running count of the occurrences. The cost is the number
    of those prefixes, not the number of tokens of the batch.
    """
    total = 0
    for k in range(len(occurrences)):
        d = doc[occurrences[k]]
        if k == 0 or d != doc[occurrences[k - 1]]:  # first occurrence in its document
            total += starts[d] + lengths[d] - occurrences[k]
    matched = np.empty(total, dtype=np.int64)
    tf = np.empty(total, dtype=np.int32)
    prefix_lengths = np.empty(total, dtype=np.float64)
    prefix_unique = np.empty(total, dtype=np.float64)
    out = k = 0
    while k < len(occurrences):
        d = doc[occurrences[k]]
        count = 0
        for i in range(occurrences[k], starts[d] + lengths[d]):
            if k < len(occurrences) and occurrences[k] == i:
                count += 1
                k += 1
            matched[out] = i
            tf[out] = count
            prefix_lengths[out] = position[i]
            prefix_unique[out] = unique[i]
            out += 1
    return matched, tf, prefix_lengths, prefix_unique


@dataclass
class _TermPrefixes:
    """One query term's prefixes, as the model's term_scores takes them."""

    qtf: int
    matched: np.ndarray       # token index of each prefix holding the term
    prefixes: QueryTerm       # the term with the prefixes as postings (docids: matched, tfs: tf there)
    lengths: np.ndarray       # float64, prefix length of each matched prefix
    unique: np.ndarray        # float64, distinct terms of each matched prefix


class QueryPrefixes:
    """The prefixes of a query's documents and everything about them that no model changes.

    Built once per query, then scored by any number of models (:meth:`scores`) whose
    violations :meth:`violations` counts: analyse_runs lays out the documents of all the
    runs of a query once instead of once per run.
    """

    def __init__(self, layout: PrefixLayout, terms: list[QueryTerm]):
        self.layout = layout
        self.terms = terms
        n = layout.num_tokens
        self.doc_lengths = layout.position.astype(np.float64)
        self.doc_unique = layout.unique.astype(np.float64)
        # the query-term tokens grouped by term, each group in document order
        tokens = np.flatnonzero(layout.query)
        order = np.argsort(layout.codes[tokens], kind="stable")
        tokens, token_codes = tokens[order], layout.codes[tokens][order]
        codes = layout.vocabulary.get_indexer([t.term for t in terms])
        index_dtype = np.int32 if n < 2**31 else np.int64
        self.term_prefixes: list[_TermPrefixes] = []
        for term, code in zip(terms, codes):
            lo, hi = np.searchsorted(token_codes, code, "left"), np.searchsorted(token_codes, code, "right")
            if code < 0 or lo == hi:
                continue  # the term occurs in no document of the batch: it adds nothing to any prefix
            matched, tf, lengths, unique = _term_prefixes(tokens[lo:hi], layout.doc, layout.starts, layout.lengths,
                                                           layout.position, layout.unique)
            prefixes = QueryTerm(term.term, term.qtf, term.df, term.cf, matched.astype(index_dtype), tf)
            self.term_prefixes.append(_TermPrefixes(term.qtf, matched, prefixes, lengths, unique))
        self._occurrences_paired = False

    def scores(self, model: RetrievalModel, point: Mapping[str, float], stats: CollectionStatistics) -> np.ndarray:
        """Score of every prefix (the Scorer's summation order, see irgrid.retrieve); ``point`` checked."""
        scores = np.zeros(self.layout.num_tokens, dtype=np.float64)
        for term in self.term_prefixes:
            contribution = model.term_scores(term.prefixes, term.lengths, term.unique, stats, point)
            contribution = np.asarray(contribution, dtype=np.float64)
            if contribution.shape != term.matched.shape:  # a model may return one value for all prefixes
                contribution = np.broadcast_to(contribution, term.matched.shape)
            _add_term_scores(scores, term.matched, contribution, float(term.qtf))
        return model.complete_scores(scores, self.doc_lengths, self.doc_unique, self.terms, stats, point)

    def _pair_occurrences(self) -> None:
        """C3's pairs: consecutive occurrences (prev, cur) of the same query term in a document."""
        layout = self.layout
        occurrences = np.flatnonzero(layout.query)
        self.c3_prev = self.c3_cur = self.c3_docs = np.zeros(0, dtype=np.int64)
        if len(occurrences) > 1:
            key = layout.doc[occurrences] * max(len(layout.vocabulary), 1) + layout.codes[occurrences]
            order = np.argsort(key, kind="stable")       # by (document, term), then by position
            ordered = occurrences[order]
            prev, cur = ordered[:-1], ordered[1:]
            # prev at position >= 2 (an addition); cur follows it in the same document
            pair = (key[order][1:] == key[order][:-1]) & (layout.position[prev] >= 2)
            self.c3_prev, self.c3_cur = prev[pair], cur[pair]
            self.c3_docs = layout.doc[self.c3_cur]
        self._occurrences_paired = True

    def violations(self, scores: np.ndarray, rtol: float = DEFAULT_RTOL) -> dict[str, np.ndarray]:
        """Per-document counts of C1..C4 violations from the prefix scores (see the module doc)."""
        layout = self.layout
        if not self._occurrences_paired:
            self._pair_occurrences()
        counts = _violation_counts(np.asarray(scores, dtype=np.float64), layout.starts, layout.lengths,
                                   layout.query, self.c3_prev, self.c3_cur, self.c3_docs, float(rtol))
        return dict(zip(CONSTRAINTS, counts))


@njit(cache=True, nogil=True)
def _add_term_scores(scores, matched, contribution, qtf):
    """``scores[matched] += qtf * contribution`` (matched distinct): one pass, no temporaries."""
    for i in range(len(matched)):
        scores[matched[i]] += qtf * contribution[i]


@njit(cache=True, nogil=True)
def _violation_counts(scores, starts, lengths, query, c3_prev, c3_cur, c3_docs, rtol):
    """C1..C4 counts per document (rows C1..C4) in one pass over the prefixes (see the module doc).

    d_i = s_i - s_{i-1}; r_i - r_{i-1} = (-d_i) - (-d_{i-1}) is computed as d_{i-1} - d_i, the
    same number to the last bit. Each comparison is written as "not (strictly better)", so a
    tie within the tolerance, and a NaN difference, is a violation.
    """
    n_docs = len(lengths)
    counts = np.zeros((4, n_docs), dtype=np.int64)
    tol = np.zeros(n_docs, dtype=np.float64)
    for d in range(n_docs):
        start, end = starts[d], starts[d] + lengths[d]
        # tolerance: rtol times the largest finite |score| of the document's prefixes
        scale = 0.0
        for i in range(start, end):
            if np.isfinite(scores[i]):
                scale = max(scale, abs(scores[i]))
        tol[d] = rtol * scale
        neg_tol = -tol[d]
        c1 = c2 = c4 = 0
        inc_1 = inc_2 = np.nan                      # d_{i-1}, d_{i-2}
        run = 0                                     # successive non-query additions ending at i
        for i in range(start + 1, end):             # the additions: positions >= 2
            inc = scores[i] - scores[i - 1]
            if query[i]:
                run = 0
                if not inc > tol[d]:                # C1: not an increase
                    c1 += 1
            else:
                run += 1
                if not inc < neg_tol:               # C2: not a decrease
                    c2 += 1
                # C4: r = -d grows (within the tolerance) somewhere in the window i-2, i-1, i
                if run >= 3 and (not (inc_2 - inc_1 < neg_tol) or not (inc_1 - inc < neg_tol)):
                    c4 += 1
            inc_2, inc_1 = inc_1, inc
        counts[0, d], counts[1, d], counts[3, d] = c1, c2, c4
    for k in range(len(c3_cur)):                    # C3: the increase did not shrink
        cur, prev, d = c3_cur[k], c3_prev[k], c3_docs[k]
        if not ((scores[cur] - scores[cur - 1]) - (scores[prev] - scores[prev - 1]) < -tol[d]):
            counts[2, d] += 1
    return counts


def _prefix_scores(
    model: RetrievalModel,
    point: Mapping[str, float],
    terms: list[QueryTerm],
    layout: PrefixLayout,
    stats: CollectionStatistics,
) -> np.ndarray:
    """Score of every prefix of the layout (the Scorer's summation order, see irgrid.retrieve)."""
    return QueryPrefixes(layout, terms).scores(model, point, stats)


def batch_prefix_scores(
    model: RetrievalModel,
    point: Mapping[str, float],
    query_terms: Sequence[Any],
    docs: Sequence[Sequence[str]],
    stats: CollectionStatistics,
) -> tuple[np.ndarray, PrefixLayout]:
    """Prefix scores of several documents at once: (scores per token, layout).

    ``scores[layout.starts[d] + i - 1]`` is the score of the first i terms of ``docs[d]``.
    """
    point = model.check_point(point)
    terms = _query_terms(query_terms)
    layout = prefix_layout(docs, terms)
    return _prefix_scores(model, point, terms, layout, stats), layout


def prefix_scores(
    model: RetrievalModel,
    point: Mapping[str, float],
    query_terms: Sequence[Any],
    doc_terms: Sequence[str],
    stats: CollectionStatistics,
) -> np.ndarray:
    """Score of every prefix of one document: element i-1 is the score of its first i terms.

    ``query_terms``: objects with ``term``, ``qtf``, ``df``, ``cf`` (e.g. :class:`QueryTerm`);
    ``doc_terms``: the document's analysed terms in document order; ``stats``: the real
    collection's statistics. The model's formula is applied to every prefix, including those
    holding no query term (their score is the ``document_scores`` part alone).
    """
    scores, _ = batch_prefix_scores(model, point, query_terms, [list(doc_terms)], stats)
    return scores


# ---------------------------------------------------------------------------- violations
def violations_from_scores(
    scores: np.ndarray, layout: PrefixLayout, rtol: float = DEFAULT_RTOL
) -> dict[str, np.ndarray]:
    """Per-document counts of C1..C4 violations from the prefix scores (see the module doc)."""
    return QueryPrefixes(layout, []).violations(scores, rtol)


def batch_count_violations(
    model: RetrievalModel,
    point: Mapping[str, float],
    query_terms: Sequence[Any],
    docs: Sequence[Sequence[str]],
    stats: CollectionStatistics,
    rtol: float = DEFAULT_RTOL,
) -> dict[str, np.ndarray]:
    """C1..C4 counts and ``length`` for each document of ``docs`` (arrays aligned with docs)."""
    point = model.check_point(point)
    terms = _query_terms(query_terms)
    prefixes = QueryPrefixes(prefix_layout(docs, terms), terms)
    counts = prefixes.violations(prefixes.scores(model, point, stats), rtol)
    counts["length"] = prefixes.layout.lengths.copy()
    return counts


def count_violations(
    model: RetrievalModel,
    point: Mapping[str, float],
    query_terms: Sequence[Any],
    doc_terms: Sequence[str],
    stats: CollectionStatistics,
    rtol: float = DEFAULT_RTOL,
) -> dict[str, int]:
    """Violations of C1..C4 while growing one document term by term: {C1, C2, C3, C4, length}."""
    counts = batch_count_violations(model, point, query_terms, [list(doc_terms)], stats, rtol)
    return {name: int(values[0]) for name, values in counts.items()}


# --------------------------------------------------------------------------------- runs
def _analysed_queries(index, topics: pd.DataFrame, qids: Sequence[str]) -> dict[str, list[QueryTerm]]:
    """Each qid's query terms exactly as the Scorer makes them (retrieve.analyse_queries)."""
    known = set(topics["qid"].astype(str))
    missing = [qid for qid in qids if qid not in known]
    if missing:
        raise ConfigError(f"the run has queries that are not in the topics: {', '.join(missing[:10])}")
    wanted = topics[topics["qid"].astype(str).isin(set(qids))]
    return analyse_queries(index, wanted)


@dataclass
class _RunToAnalyse:
    """One run's top documents, as analyse_runs walks them query by query."""

    model: RetrievalModel
    point: Mapping[str, float]
    scoring: tuple                # (family, point items): runs with equal ones score a document alike
    top: pd.DataFrame             # qid, docno, rank: the top ``depth`` of each query, by qid then rank
    docids: np.ndarray            # int64, per row of top
    rows_of: dict[str, tuple[int, int]]  # qid -> its rows [lo, hi) of top
    columns: dict[str, np.ndarray]        # C1..C4, length per row of top, filled query by query


def _top_of(run: pd.DataFrame, depth: int) -> pd.DataFrame:
    missing_columns = {"qid", "docno", "rank"} - set(run.columns)
    if missing_columns:
        raise ConfigError(f"analyse_run: the run lacks the columns {sorted(missing_columns)}")
    top = pd.DataFrame({"qid": run["qid"].astype(str).to_numpy(dtype=object),
                        "docno": run["docno"].astype(str).to_numpy(dtype=object),
                        "rank": run["rank"].to_numpy()})
    top = top.sort_values(["qid", "rank"], kind="stable").groupby("qid", sort=False).head(depth)
    return top.reset_index(drop=True)


def _docids_of(index, top: pd.DataFrame) -> np.ndarray:
    docnos = pd.unique(top["docno"])
    docid_of = index.docids_of(docnos)
    unknown = [d for d in docnos if d not in docid_of]
    if unknown:
        raise ConfigError(f"the run has documents that are not in the index {index.path}: "
                          f"{', '.join(map(str, unknown[:10]))} (was the run made on another index?)")
    return top["docno"].map(docid_of).to_numpy(dtype=np.int64)


def _query_batches(runs: list[_RunToAnalyse], qids: list[str], num_docs: int) -> list[tuple[list[str], np.ndarray]]:
    """The qids in batches whose runs hold about FORWARD_BATCH_DOCS distinct documents: (qids, docids)."""
    batches = []
    seen = np.zeros(num_docs, dtype=bool)
    batch_qids: list[str] = []
    distinct = 0
    for qid in qids:
        docids = np.unique(np.concatenate([r.docids[slice(*r.rows_of[qid])] for r in runs if qid in r.rows_of]))
        new = docids[~seen[docids]]
        if batch_qids and distinct + len(new) > FORWARD_BATCH_DOCS:
            batches.append((batch_qids, np.flatnonzero(seen)))
            seen[:] = False
            batch_qids, distinct, new = [], 0, docids
        seen[new] = True
        distinct += len(new)
        batch_qids.append(qid)
    if batch_qids:
        batches.append((batch_qids, np.flatnonzero(seen)))
    return batches


def analyse_runs(
    index,
    runs: Sequence[tuple[pd.DataFrame, str, Mapping[str, float]]],
    topics: pd.DataFrame,
    depth: int = 1000,
    rtol: float = DEFAULT_RTOL,
) -> list[pd.DataFrame]:
    """:func:`analyse_run` of several (run, family, point) on one index: a frame per run.

    The runs of one query set share most of their top documents: each query's documents
    (of all the runs) are read, coded and laid out once, and each run's model scores them.
    A document's counts depend on the query, the model and the document only, so each
    frame equals what analyse_run gives for its run alone. Entries with the same family and
    point (one model counted on the documents of several runs, e.g. its own best run and a
    common benchmark run) are scored and counted once per query, over the union.
    """
    stats = CollectionStatistics.from_index(index)
    analysed: list[_RunToAnalyse] = []
    for run, family, point in runs:
        model = get_model(family)
        point = model.check_point(point)
        top = _top_of(run, depth)
        scoring = (family, tuple(sorted(point.items())))
        analysed.append(_RunToAnalyse(model, point, scoring, top, np.zeros(0, dtype=np.int64), {},
                                      {name: np.zeros(len(top), dtype=np.int64) for name in (*CONSTRAINTS, "length")}))
    qids = list(dict.fromkeys(qid for r in analysed for qid in pd.unique(r.top["qid"]).tolist()))
    if qids:
        queries = _analysed_queries(index, topics, qids)
    for r in analysed:
        if r.top.empty:
            continue
        r.docids = _docids_of(index, r.top)
        qid_column = r.top["qid"].to_numpy()
        bounds = np.flatnonzero(np.r_[True, qid_column[1:] != qid_column[:-1], True])
        r.rows_of = {qid_column[lo]: (lo, hi) for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist())}

    for batch_qids, batch in _query_batches(analysed, qids, index.num_docs):
        coded = DocumentBatch.from_terms(index.forward(batch))  # each document coded once
        for qid in batch_qids:
            present = [r for r in analysed if qid in r.rows_of]
            union = np.unique(np.concatenate([r.docids[slice(*r.rows_of[qid])] for r in present]))
            prefixes = QueryPrefixes(coded.take(np.searchsorted(batch, union)).layout(queries[qid]), queries[qid])
            counted: dict[tuple, dict[str, np.ndarray]] = {}  # per scoring: the counts of every union document
            for r in present:
                if r.scoring not in counted:
                    counted[r.scoring] = prefixes.violations(prefixes.scores(r.model, r.point, stats), rtol)
                    counted[r.scoring]["length"] = prefixes.layout.lengths
                counts = counted[r.scoring]
                lo, hi = r.rows_of[qid]
                at = np.searchsorted(union, r.docids[lo:hi])
                for name, values in counts.items():
                    r.columns[name][lo:hi] = values[at]
    frames = []
    for r in analysed:
        if r.top.empty:
            frames.append(pd.DataFrame({name: pd.Series(dtype=object if name in ("qid", "docno") else np.int64)
                                        for name in PER_DOC_COLUMNS}))
        else:
            frames.append(pd.DataFrame({"qid": r.top["qid"], "docno": r.top["docno"], **r.columns})[PER_DOC_COLUMNS])
    return frames


def analyse_run(
    index,
    run: pd.DataFrame,
    topics: pd.DataFrame,
    family: str,
    point: Mapping[str, float],
    depth: int = 1000,
    rtol: float = DEFAULT_RTOL,
) -> pd.DataFrame:
    """Constraint violations of a model on the top ``depth`` documents of each query of a run.

    ``index``: an :class:`irgrid.index.IndexReader` (the analyzer, the forward index, the term
    statistics); ``run``: qid, docno, rank (score is not used); ``topics``: qid, text. The model
    ``family`` at ``point`` (missing parameters take their defaults) scores the prefixes.
    Returns one row per (query, document) in run order: qid, docno, C1, C2, C3, C4, length.
    """
    return analyse_runs(index, [(run, family, point)], topics, depth, rtol)[0]


def summarise_violations(per_doc: pd.DataFrame, by_query: bool = False) -> pd.DataFrame:
    """Violations per document per query: the mean over a query's documents, then over queries.

    Returns one row with C1..C4, ``total`` (their sum), ``queries`` and ``documents`` (counts);
    ``by_query=True`` gives the per-query means instead (one row per qid, with ``documents``).
    """
    names = [*CONSTRAINTS, "total"]
    frame = per_doc[["qid", *CONSTRAINTS]].copy()
    frame["total"] = frame[list(CONSTRAINTS)].sum(axis=1)
    frame[names] = frame[names].astype(np.float64)
    grouped = frame.groupby("qid", sort=True)
    per_query = grouped[names].mean()
    per_query["documents"] = grouped.size()
    if by_query:
        return per_query.reset_index()
    summary = {name: [float(per_query[name].mean()) if len(per_query) else float("nan")] for name in names}
    summary["queries"] = [len(per_query)]
    summary["documents"] = [int(len(frame))]
    return pd.DataFrame(summary)


__all__ = [
    "CONSTRAINTS",
    "DEFAULT_RTOL",
    "DocumentBatch",
    "PrefixLayout",
    "QueryPrefixes",
    "analyse_run",
    "analyse_runs",
    "batch_count_violations",
    "batch_prefix_scores",
    "count_violations",
    "prefix_layout",
    "prefix_scores",
    "summarise_violations",
    "violations_from_scores",
]
