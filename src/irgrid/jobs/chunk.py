"""One chunk's job: retrieve and evaluate its cells in one process, keep the evaluations, not the runs.

Tables, cross-validation, figures and findings read per-query evaluations only, so a chunk's job
writes one file: every cell's per-query values with the cell as columns (``model``, ``params``),
cells in chunk order, each cell's rows as ``irgrid evaluate`` writes them for its run. The runs
are scored, evaluated in memory and dropped. A run something reads again (violation counts, TREC
export, a look at one cell) is made on demand by the one-cell ``retrieve`` rule, or in the
consumer's process (:func:`recompute_run`): scoring is deterministic and a point's run does not
depend on the other points scored beside it (``tests/test_chunk_job.py``), so it is the run a full
store would have held.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputFormatError
from ..evaluation.evaluator import (
    RANK_ONLY_MEASURES,
    RunEvaluator,
    parse_measures,
    read_parquet_file,
    read_qrels_table,
    read_topic_qids,
)
from ..evaluation.ties import TiedRelevantScan, evaluate_ties, is_tie_aware_name
from ..grid import decode_point
from ..index import IndexReader
from ..io import write_json, write_parquet
from ..runs import RUN_SCHEMA, read_topics
from .provenance import METADATA_KEY, git_commit, sidecar_path

log = logging.getLogger(__name__)

#: a chunk's evaluation file: the cell's model and point, then the per-query rows of irgrid.evaluation.evaluator
CHUNK_EVALUATION_SCHEMA = pa.schema([
    pa.field("model", pa.string()), pa.field("params", pa.string()),
    pa.field("qid", pa.string()), pa.field("measure", pa.string()), pa.field("value", pa.float64()),
])
# model, params and measure repeat on every row of a cell: dictionary pages keep them a few bytes a file
CHUNK_WRITE_OPTIONS = {"use_dictionary": ["model", "params", "qid", "measure"], "write_statistics": False}


def parse_chunk_cells(data: Any, source: str = "--cells") -> list[tuple[str, str, str]]:
    """The chunk's cells ``[[model, family, params], ...]`` (:attr:`irgrid.config.Chunk.cells_json`), checked."""
    if not isinstance(data, list) or not data:
        raise InputFormatError(source, None, "a non-empty JSON list of [model, family, params]", found=repr(data)[:80])
    cells = []
    for position, cell in enumerate(data, start=1):
        if not (isinstance(cell, list) and len(cell) == 3 and all(isinstance(part, str) and part for part in cell)):
            raise InputFormatError(source, None, f"cell {position} as [model, family, params] (three names)",
                                   found=repr(cell)[:80])
        cells.append((cell[0], cell[1], cell[2]))
    return cells


def evaluate_chunk(
    index_path: str | os.PathLike,
    topics_path: str | os.PathLike,
    qrels_path: str | os.PathLike,
    cells: Sequence[tuple[str, str, str]],
    measures: Sequence[str],
    depth: int = 1000,
    threads: int = 1,
    parses: str | os.PathLike | None = None,
) -> pa.Table:
    """Every cell's per-query evaluation (``CHUNK_EVALUATION_SCHEMA``), in ``cells`` order.

    Each family's points are scored in one pass over the index and topics opened once
    (``retrieve_grid``); the qrels are handed to ir-measures once (``RunEvaluator``). A cell's rows
    are the ones ``irgrid evaluate`` gives its run file: the same measures, tie-aware names from the
    scores (``irgrid.evaluation.ties``) after ir-measures' values.
    """
    tie_aware = [name for name in measures if is_tie_aware_name(name)]
    names = [name for name in measures if name not in tie_aware]
    topic_qids = read_topic_qids(topics_path)
    qrels = read_qrels_table(qrels_path)
    evaluator = RunEvaluator(qrels, names, topic_qids, qrels_source=qrels_path) if names or not tie_aware else None
    # where a run's ties touch a relevant document, and E[m] beside m there (as `irgrid evaluate` adds)
    scan = TiedRelevantScan(qrels, evaluator.judged, names) if evaluator else None
    index = IndexReader(index_path)
    topics = read_topics(topics_path)
    positions_of: dict[str, list[int]] = {}
    for position, (_, family, _) in enumerate(cells):
        positions_of.setdefault(family, []).append(position)
    evaluations: list[pa.Table | None] = [None] * len(cells)
    # Without tie-aware names and with rank-only measures, a run reaches ir-measures only up to each
    # query's last judged document (irgrid.evaluation.evaluator.RANK_ONLY_MEASURES): those rows are picked here on
    # document ids, and only they get their docno strings.
    judged = _JudgedDocuments(qrels, topic_qids, index) if not tie_aware and _rank_only(names) else None
    # The measures trec_measures computes are taken from the rankings' document ids; ir-measures
    # evaluates the run table otherwise (a feedback family's runs come as tables only).
    # deferred: its kernel loads numba, which irgrid.tables (importing this module) does without
    from .trec_measures import RankedJudgements, supported

    ranked_judgements = None
    if evaluator is not None and not tie_aware and supported(names):
        ranked_judgements = RankedJudgements(evaluator, qrels, _docnos_of(index))
    for family, positions in positions_of.items():
        points = [decode_point(cells[p][2]) for p in positions]
        runs = _scored_runs(index, topics, family, points, depth, threads, parses, judged)
        for (run, ranking), position in zip(runs, positions):
            if ranked_judgements is not None and ranking is not None:
                per_query = ranked_judgements.evaluate_table(*ranking)
            else:
                per_query = evaluator.evaluate_table(run) if evaluator else None
            if tie_aware:
                tied = evaluate_ties(run, qrels, tie_aware, evaluator.judged if evaluator else topic_qids,
                                     run_source=f"{cells[position][0]}/{cells[position][2]}")
                per_query = tied if per_query is None else pa.concat_tables([per_query, tied])
            if scan is not None:
                per_query = pa.concat_tables([per_query, scan.evaluate(run, skip=tie_aware)])
            evaluations[position] = _with_cell(per_query, cells[position][0], cells[position][2])
        del runs  # a family's runs are dropped before the next family's are scored
    return pa.concat_tables(evaluations).combine_chunks()


