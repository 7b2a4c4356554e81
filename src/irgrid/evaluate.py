"""Per-query evaluation through ir-measures (trec_eval's numbers via pytrec_eval).

Two choices make the numbers mean what the run says:

- The ranking evaluated is the run's ``rank`` column: ir-measures re-sorts by
  score (trec_eval breaks ties by docno descending), so we hand it
  ``score = -rank`` and our docno-ascending tie-break is what gets evaluated.
- Every judged query gets a value for every measure. trec_eval (and so
  ir-measures) skips a query the run has no document for; such a query scores
  0 on every measure here, as ``trec_eval -c`` would, so a model that retrieves
  nothing for a query is not rewarded by its disappearing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence

import ir_measures
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import ConfigError, InputFormatError
from .io import write_parquet

log = logging.getLogger(__name__)

DEFAULT_MEASURES = ("AP", "P@10", "P@20", "nDCG@10", "Rprec", "R@1000")

EVAL_SCHEMA = pa.schema(
    [pa.field("qid", pa.string()), pa.field("measure", pa.string()), pa.field("value", pa.float64())]
)


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
    table = pq.read_table(path)
    missing = {"qid", "docno", "relevance"} - set(table.column_names)
    if missing:
        raise InputFormatError(path, None, "qrels with columns qid, docno, relevance", f"columns {table.column_names}")
    return table.to_pandas()


class RunEvaluator:
    """Per-query evaluation of any number of runs against one set of judgements.

    The judgements are checked, restricted to the query set and handed to ir-measures once
    (``ir_measures.evaluator``, which builds trec_eval's structures for them); each run is then
    one ``evaluate`` call, with the values ``evaluate_run`` gives for that run alone.

    The judged queries are those with qrels; with ``topic_qids`` (the query set that was run),
    only those of the query set: qrels often cover more topics than one query set holds, and
    scoring the others as 0 would deflate every mean.
    """

    def __init__(
        self,
        qrels: pd.DataFrame,
        measure_names: Sequence[str] = DEFAULT_MEASURES,
        topic_qids: Iterable[str] | None = None,
        qrels_source: str | os.PathLike = "qrels",
    ):
        self.measures = parse_measures(measure_names)
        judged_all = set(qrels["qid"].astype(str))
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
                    found=f"none: qrels ids look like {sorted(set(qrels['qid'].astype(str)))[:3]}, "
                          f"topic ids like {sorted(topic_qids)[:3] or 'nothing (no topics)'}"
                )
            outside = set(qrels["qid"].astype(str)) - topic_qids
            if outside:
                log.warning("%d judged queries are not in the query set and are not evaluated (e.g. %s)",
                            len(outside), ", ".join(sorted(outside)[:5]))
        self.judged = sorted(judged_all)
        qrels = qrels[qrels["qid"].astype(str).isin(judged_all)]
        qrels_frame = pd.DataFrame(
            {
                "query_id": qrels["qid"].astype(str),
                "doc_id": qrels["docno"].astype(str),
                "relevance": qrels["relevance"].astype(int),
            }
        )
        self._evaluator = ir_measures.evaluator(self.measures, qrels_frame)
        self._judged_set = frozenset(self.judged)
        self._row_of_qid = {qid: row for row, qid in enumerate(self.judged)}
        self._measure_names = list(dict.fromkeys(str(measure) for measure in self.measures))  # a name once
        self._column_of_name = {name: column for column, name in enumerate(self._measure_names)}

    def evaluate(self, run: pd.DataFrame | pa.Table) -> pd.DataFrame:
        """Per-query values (qid, measure, value) of one run for every judged query and measure.

        ``run``: a DataFrame or an Arrow table (what :func:`irgrid.retrieve.read_run_table` reads:
        no pandas conversion of its hundreds of thousands of strings) with qid, docno, rank.
        """
        codes, qid_names, docnos, ranks = _run_columns(run)
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
        # every judged query and measure, 0 unless ir-measures gives a value; row (q, m) at q * M + m
        values = np.zeros(len(self.judged) * len(self.measures), dtype=np.float64)
        if scored:
            row_of_qid, column_of_name = self._row_of_qid, self._column_of_name
            columns: dict[int, int] = {}  # by the measure object's id: its hash and str are its repr, costly
            width = len(self.measures)
            for metric in self._evaluator.iter_calc(scored):
                column = columns.get(id(metric.measure))
                if column is None:
                    column = columns[id(metric.measure)] = column_of_name[str(metric.measure)]
                values[row_of_qid[str(metric.query_id)] * width + column] = float(metric.value)
        return pd.DataFrame({
            "qid": np.repeat(np.asarray(self.judged, dtype=object), len(self.measures)),
            "measure": np.tile(np.asarray(self._measure_names, dtype=object), len(self.judged)),
            "value": values,
        })


def _run_columns(run: pd.DataFrame | pa.Table) -> tuple[np.ndarray, list[str], list[str], np.ndarray]:
    """A run's rows as (qid code per row, qid of each code, docno per row, rank per row as float64)."""
    if isinstance(run, pa.Table):
        qid, docno = run.column("qid"), run.column("docno")
        if pa.types.is_string(qid.type) and pa.types.is_string(docno.type) and not qid.null_count:
            encoded = pc.dictionary_encode(qid.combine_chunks()) if len(qid) else None
            codes = (encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64) if encoded is not None
                     else np.zeros(0, np.int64))
            names = encoded.dictionary.to_pylist() if encoded is not None else []
            ranks = run.column("rank").to_numpy().astype(np.float64)
            return codes, names, docno.to_pylist(), ranks
        run = run.to_pandas()
    codes, names = pd.factorize(run["qid"].astype(str).to_numpy())
    return (codes.astype(np.int64), [str(name) for name in names], run["docno"].astype(str).tolist(),
            run["rank"].to_numpy(dtype=np.float64))


def evaluate_run(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measure_names: Sequence[str] = DEFAULT_MEASURES,
    topic_qids: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Per-query values (qid, measure, value) of one run for every judged query and measure (see RunEvaluator)."""
    return RunEvaluator(qrels, measure_names, topic_qids).evaluate(run)


def write_evaluation(per_query: pd.DataFrame, path: str | os.PathLike) -> None:
    write_parquet(pa.Table.from_pandas(per_query, schema=EVAL_SCHEMA, preserve_index=False), path)


def read_evaluation(path: str | os.PathLike) -> pd.DataFrame:
    table = pq.read_table(path)
    if not {"qid", "measure", "value"} <= set(table.column_names):
        raise InputFormatError(path, None, "per-query evaluations with columns qid, measure, value",
                               f"columns {table.column_names}")
    return table.to_pandas()


def mean_values(per_query: pd.DataFrame) -> dict[str, float]:
    """Mean of each measure over the judged queries."""
    return per_query.groupby("measure")["value"].mean().to_dict()
