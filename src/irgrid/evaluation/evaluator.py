"""Per-query evaluation through ir-measures (trec_eval's numbers via pytrec_eval).

Two choices make the numbers mean what the run says:

- The ranking evaluated is the run's ``rank`` column: ir-measures re-sorts by
  score (trec_eval breaks ties by docno descending), so we hand it
  ``score = -rank`` and our docno-ascending tie-break is what gets evaluated.
- Every judged query gets a value for every measure. trec_eval (and so
  ir-measures) skips a query the run has no document for; such a query scores
  0 on every measure here, as ``trec_eval -c`` would, so a model that retrieves
  nothing for a query is not rewarded by its disappearing.

Only the part of a query's ranking that can change a value reaches ir-measures
(``RANK_ONLY_MEASURES``): a run of 7,017 queries at depth 1,000 is 7M documents,
and building trec_eval's input for them, not the measures, was the time.

The module imports neither pandas nor the retrieval code: ``irgrid evaluate``
runs once per chunk of runs, hundreds of times in the default run, and those
imports were most of a small chunk's time. pandas comes in where a function
takes or returns a DataFrame.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import ir_measures
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from ir_measures.providers.pytrec_eval_provider import PytrecEvalEvaluator

from ..errors import ConfigError, InputFormatError
from ..io import read_parquet_file, write_parquet

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

DEFAULT_MEASURES = ("AP", "P@10", "P@20", "nDCG@10", "Rprec", "R@1000")

EVAL_SCHEMA = pa.schema(
    [pa.field("qid", pa.string()), pa.field("measure", pa.string()), pa.field("value", pa.float64())]
)

# Measures whose value for a query depends only on the judgements and on the ranks of the judged
# documents it retrieves (trec_eval's map, P_k, ndcg_cut_k, Rprec, recall_k, recip_rank without
# options: an unjudged document is non-relevant with gain 0 and counts only through the ranks of
# the documents after it). For those, the documents a query ranks after its last judged one change
# no value, so they are not handed over; a query that retrieves no judged document scores 0 on
# each, which is the value it gets when it is left out. A measure with any option (rel=, judged_only,
# gains) or of another kind (Judged@k, NumRet, bpref, ...) gets the whole ranking.
RANK_ONLY_MEASURES = frozenset({"AP", "P", "nDCG", "Rprec", "R", "RR"})


def parse_measures(names: Sequence[str]) -> list:
    """ir-measures measure objects from names such as 'AP', 'P@10', 'nDCG@10'."""
    measures = []
    for name in names:
        try:
            measures.append(ir_measures.parse_measure(name))
        except Exception as error:  # ir-measures raises several types for a bad name
            raise ConfigError(f"unknown evaluation measure {name!r}: {error}") from None
    return measures


def read_qrels(path: str | os.PathLike) -> pd.DataFrame:
    """Qrels Parquet (qid, docno, relevance) as written by irgrid.collections.write_qrels."""
    return read_qrels_table(path).to_pandas()


def read_qrels_table(path: str | os.PathLike) -> pa.Table:
    """The qrels as an Arrow table, checked as :func:`read_qrels` does (what `irgrid evaluate` reads)."""
    table = read_parquet_file(path)
    missing = {"qid", "docno", "relevance"} - set(table.column_names)
    if missing:
        raise InputFormatError(path, None, "qrels with columns qid, docno, relevance", f"columns {table.column_names}")
    return table


def read_topic_qids(path: str | os.PathLike) -> list[str]:
    """The query ids of a topics file (qid, text; irgrid.collections.write_topics), as strings."""
    table = read_parquet_file(path)
    missing = {"qid", "text"} - set(table.column_names)
    if missing:
        raise InputFormatError(path, None, "a topics table with columns qid, text", f"columns {table.column_names}")
    return [str(qid) for qid in table.column("qid").to_pylist()]


# What the evaluation reads of a run (irgrid.runs.RUN_COLUMNS less the score, which it does not use).
EVALUATED_RUN_COLUMNS = ["qid", "docno", "rank"]


def read_run_for_evaluation(path: str | os.PathLike) -> pa.Table:
    """A run's qid, docno and rank columns (Arrow), checked for them as irgrid.runs.read_run_table checks
    the run: the evaluation neither reads the scores nor imports the retrieval code."""
    with pq.ParquetFile(path) as file:
        columns = file.schema_arrow.names
        missing = set(EVALUATED_RUN_COLUMNS) - set(columns)
        if missing:
            raise InputFormatError(path, None, f"a run with columns {EVALUATED_RUN_COLUMNS}", f"columns {columns}")
        metadata = file.metadata
    # qid and docno as Parquet stores them when it keeps them as dictionaries (irgrid.runs.RUN_WRITE_OPTIONS):
    # each distinct docno is then looked up once, not once a row. When a column outgrew its dictionary page
    # (a run of 975k rows over a million documents), Parquet wrote it plain, and reading it as a dictionary
    # would hash every row, several times slower.
    encoded = [name for name in ("qid", "docno") if _stored_as_dictionary(metadata, columns.index(name))]
    with pq.ParquetFile(path, metadata=metadata, read_dictionary=encoded) as file:
        return file.read(columns=EVALUATED_RUN_COLUMNS)


def _stored_as_dictionary(metadata: pq.FileMetaData, column: int) -> bool:
    """Whether a string column is held as dictionary indices in every row group: under 4 bytes a value
    (uncompressed, dictionary pages included), which plain strings, a 4-byte length each, cannot be."""
    chunks = [metadata.row_group(group).column(column) for group in range(metadata.num_row_groups)]
    return all(chunk.has_dictionary_page and chunk.total_uncompressed_size < 4 * chunk.num_values for chunk in chunks)


def qrels_columns(qrels: pd.DataFrame | pa.Table) -> tuple[list[str], list[str], list[int]]:
    """The judgements as (qid, docno, relevance) lists of str, str, int, in file order."""
    if isinstance(qrels, pa.Table):
        qid, docno, relevance = (qrels.column(name) for name in ("qid", "docno", "relevance"))
        if (pa.types.is_string(qid.type) and pa.types.is_string(docno.type) and pa.types.is_integer(relevance.type)
                and not (qid.null_count or docno.null_count or relevance.null_count)):
            return qid.to_pylist(), docno.to_pylist(), relevance.to_pylist()
        qrels = qrels.to_pandas()
    return (qrels["qid"].astype(str).tolist(), qrels["docno"].astype(str).tolist(),
            [int(value) for value in qrels["relevance"].astype(int).tolist()])


class RunEvaluator:
    """Per-query evaluation of any number of runs against one set of judgements.

    The judgements are checked, restricted to the query set and handed to ir-measures once
    (``ir_measures.evaluator``, which builds trec_eval's structures for them); each run is then
    one ``evaluate`` call, with the values ``evaluate_run`` gives for that run alone.

    The judged queries are those with qrels; with ``topic_qids`` (the query set that was run),
    only those of the query set: qrels often cover more topics than one query set holds, and
    scoring the others as 0 would deflate every mean.

    A run lists a document at most once per query (the run contract; trec_eval refuses a run
    that does not), so a query's ranking is its rows in rank order.
    """

    def __init__(
        self,
        qrels: pd.DataFrame | pa.Table,
        measure_names: Sequence[str] = DEFAULT_MEASURES,
        topic_qids: Iterable[str] | None = None,
        qrels_source: str | os.PathLike = "qrels",
    ):
        self.measures = parse_measures(measure_names)
        qrel_qids, qrel_docnos, qrel_relevance = qrels_columns(qrels)
        judged_all = set(qrel_qids)
        if not judged_all:
            # an evaluation over no query has no mean: say which file is empty, not ir-measures' traceback
            raise InputFormatError(qrels_source, None, "at least one judgement (qid, docno, relevance)",
                                   found="no judgements")
        if topic_qids is not None:
            topic_qids = {str(qid) for qid in topic_qids}
            judged_all &= topic_qids
            if not judged_all:
                raise InputFormatError(
                    qrels_source, None, "judgements for at least one query of the query set that was run",
                    found=f"none: qrels ids look like {sorted(set(qrel_qids))[:3]}, "
                          f"topic ids like {sorted(topic_qids)[:3] or 'nothing (no topics)'}"
                )
            outside = set(qrel_qids) - topic_qids
            if outside:
                # the judged queries of a collection's other query sets (its other splits): expected, and
                # said once a job at info, not as a warning of every chunk
                log.info("%d judged queries are not in the query set and are not evaluated (e.g. %s)",
                         len(outside), ", ".join(sorted(outside)[:5]))
        self.judged = sorted(judged_all)
        # ir-measures' own input, {qid: {docno: relevance}}, in file order (a repeated pair keeps its
        # last grade, as ir-measures' conversion of a frame does)
        judgements: dict[str, dict[str, int]] = {}
        for qid, docno, relevance in zip(qrel_qids, qrel_docnos, qrel_relevance):
            if qid in judged_all:
                judgements.setdefault(qid, {})[docno] = relevance
        self._evaluator = ir_measures.evaluator(self.measures, judgements)
        # ir-measures' Evaluator.iter_calc wraps the provider's values to add measure.DEFAULT for every
        # (measure, judged query) the provider gave none, by discarding each value's pair from a set of
        # all of them: a pair's hash is the measure's repr, rebuilt for every value, which was most of
        # an evaluation's time on a large chunk (benchmarks/HISTORY.md). For pytrec_eval's
        # evaluator, its own values are taken instead and every pair starts at the measure's DEFAULT,
        # which is what the wrapper gives a pair left out (the same values: tests/test_evaluate.py).
        self._values_of = (self._evaluator._iter_calc if type(self._evaluator) is PytrecEvalEvaluator
                           else self._evaluator.iter_calc)
        self._judged_set = frozenset(self.judged)
        self._row_of_qid = {qid: row for row, qid in enumerate(self.judged)}
        self._measure_names = list(dict.fromkeys(str(measure) for measure in self.measures))  # a name once
        self._column_of_name = {name: column for column, name in enumerate(self._measure_names)}
        # a judged query's values before the provider's: what ir-measures gives a pair the provider left out
        self._defaults = np.zeros(len(self.measures), dtype=np.float64)
        for measure in self.measures:
            self._defaults[self._column_of_name[str(measure)]] = float(measure.DEFAULT)
        # The judged (query, document) pairs as int64 keys (query row * documents + document), for
        # finding each query's last judged document in a run without a Python string per row.
        self._rank_only = all(measure.NAME in RANK_ONLY_MEASURES and set(measure.params) <= {"cutoff"}
                              for measure in self.measures)
        self._judged_docnos = pa.array(sorted({docno for docs in judgements.values() for docno in docs}), pa.string())
        document_of = {docno: i for i, docno in enumerate(self._judged_docnos.to_pylist())}
        self._judged_keys = np.sort(np.fromiter(
            (self._row_of_qid[qid] * len(document_of) + document_of[docno]
             for qid, docs in judgements.items() for docno in docs),
            dtype=np.int64,
        ))

    def evaluate(self, run: pd.DataFrame | pa.Table) -> pd.DataFrame:
        """Per-query values (qid, measure, value) of one run for every judged query and measure.

        ``run``: a DataFrame or an Arrow table (what :func:`read_run_for_evaluation` reads: no
        pandas conversion of its hundreds of thousands of strings) with qid, docno, rank.
        """
        # deferred: pandas only where a frame is returned (see the module's docstring)
        import pandas as pd

        return pd.DataFrame({
            "qid": np.repeat(np.asarray(self.judged, dtype=object), len(self.measures)),
            "measure": np.tile(np.asarray(self._measure_names, dtype=object), len(self.judged)),
            "value": self._values(run),
        })

    def evaluate_table(self, run: pd.DataFrame | pa.Table) -> pa.Table:
        """:meth:`evaluate` as an Arrow table of ``EVAL_SCHEMA`` (what `irgrid evaluate` writes, without pandas)."""
        return self.values_table(self._values(run))

    def values_table(self, values: np.ndarray) -> pa.Table:
        """The table of ``EVAL_SCHEMA`` of the values of every judged query and measure (row (q, m) at q * M + m)."""
        return pa.table({
            "qid": pa.array(np.repeat(np.asarray(self.judged, dtype=object), len(self.measures)), pa.string()),
            "measure": pa.array(np.tile(np.asarray(self._measure_names, dtype=object), len(self.judged)), pa.string()),
            "value": pa.array(values, pa.float64()),
        }, schema=EVAL_SCHEMA)

    def _values(self, run: pd.DataFrame | pa.Table) -> np.ndarray:
        """The values of every judged query and measure, 0 unless ir-measures gives one; row (q, m) at q * M + m."""
        codes, qid_names, docno_entries, docno_codes, ranks = _run_columns(run)
        if self._rank_only and len(codes):
            keep = self._rows_up_to_last_judged(codes, qid_names, docno_entries, docno_codes, ranks)
            codes, ranks, docno_codes = codes[keep], ranks[keep], docno_codes[keep]
        docnos = docno_entries.take(pa.array(docno_codes)).to_pylist()
        # ir-measures' own input, {qid: {docno: score}}, built column-wise: handed a DataFrame it
        # builds the same dict a row at a time, ~10x slower than pytrec_eval's evaluation itself.
        # A run lists each query's rows together, so each query's dict is made from its slice in
        # one C-level dict(zip(...)) (rows of a query split apart are merged, as setdefault did);
        # a query without judgements is dropped a slice at a time, not a row at a time.
        scores = (-ranks).tolist()
        scored: dict[str, dict[str, float]] = {}
        if len(codes):
            starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
            ends = np.r_[starts[1:], len(codes)]
            judged = self._judged_set
            for lo, hi, code in zip(starts.tolist(), ends.tolist(), codes[starts].tolist()):
                qid = qid_names[code]
                if qid not in judged:
                    continue
                found = dict(zip(docnos[lo:hi], scores[lo:hi]))
                known = scored.get(qid)
                if known is None:
                    scored[qid] = found
                else:
                    known.update(found)
        values = np.tile(self._defaults, len(self.judged))
        if scored:
            row_of_qid, column_of_name = self._row_of_qid, self._column_of_name
            columns: dict[int, int] = {}  # by the measure object's id: its hash and str are its repr, costly
            width = len(self.measures)
            for metric in self._values_of(scored):
                column = columns.get(id(metric.measure))
                if column is None:
                    column = columns[id(metric.measure)] = column_of_name[str(metric.measure)]
                values[row_of_qid[str(metric.query_id)] * width + column] = float(metric.value)
        return values

    def _rows_up_to_last_judged(self, codes: np.ndarray, qid_names: list[str], docno_entries: pa.Array,
                                docno_codes: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        """The rows (ascending) of each judged query ranked no lower than its lowest-ranked judged document.

        Ranks, not row positions: ir-measures orders a query by score (here -rank), so a query's rows
        up to rank r are the top of its ranking, ties included, whatever the row order.
        """
        query_row = np.array([self._row_of_qid.get(qid, -1) for qid in qid_names], dtype=np.int64)[codes]
        # each row's document among the judged ones (-1: judged for no query), then its (query, document) key
        # (looked up once per distinct docno of the run: a dictionary-encoded run has each once)
        entry_document = pc.fill_null(pc.index_in(docno_entries, value_set=self._judged_docnos), -1)
        document = entry_document.to_numpy().astype(np.int64)[docno_codes]
        candidate = np.flatnonzero((document >= 0) & (query_row >= 0))
        keys = query_row[candidate] * len(self._judged_docnos) + document[candidate]
        judged_rows = candidate[np.isin(keys, self._judged_keys)]
        last_judged = np.full(len(qid_names), -np.inf)
        np.maximum.at(last_judged, codes[judged_rows], ranks[judged_rows])
        return np.flatnonzero(ranks <= last_judged[codes])


def _run_columns(run: pd.DataFrame | pa.Table) -> tuple[np.ndarray, list[str], pa.Array, np.ndarray, np.ndarray]:
    """A run's rows as (qid code per row, qid of each code, docno entries (Arrow strings), each row's docno
    as an index into them, rank per row as float64).

    The docno entries are the column's dictionary when it is dictionary-encoded (a run read by
    :func:`read_run_for_evaluation`: each distinct docno once), else the column itself.
    """
    if isinstance(run, pa.Table):
        qid, docno = run.column("qid"), run.column("docno")
        if _is_strings(qid) and _is_strings(docno) and not qid.null_count and not docno.null_count:
            qid_codes, qid_entries = _codes_and_entries(qid, encode=True)
            docno_codes, docno_entries = _codes_and_entries(docno, encode=False)
            ranks = run.column("rank").to_numpy().astype(np.float64)
            return qid_codes, qid_entries.to_pylist(), docno_entries, docno_codes, ranks
        run = run.to_pandas()
    # deferred: pandas only where a frame is returned (see the module's docstring)
    import pandas as pd

    codes, names = pd.factorize(run["qid"].astype(str).to_numpy())
    docnos = pa.array(run["docno"].astype(str).tolist(), pa.string())
    return (codes.astype(np.int64), [str(name) for name in names], docnos, np.arange(len(docnos), dtype=np.int64),
            run["rank"].to_numpy(dtype=np.float64))


def _is_strings(column: pa.ChunkedArray) -> bool:
    kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
    return pa.types.is_string(kind)


def _codes_and_entries(column: pa.ChunkedArray, encode: bool) -> tuple[np.ndarray, pa.Array]:
    """A string column as (an int64 index a row, the strings indexed): its dictionary if it has one
    (the chunks' dictionaries unified), else its dictionary encoding (``encode``) or the column itself."""
    if pa.types.is_dictionary(column.type):
        column = column.unify_dictionaries()
        if column.num_chunks == 0:
            return np.zeros(0, np.int64), pa.array([], pa.string())
        codes = np.concatenate([chunk.indices.to_numpy(zero_copy_only=False).astype(np.int64)
                                for chunk in column.chunks])
        return codes, column.chunk(0).dictionary
    column = column.combine_chunks()
    if encode:
        encoded = pc.dictionary_encode(column)
        return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary
    return np.arange(len(column), dtype=np.int64), column


def evaluate_run(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measure_names: Sequence[str] = DEFAULT_MEASURES,
    topic_qids: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Per-query values (qid, measure, value) of one run for every judged query and measure (see RunEvaluator)."""
    return RunEvaluator(qrels, measure_names, topic_qids).evaluate(run)


def write_evaluation(per_query: pd.DataFrame | pa.Table, path: str | os.PathLike) -> None:
    """Per-query values (a DataFrame, or the Arrow table of RunEvaluator.evaluate_table) as Parquet, atomically."""
    if isinstance(per_query, pa.Table):
        write_parquet(per_query.select(EVAL_SCHEMA.names).cast(EVAL_SCHEMA), path)
    else:
        write_parquet(pa.Table.from_pandas(per_query, schema=EVAL_SCHEMA, preserve_index=False), path)


def read_evaluation(path: str | os.PathLike) -> pd.DataFrame:
    table = read_parquet_file(path)
    if not {"qid", "measure", "value"} <= set(table.column_names):
        raise InputFormatError(path, None, "per-query evaluations with columns qid, measure, value",
                               f"columns {table.column_names}")
    return table.to_pandas()


def mean_values(per_query: pd.DataFrame) -> dict[str, float]:
    """Mean of each measure over the judged queries."""
    return per_query.groupby("measure")["value"].mean().to_dict()
