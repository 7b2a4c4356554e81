"""trec_eval's rank-only measures of integer rankings: a chunk job's runs evaluated without docno strings.

A chunk job ranks documents by their ids (``Scorer.grid_tops``); ir-measures takes a run as
``{qid: {docno: score}}``, so each run's rows would need their docno strings and a dictionary
each, and trec_eval's own sort, before any measure is computed. For the measures whose value
depends only on where the judged documents rank (``SUPPORTED``), :class:`RankedJudgements`
computes trec_eval's numbers from the document ids: the qrels are mapped to the index's ids
once a job, each query's ranking is walked once in rank order (a ranked document's grade read
from a table by document id that holds only that query's judgements while it is walked: one read
a row, not a search of the judged ids), and every value is the one
trec_eval computes (as pytrec_eval builds it for ir-measures), to the last bit:
``tests/test_trec_measures.py`` checks them against ir-measures on random rankings and
graded, negative and missing judgements.

trec_eval's conventions, kept here:

- a document is relevant at a grade >= 1 (ir-measures' default ``rel=1``); a judgement below 0
  counts nowhere; a retrieved document without a judgement has grade 0;
- ``AP``: the precision at each relevant document's rank, summed in rank order, over the number of
  relevant documents (0 when none is retrieved); ``AP@k`` the same over the first k ranks;
- ``P@k``: relevant documents in the first k ranks over k (however many were retrieved);
- ``R@k``: relevant documents in the first k ranks over the relevant documents;
- ``Rprec``: relevant documents in the first R ranks over R, R the relevant documents;
- ``RR``: one over the rank of the first relevant document;
- ``nDCG`` and ``nDCG@k``: gains are the grades, discounted by log2(rank + 1), summed in rank
  order, over the same sum for the judged grades >= 1 sorted in decreasing order.

A judged query the run ranks nothing for keeps the measure's default (what ir-measures gives a
query trec_eval skips), as :class:`irgrid.evaluation.evaluator.RunEvaluator` does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit

from ..evaluation.evaluator import RunEvaluator, parse_measures, qrels_columns

#: measure name -> its code in the kernel, and whether it takes a cutoff (None: it must not)
SUPPORTED = {"AP": 0, "P": 1, "R": 2, "Rprec": 3, "RR": 4, "nDCG": 5}
_NEEDS_CUTOFF = {"P", "R"}
_NO_CUTOFF = {"Rprec", "RR"}


def supported(names: Sequence[str]) -> bool:
    """Whether every measure of ``names`` is computed here (else a chunk job hands its runs to ir-measures)."""
    for measure in parse_measures(names):
        params = set(measure.params)
        if measure.NAME not in SUPPORTED or not params <= {"cutoff"}:
            return False
        if (measure.NAME in _NEEDS_CUTOFF and "cutoff" not in params) or (measure.NAME in _NO_CUTOFF and params):
            return False
    return True


class RankedJudgements:
    """A query set's judgements by document id, for evaluating integer rankings of it.

    ``evaluator``: the job's :class:`~irgrid.evaluation.evaluator.RunEvaluator` (its judged queries, measures,
    defaults and value layout are the ones kept); ``qrels``: the table it was made from;
    ``docnos``: the index's docnos in docid order (an Arrow string array).
    """

    def __init__(self, evaluator: RunEvaluator, qrels: pa.Table, docnos: pa.Array):
        self.evaluator = evaluator
        width = len(evaluator.measures)
        self.width = width
        self.codes = np.array([SUPPORTED[m.NAME] for m in evaluator.measures], dtype=np.int64)
        self.cutoffs = np.array([m.params.get("cutoff", 0) or 0 for m in evaluator.measures], dtype=np.int64)
        self.columns = np.array([evaluator._column_of_name[str(m)] for m in evaluator.measures], dtype=np.int64)
        # each judged query's judgements, a repeated pair keeping its last grade (as RunEvaluator's)
        judged_row = evaluator._row_of_qid
        grades: list[dict[str, int]] = [{} for _ in evaluator.judged]
        for qid, docno, grade in zip(*qrels_columns(qrels)):
            row = judged_row.get(qid)
            if row is not None:
                grades[row][docno] = int(grade)
        # per judged query: the relevant count, the ideal gains (grades >= 1, decreasing), and its judged
        # documents the index holds as sorted ids with their grades
        self.num_relevant = np.array([sum(g >= 1 for g in by_doc.values()) for by_doc in grades], dtype=np.int64)
        ideal = [sorted((g for g in by_doc.values() if g >= 1), reverse=True) for by_doc in grades]
        self.ideal_offsets = np.zeros(len(grades) + 1, dtype=np.int64)
        np.cumsum([len(gains) for gains in ideal], out=self.ideal_offsets[1:])
        self.ideal_gains = np.array([g for gains in ideal for g in gains], dtype=np.int64)
        pairs_docnos = [docno for by_doc in grades for docno in by_doc]
        # a judged document the index lacks gets -1 and is left out: no ranking holds it
        ids = pc.fill_null(pc.index_in(pa.array(pairs_docnos, pa.string()), value_set=docnos), -1
                           ).to_numpy(zero_copy_only=False).astype(np.int64)
        judged_ids, judged_grades, offsets = [], [], [0]
        position = 0
        for by_doc in grades:
            found = [(int(ids[position + i]), grade) for i, grade in enumerate(by_doc.values()) if ids[position + i] >= 0]
            position += len(by_doc)
            found.sort()
            judged_ids += [docid for docid, _ in found]
            judged_grades += [grade for _, grade in found]
            offsets.append(len(judged_ids))
        self.num_docs = len(docnos)
        # judged_at[docid]: 1 + the position of docid among judged_ids while its query is walked, else 0
        # (_evaluate sets a query's entries and clears them after it); made on first use, one a job
        self._judged_at: np.ndarray | None = None
        self.judged_ids = np.array(judged_ids, dtype=np.int64)
        self.judged_grades = np.array(judged_grades, dtype=np.int64)
        self.judged_offsets = np.array(offsets, dtype=np.int64)

    def values(self, qids: Sequence[str], docids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """The values of every judged query and measure (:meth:`RunEvaluator._values`'s layout) of the
        rankings of ``qids``: query ``i`` ranks ``docids[offsets[i]:offsets[i+1]]``, best first (ids of this
        index: any other raises ``ValueError``)."""
        judged_row = self.evaluator._row_of_qid
        rows = np.array([judged_row.get(str(qid), -1) for qid in qids], dtype=np.int64)
        values = np.tile(self.evaluator._defaults, len(self.evaluator.judged))
        docids = np.asarray(docids)
        if docids.dtype != np.int32:  # the rankers' ids are int32: no copy of theirs
            docids = docids.astype(np.int64, copy=False)
        # the kernel reads the table at every ranked id unchecked: an id from another index is an error here
        if len(docids) and (int(docids.min()) < 0 or int(docids.max()) >= self.num_docs):
            raise ValueError(f"a ranking holds document ids outside 0..{self.num_docs - 1}: not this index's rankings")
        if self._judged_at is None:
            self._judged_at = np.zeros(self.num_docs, dtype=np.int32)
        _evaluate(rows, docids, np.asarray(offsets, dtype=np.int64), self.judged_ids,
                  self.judged_grades, self.judged_offsets, self.num_relevant, self.ideal_gains, self.ideal_offsets,
                  self.codes, self.cutoffs, self.columns, self.width, values, self._judged_at)
        return values

    def evaluate_table(self, qids: Sequence[str], docids: np.ndarray, offsets: np.ndarray) -> pa.Table:
        """:meth:`RunEvaluator.evaluate_table` of the rankings (the same rows, the same values)."""
        return self.evaluator.values_table(self.values(qids, docids, offsets))


@njit(cache=True, nogil=True)
def _evaluate(rows, docids, offsets, judged_ids, judged_grades, judged_offsets, num_relevant, ideal_gains,
              ideal_offsets, codes, cutoffs, columns, width, values, judged_at):
    # per ranking: its grades in rank order, then each measure as trec_eval accumulates it
    longest = 0
    for q in range(len(rows)):
        longest = max(longest, offsets[q + 1] - offsets[q])
    buffer = np.empty(longest, np.int64)
    for q in range(len(rows)):
        row = rows[q]
        n = offsets[q + 1] - offsets[q]
        if row < 0 or n == 0:
            continue  # not judged, or nothing ranked: the measure's default stays
        lo, hi = judged_offsets[row], judged_offsets[row + 1]
        # the query's judged ids in the table (distinct: one judgement a document), read at each ranked id,
        # then cleared for the next query
        for j in range(lo, hi):
            judged_at[judged_ids[j]] = j + 1 - lo
        grades = buffer[:n]
        start = offsets[q]
        for i in range(n):
            at = judged_at[docids[start + i]]
            grades[i] = judged_grades[lo + at - 1] if at else 0
        for j in range(lo, hi):
            judged_at[judged_ids[j]] = 0
        relevant = num_relevant[row]
        for m in range(len(codes)):
            code, cutoff = codes[m], cutoffs[m]
            depth = n if cutoff == 0 else min(n, cutoff)
            value = 0.0
            if code == 0:  # AP, AP@k
                found, total = 0, 0.0
                for i in range(depth):
                    if grades[i] >= 1:
                        found += 1
                        total += found / (i + 1.0)
                if found:
                    value = total / relevant
            elif code == 1 or code == 2:  # P@k, R@k
                found = 0
                for i in range(depth):
                    found += grades[i] >= 1
                if code == 1:
                    value = found / cutoff
                elif relevant:
                    value = found / relevant
            elif code == 3:  # Rprec
                found = 0
                for i in range(min(n, relevant)):
                    found += grades[i] >= 1
                if relevant:
                    value = found / relevant
            elif code == 4:  # RR
                for i in range(n):
                    if grades[i] >= 1:
                        value = 1.0 / (i + 1.0)
                        break
            else:  # nDCG, nDCG@k
                total = 0.0
                for i in range(depth):
                    if grades[i] > 0:
                        total += grades[i] / math.log2(i + 2.0)
                ideal = 0.0
                first, last = ideal_offsets[row], ideal_offsets[row + 1]
                if cutoff:
                    last = min(last, first + cutoff)
                for i in range(last - first):
                    ideal += ideal_gains[first + i] / math.log2(i + 2.0)
                value = total / ideal if ideal > 0.0 else total
            values[row * width + columns[m]] = value
