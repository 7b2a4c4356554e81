"""Score a query set for many parameter points of one model at once.

The postings of each query are read from the index once; every parameter point
is then scored from the same arrays, so a grid of P points costs one postings
read and P cheap vectorised passes.

Ranking contract (docs/architecture.md): candidates are the documents that
contain at least one query term (as in Lucene/Anserini); ranks are by score,
descending, ties broken by docno ascending; at most ``depth`` per query.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import InputFormatError
from .io import atomic_path, write_parquet
from .models import CollectionStatistics, QueryTerm, RetrievalModel, get_model

RUN_SCHEMA = pa.schema(
    [
        pa.field("qid", pa.string()),
        pa.field("docno", pa.string()),
        pa.field("rank", pa.int32()),
        pa.field("score", pa.float64()),
    ]
)
RUN_COLUMNS = [field.name for field in RUN_SCHEMA]


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
    candidates: np.ndarray            # docids containing >= 1 query term, ascending
    slots: list[np.ndarray]           # per term: index into candidates of each posting


class Scorer:
    """Holds an open index and scores prepared queries for any model and parameters."""

    def __init__(self, index):
        self.index = index
        self.doc_lengths = np.asarray(index.doc_lengths, dtype=np.float64)
        self.doc_unique_terms = np.asarray(index.doc_unique_terms, dtype=np.float64)
        self.docnos = np.asarray(index.docnos, dtype=object)
        # Position of each docid in docno order: the tie-break key.
        self.docno_order = np.empty(len(self.docnos), dtype=np.int64)
        # Sorted by pyarrow on the strings themselves: numpy's fixed-width unicode copy would
        # cost N times the longest docno.
        by_docno = pc.sort_indices(pa.array(self.docnos, type=pa.string())).to_numpy()
        self.docno_order[by_docno] = np.arange(len(self.docnos))
        self.stats = CollectionStatistics.from_index(index)

    def prepare(self, topics: pd.DataFrame) -> list[PreparedQuery]:
        """Analyse every query and read the postings of all their terms in one pass."""
        queries = analyse_queries(self.index, topics)
        postings = self.index.postings(sorted({t.term for terms in queries.values() for t in terms}))
        prepared = []
        for qid, bare_terms in queries.items():
            terms = [
                dataclasses.replace(t, docids=postings[t.term].docids, tfs=postings[t.term].tfs) for t in bare_terms
            ]
            # The union of the postings through a dense mask: linear in the collection
            # size, and several times faster than sorting the concatenated postings.
            matched = np.zeros(self.stats.num_docs, dtype=bool)
            for t in terms:
                matched[t.docids] = True
            candidates = np.flatnonzero(matched).astype(np.int32)
            slots = [np.searchsorted(candidates, t.docids) for t in terms]
            prepared.append(PreparedQuery(qid, terms, candidates, slots))
        return prepared

    def score(self, model: RetrievalModel, query: PreparedQuery, point: Mapping[str, float]) -> np.ndarray:
        """Scores of the query's candidates (aligned with ``query.candidates``)."""
        scores = np.zeros(len(query.candidates), dtype=np.float64)
        for term, slots in zip(query.terms, query.slots):
            contribution = model.term_scores(
                term, self.doc_lengths[term.docids], self.doc_unique_terms[term.docids], self.stats, point
            )
            scores[slots] += term.qtf * contribution
        return model.complete_scores(
            scores,
            self.doc_lengths[query.candidates],
            self.doc_unique_terms[query.candidates],
            query.terms,
            self.stats,
            point,
        )

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

    def run(
        self,
        model: RetrievalModel,
        queries: Sequence[PreparedQuery],
        point: Mapping[str, float],
        depth: int = 1000,
    ) -> pd.DataFrame:
        """A whole run (qid, docno, rank, score) for one parameter point."""
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
) -> list[pd.DataFrame]:
    """Runs of one model family for each parameter point, from one postings read."""
    model = get_model(family)
    checked = [model.check_point(point) for point in points]
    scorer = Scorer(index)
    queries = scorer.prepare(topics)
    return [scorer.run(model, queries, point, depth) for point in checked]


def read_topics(path: str | os.PathLike) -> pd.DataFrame:
    """Topics Parquet (qid, text) as written by irgrid.collections.write_topics."""
    table = pq.read_table(path)
    missing = {"qid", "text"} - set(table.column_names)
    if missing:
        raise InputFormatError(path, None, "a topics table with columns qid, text", f"columns {table.column_names}")
    return table.to_pandas()


def write_run(run: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a run as Parquet with the run schema, atomically."""
    table = pa.Table.from_pandas(run[RUN_COLUMNS], schema=RUN_SCHEMA, preserve_index=False)
    write_parquet(table, path)


def read_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read and check a run: the one data contract (qid, docno, rank, score)."""
    table = pq.read_table(path)
    missing = set(RUN_COLUMNS) - set(table.column_names)
    if missing:
        raise InputFormatError(path, None, f"a run with columns {RUN_COLUMNS}", f"columns {table.column_names}")
    return table.select(RUN_COLUMNS).to_pandas()


def write_trec_run(run: pd.DataFrame, path: str | os.PathLike, tag: str) -> None:
    """Export a run in TREC format: qid Q0 docno rank score tag."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for qid, docno, rank, score in zip(run["qid"], run["docno"], run["rank"], run["score"]):
            out.write(f"{qid} Q0 {docno} {rank} {score:.6f} {tag}\n")
