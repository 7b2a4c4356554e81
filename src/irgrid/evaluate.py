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

    def evaluate(self, run: pd.DataFrame) -> pd.DataFrame:
        """Per-query values (qid, measure, value) of one run for every judged query and measure."""
        in_judged = run["qid"].astype(str).isin(self.judged)
        # ir-measures' own input, {qid: {docno: score}}, built column-wise: handed a DataFrame it
        # builds the same dict a row at a time, ~10x slower than pytrec_eval's evaluation itself.
        # A run lists each query's rows together, so each query's dict is made from its slice in
        # one C-level dict(zip(...)) (rows of a query split apart are merged, as setdefault did).
        qids = run.loc[in_judged, "qid"].astype(str).to_numpy()
        docnos = run.loc[in_judged, "docno"].astype(str).tolist()
        scores = (-run.loc[in_judged, "rank"].to_numpy(dtype=np.float64)).tolist()
        scored: dict[str, dict[str, float]] = {}
        if len(qids):
            starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]])
            ends = np.r_[starts[1:], len(qids)]
            for lo, hi in zip(starts.tolist(), ends.tolist()):
                found = dict(zip(docnos[lo:hi], scores[lo:hi]))
                known = scored.get(qids[lo])
                if known is None:
                    scored[qids[lo]] = found
                else:
                    known.update(found)
        values = {(qid, str(measure)): 0.0 for qid in self.judged for measure in self.measures}
        if scored:
            names: dict = {}  # a measure's name, made once (its repr is the costly part of the loop)
            for metric in self._evaluator.iter_calc(scored):
                name = names.get(metric.measure)
                if name is None:
                    name = names[metric.measure] = str(metric.measure)
                values[(str(metric.query_id), name)] = float(metric.value)
        rows = [(qid, measure, value) for (qid, measure), value in values.items()]
        return pd.DataFrame(rows, columns=["qid", "measure", "value"])


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