def _docnos_of(index) -> pa.Array:
    docnos = getattr(index, "docnos_arrow", None)
    return docnos if docnos is not None else pa.array(np.asarray(index.docnos, dtype=object), pa.string())


def _rank_only(names: Sequence[str]) -> bool:
    """Whether every measure's value depends only on the ranks of a query's judged documents."""
    return all(measure.NAME in RANK_ONLY_MEASURES and set(measure.params) <= {"cutoff"}
               for measure in parse_measures(names))


class _JudgedDocuments:
    """The judged (query, document) pairs as int64 keys of query id and document id, for picking a run's
    rows up to each query's last judged document without a docno string per row."""

    def __init__(self, qrels: pa.Table, topic_qids: Sequence[str], index):
        docnos = _docnos_of(index)
        self.num_docs = len(docnos)
        topics = set(topic_qids)
        qids = [str(qid) for qid in qrels.column("qid").to_pylist()]
        docids = pc.index_in(qrels.column("docno").cast(pa.string()), value_set=docnos).to_numpy(zero_copy_only=False)
        self.pairs = [(qid, int(docid)) for qid, docid in zip(qids, docids)
                      if qid in topics and docid == docid]  # NaN: a judged document the index lacks

    def keys(self, qids: Sequence[str]):
        """The judged pairs of the query set ``qids`` as sorted keys (query position x documents + docid)."""
        position = {qid: i for i, qid in enumerate(qids)}
        return np.unique(np.array([position[qid] * self.num_docs + docid for qid, docid in self.pairs
                                   if qid in position], dtype=np.int64))


