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

Everything is vectorised over the prefixes of all documents of a query: each query term's
prefix term frequencies come from a cumulative sum of an indicator, the prefix unique-term
counts from a cumulative sum of first occurrences, and the model is called once per query term
(``term_scores``) and once for the per-document part (``document_scores``) for all prefixes of
all documents at once, exactly as the :class:`irgrid.retrieve.Scorer` calls it for whole
documents, so the score of a full pseudo-document equals the run's score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..models import CollectionStatistics, QueryTerm, RetrievalModel, get_model

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
        query = np.isin(self.codes, query_codes[query_codes >= 0])
        return PrefixLayout(self.lengths, self.starts, doc, self.position, self.unique, self.codes,
                            self.vocabulary, query)


def prefix_layout(docs: Sequence[Sequence[str]], query_terms: Sequence[Any]) -> PrefixLayout:
    """Lay out every prefix of ``docs`` (lists of analysed terms, in document order) for a query."""
    return DocumentBatch.from_terms(docs).layout(query_terms)


def _term_prefixes(occurrences: np.ndarray, layout: PrefixLayout) -> tuple[np.ndarray, np.ndarray]:
    """(prefixes holding the term, its tf in each) from the term's token indices (ascending).

    In each document holding the term these are the prefixes from its first occurrence to the
    end of the document; tf is the running count of the occurrences. The cost is the number
    of those prefixes, not the number of tokens of the batch.
    """
    doc = layout.doc[occurrences]
    opens = np.r_[True, doc[1:] != doc[:-1]]       # first occurrence in its document
    segment = np.cumsum(opens) - 1                  # per occurrence: which of those documents
    firsts, docs = occurrences[opens], doc[opens]
    spans = layout.starts[docs] + layout.lengths[docs] - firsts
    offsets = np.cumsum(spans) - spans              # where each document's prefixes start in the output
    prefixes = np.arange(int(spans.sum()), dtype=np.int64) + np.repeat(firsts - offsets, spans)
    counts = np.zeros(len(prefixes), dtype=np.int32)
    counts[occurrences - firsts[segment] + offsets[segment]] = 1
    running = np.cumsum(counts, dtype=np.int32)
    tf = running - np.repeat(running[offsets] - 1, spans)  # restart at every document: tf = 1 at its first occurrence
    return prefixes, tf


def _prefix_scores(
    model: RetrievalModel,
    point: Mapping[str, float],
    terms: list[QueryTerm],
    layout: PrefixLayout,
    stats: CollectionStatistics,
) -> np.ndarray:
    """Score of every prefix of the layout (the Scorer's summation order, see retrieve.py)."""
    n = layout.num_tokens
    scores = np.zeros(n, dtype=np.float64)
    doc_lengths = layout.position.astype(np.float64)
    doc_unique = layout.unique.astype(np.float64)
    # the query-term tokens grouped by term, each group in document order
    tokens = np.flatnonzero(layout.query)
    order = np.argsort(layout.codes[tokens], kind="stable")
    tokens, token_codes = tokens[order], layout.codes[tokens][order]
    codes = layout.vocabulary.get_indexer([t.term for t in terms])
    index_dtype = np.int32 if n < 2**31 else np.int64
    for term, code in zip(terms, codes):
        lo, hi = np.searchsorted(token_codes, code, "left"), np.searchsorted(token_codes, code, "right")
        if code < 0 or lo == hi:
            continue  # the term occurs in no document of the batch: it adds nothing to any prefix
        matched, tf = _term_prefixes(tokens[lo:hi], layout)
        prefixes = QueryTerm(term.term, term.qtf, term.df, term.cf, matched.astype(index_dtype), tf)
        contribution = model.term_scores(prefixes, doc_lengths[matched], doc_unique[matched], stats, point)
        scores[matched] += term.qtf * contribution
    return model.complete_scores(scores, doc_lengths, doc_unique, terms, stats, point)


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
    n_docs = len(layout.lengths)
    n = layout.num_tokens
    out = {name: np.zeros(n_docs, dtype=np.int64) for name in CONSTRAINTS}
    if n == 0:
        return out
    # tolerance per document: rtol times the largest finite |score| of its prefixes
    magnitude = np.where(np.isfinite(scores), np.abs(scores), 0.0)
    nonempty = layout.lengths > 0
    scale = np.zeros(n_docs)
    scale[nonempty] = np.maximum.reduceat(magnitude, layout.starts[nonempty])
    tol = rtol * scale[layout.doc]

    step = layout.position >= 2                     # token i is an addition to a non-empty prefix
    inc = np.full(n, np.nan)
    inc[1:] = scores[1:] - scores[:-1]
    inc[~step] = np.nan
    query_step = step & layout.query
    other_step = step & ~layout.query

    def count(mask: np.ndarray, at: np.ndarray | None = None) -> np.ndarray:
        docs = layout.doc[mask] if at is None else layout.doc[at[mask]]
        return np.bincount(docs, minlength=n_docs).astype(np.int64)

    out["C1"] = count(query_step & ~(inc > tol))    # not an increase: a decrease or a tie
    out["C2"] = count(other_step & ~(inc < -tol))   # not a decrease

    # C3: consecutive occurrences (prev, cur) of the same query term in the same document
    occurrences = np.flatnonzero(layout.query)
    if len(occurrences) > 1:
        key = layout.doc[occurrences] * max(len(layout.vocabulary), 1) + layout.codes[occurrences]
        order = np.argsort(key, kind="stable")      # by (document, term), then by position
        ordered = occurrences[order]
        prev, cur = ordered[:-1], ordered[1:]
        pair = (key[order][1:] == key[order][:-1]) & step[prev]
        c3 = pair & ~(inc[cur] - inc[prev] < -tol[cur])  # the increase did not shrink
        out["C3"] = count(c3, cur)

    # C4: every window of three successive non-query additions ending at token i
    if n >= 3:
        window = np.zeros(n, dtype=bool)
        window[2:] = other_step[2:] & other_step[1:-1] & other_step[:-2]
        reduction = -inc
        grow = np.zeros(n, dtype=bool)              # r_i >= r_{i-1} (within tolerance)
        grow[1:] = ~(reduction[1:] - reduction[:-1] < -tol[1:])
        c4 = np.zeros(n, dtype=bool)
        c4[2:] = window[2:] & (grow[1:-1] | grow[2:])
        out["C4"] = count(c4)
    return out