def _scored_runs(index, topics, family: str, points, depth: int, threads: int, parses, judged):
    """Each point's run as an Arrow table (qid, docno, rank, score), in ``points`` order, with its
    rankings ``(qids, docids, offsets)`` (None for a family with a feedback stage): the runs of
    ``retrieve_grid`` (the same rankings: Scorer.grid_tops), with only the rows up to each query's last
    judged document when ``judged`` is given (what the evaluation reads)."""
    # deferred: the scorer (numba) loads only in jobs that score; irgrid.tables imports this module
    from ..models import get_model
    from ..retrieve import Scorer

    model = get_model(family)
    checked = [model.check_point(point) for point in points]
    if getattr(model, "base", None) is not None:  # a family with a feedback stage: its own pipeline
        # deferred: the scorer (numba) loads only in jobs that score; irgrid.tables imports this module
        from ..feedback import retrieve_with_feedback

        for run in retrieve_with_feedback(Scorer(index, threads=threads), topics, family, checked, depth,
                                          as_arrow=True, parses=parses):
            yield run, None
        return
    scorer = Scorer(index, threads=threads)
    if model.uses_parses and parses is not None and not hasattr(parses, "tree"):
        # deferred: the scorer (numba) loads only in jobs that score; irgrid.tables imports this module
        from ..features.sentence_parses import SentenceParses

        parses = SentenceParses.load(parses, index)
    qid_column = keys = None
    for qids, (docids, scores, offsets) in scorer.grid_tops(model, topics, checked, depth, parses=parses):
        if qid_column is None:  # the same queries for every point
            qid_column = pa.array(list(qids), pa.string())
            keys = judged.keys(list(qids)) if judged is not None else None
        query_of_row = np.repeat(np.arange(len(qids), dtype=np.int64), np.diff(offsets))
        ranks = np.arange(len(docids), dtype=np.int64) - offsets[:-1][query_of_row] + 1
        rows = slice(None)
        if keys is not None:
            judged_rows = np.isin(query_of_row * judged.num_docs + docids, keys)
            last = np.zeros(len(qids), dtype=np.int64)
            np.maximum.at(last, query_of_row[judged_rows], ranks[judged_rows])
            # the tie group holding a query's last judged document is kept whole: an expected value
            # over the orderings of tied documents counts every document of the group (irgrid.evaluation.ties)
            score_at_last = np.full(len(qids), np.nan)
            reached = np.flatnonzero(last > 0)
            score_at_last[reached] = scores[offsets[:-1][reached] + last[reached] - 1]
            rows = np.flatnonzero((ranks <= last[query_of_row]) | (scores == score_at_last[query_of_row]))
        yield pa.Table.from_arrays(
            [qid_column.take(pa.array(query_of_row[rows])), scorer.docnos_arrow.take(pa.array(docids[rows])),
             pa.array(ranks[rows].astype(np.int32)), pa.array(scores[rows])], schema=RUN_SCHEMA), (qids, docids, offsets)


def _with_cell(per_query: pa.Table, model: str, params: str) -> pa.Table:
    rows = per_query.num_rows
    return pa.table({
        "model": pa.array([model] * rows, pa.string()), "params": pa.array([params] * rows, pa.string()),
        "qid": per_query.column("qid").cast(pa.string()), "measure": per_query.column("measure").cast(pa.string()),
        "value": per_query.column("value").cast(pa.float64()),
    }, schema=CHUNK_EVALUATION_SCHEMA)


def write_chunk_evaluation(table: pa.Table, path: str | os.PathLike, provenance: Mapping[str, Any]) -> None:
    """The chunk's evaluations as Parquet, its schema carrying ``provenance`` (the index, topics, depth and
    irgrid version that made them) and a sidecar adding the git commit, as a run file's
    (irgrid.jobs.provenance)."""
    schema = CHUNK_EVALUATION_SCHEMA.with_metadata(
        {METADATA_KEY: json.dumps(dict(provenance), sort_keys=True).encode("utf-8")})
    sidecar_path(path).unlink(missing_ok=True)  # an older sidecar must not outlive a failed write
    write_parquet(table.cast(schema), path, **CHUNK_WRITE_OPTIONS)
    write_json({**provenance, "git_commit": git_commit(), "evaluation": Path(path).name}, sidecar_path(path))


def read_cell_evaluations(paths: Iterable[str | os.PathLike]) -> pa.Table:
    """Chunk evaluation files as one table (``CHUNK_EVALUATION_SCHEMA`` plus ``path``: the file a row is from)."""
    tables = []
    for path in paths:
        table = read_parquet_file(path)
        missing = set(CHUNK_EVALUATION_SCHEMA.names) - set(table.column_names)
        if missing:
            raise InputFormatError(path, None, f"a chunk's evaluations with columns {CHUNK_EVALUATION_SCHEMA.names}",
                                   f"columns {table.column_names}")
        table = table.select(CHUNK_EVALUATION_SCHEMA.names).cast(CHUNK_EVALUATION_SCHEMA)
        tables.append(table.append_column("path", pa.array([str(path)] * table.num_rows, pa.string())))
    return pa.concat_tables(tables)


def recompute_run(index, topics, family: str, params: str, depth: int, parses=None) -> pa.Table:
    """One cell's run (qid, docno, rank, score) scored again: the run its chunk scored and evaluated."""
    # deferred: the scorer (numba) loads only in jobs that score; irgrid.tables imports this module
    from ..retrieve import retrieve_grid

    return retrieve_grid(index, topics, family, [decode_point(params)], depth=depth, as_arrow=True,
                         parses=parses)[0]