def batch_count_violations(
    model: RetrievalModel,
    point: Mapping[str, float],
    query_terms: Sequence[Any],
    docs: Sequence[Sequence[str]],
    stats: CollectionStatistics,
    rtol: float = DEFAULT_RTOL,
) -> dict[str, np.ndarray]:
    """C1..C4 counts and ``length`` for each document of ``docs`` (arrays aligned with docs)."""
    scores, layout = batch_prefix_scores(model, point, query_terms, docs, stats)
    counts = violations_from_scores(scores, layout, rtol)
    counts["length"] = layout.lengths.copy()
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
    from ..retrieve import analyse_queries

    known = set(topics["qid"].astype(str))
    missing = [qid for qid in qids if qid not in known]
    if missing:
        raise ConfigError(f"the run has queries that are not in the topics: {', '.join(missing[:10])}")
    wanted = topics[topics["qid"].astype(str).isin(set(qids))]
    return analyse_queries(index, wanted)


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
    model = get_model(family)
    point = model.check_point(point)
    stats = CollectionStatistics.from_index(index)
    missing_columns = {"qid", "docno", "rank"} - set(run.columns)
    if missing_columns:
        raise ConfigError(f"analyse_run: the run lacks the columns {sorted(missing_columns)}")
    top = pd.DataFrame({"qid": run["qid"].astype(str).to_numpy(dtype=object),
                        "docno": run["docno"].astype(str).to_numpy(dtype=object),
                        "rank": run["rank"].to_numpy()})
    top = top.sort_values(["qid", "rank"], kind="stable").groupby("qid", sort=False).head(depth)
    top = top.reset_index(drop=True)
    if top.empty:
        return pd.DataFrame({name: pd.Series(dtype=object if name in ("qid", "docno") else np.int64)
                             for name in PER_DOC_COLUMNS})
    qids = list(dict.fromkeys(top["qid"]))
    queries = _analysed_queries(index, topics, qids)
    docid_of = index.docids_of(pd.unique(top["docno"]))
    unknown = [d for d in pd.unique(top["docno"]) if d not in docid_of]
    if unknown:
        raise ConfigError(f"the run has documents that are not in the index {index.path}: "
                          f"{', '.join(map(str, unknown[:10]))} (was the run made on another index?)")
    docids = top["docno"].map(docid_of).to_numpy(dtype=np.int64)
    bounds = np.flatnonzero(np.r_[True, top["qid"].to_numpy()[1:] != top["qid"].to_numpy()[:-1], True])

    columns = {name: np.zeros(len(top), dtype=np.int64) for name in (*CONSTRAINTS, "length")}
    q = 0
    while q < len(qids):
        # a batch of whole queries holding about FORWARD_BATCH_DOCS documents: one forward read
        last = q + 1
        while last < len(qids) and bounds[last + 1] - bounds[q] <= FORWARD_BATCH_DOCS:
            last += 1
        batch = np.unique(docids[bounds[q]:bounds[last]])
        coded = DocumentBatch.from_terms(index.forward(batch))  # each document coded once
        for k in range(q, last):
            lo, hi = bounds[k], bounds[k + 1]
            terms = queries[qids[k]]
            layout = coded.take(np.searchsorted(batch, docids[lo:hi])).layout(terms)
            counts = violations_from_scores(_prefix_scores(model, point, terms, layout, stats), layout, rtol)
            counts["length"] = layout.lengths
            for name, values in counts.items():
                columns[name][lo:hi] = values
        q = last
    return pd.DataFrame({"qid": top["qid"], "docno": top["docno"], **columns})[PER_DOC_COLUMNS]


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
    "analyse_run",
    "batch_count_violations",
    "batch_prefix_scores",
    "count_violations",
    "prefix_layout",
    "prefix_scores",
    "summarise_violations",
    "violations_from_scores",
]
