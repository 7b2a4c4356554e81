"""Tie-aware evaluation: a measure's expected value over every ordering of tied documents.

trec_eval orders documents of equal score by docno, and irgrid's runs by their own tie-break:
both are fair but arbitrary, and when scores tie often (sentence selection by word counts) the
tie-break can move MAP by a third. McSherry & Najork ("Computing information retrieval
performance measures efficiently in the presence of tied scores", ECIR 2008) take instead the
mean of a measure over all orderings of each group of tied documents, and give it in closed
form. Here, per query, a ranking is a sequence of tie groups (documents of equal score, in
descending score order); a group of ``n`` documents holds ``r`` relevant ones (relevance >= 1,
trec_eval's relevance level) and a total gain ``G`` (each document's relevance, negative
grades as 0, as trec_eval's ndcg does). The group occupies ranks ``s+1 .. s+n``.

- P@k, R@k, R-precision, nDCG@k: linear in each rank's gain, and every rank inside a group
  holds each of the group's documents with probability 1/n, so a rank's expected gain is the
  group's mean gain (``r/n`` relevant, ``G/n`` gain). R-precision is P@R with R the number of
  relevant judgements.
- RR: the first group with ``r > 0`` decides. The first relevant document of the group sits at
  its j-th rank with probability ``C(n-j, r-1) / C(n, r)`` (the other r-1 relevant ones after
  it), so E[RR] = sum_j C(n-j, r-1) / C(n, r) / (s+j).
- AP: AP = (1/R) sum over relevant documents d of (relevant ranked up to d) / rank(d). A
  relevant document of the group is at rank s+j with probability 1/n; given that, each of
  the other r-1 relevant documents of the group lies among the j-1 ranks before it with
  probability (j-1)/(n-1). The precision at d is linear in that count, so
  E[precision at d] = (1/n) sum_j (R_before + 1 + (j-1)(r-1)/(n-1)) / (s+j),
  with R_before the relevant documents of the groups before, and the group adds r times it.

Those are the paper's expected values (its AP form is the same sum, written per rank).
``best`` and ``worst`` are the measure when every group orders its documents by relevance
descending or ascending: the spread the tie-break could cover.

A query's tie groups "touch a relevant document" when one of them holds a relevant document
and a document of another grade (only then can an ordering of it change any measure here).

Which documents a run ties is decided by equal scores, compared exactly: a model whose score
is an integer count ties exactly; one summing floats may split documents that are equal in
exact arithmetic, which this module cannot know. A run cut at a depth may end inside a tie
group: only the retrieved part of it is permuted (what the run holds), as trec_eval sees it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import ConfigError, InputFormatError

#: how a tie group is ordered: the mean over its orderings, or its best or worst ordering
MODES = ("expected", "best", "worst")
#: the measures computed here (ir-measures' names): cutoff ones take ``@k``
CUTOFF_MEASURES = frozenset({"P", "R", "nDCG"})
WHOLE_MEASURES = frozenset({"AP", "RR", "Rprec"})
#: the name of a tie-aware measure in an evaluation file: ``E[AP]``, ``best[P@10]``, ``worst[RR]``
_PREFIX = {"expected": "E", "best": "best", "worst": "worst"}
_MODE_OF_PREFIX = {prefix: mode for mode, prefix in _PREFIX.items()}


@dataclass(frozen=True)
class TieMeasure:
    """One tie-aware measure: ``base`` (``AP``, ``P``, ...), its cutoff (None: none) and the mode."""

    base: str
    cutoff: int | None = None
    mode: str = "expected"

    @property
    def measure(self) -> str:
        """ir-measures' name of the measure the value stands beside (``P@10``)."""
        return self.base if self.cutoff is None else f"{self.base}@{self.cutoff}"

    def __str__(self) -> str:
        return f"{_PREFIX[self.mode]}[{self.measure}]"


def parse_tie_measure(name: str, mode: str | None = None) -> TieMeasure:
    """``E[AP]``, ``best[P@10]``, ``worst[nDCG@10]``; or a plain ``AP`` with ``mode`` given."""
    text = name.strip()
    if text.endswith("]") and "[" in text:
        prefix, inner = text[:-1].split("[", 1)
        if prefix not in _MODE_OF_PREFIX:
            raise ConfigError(f"tie-aware measure {name!r}: expected E[...], best[...] or worst[...]")
        if mode is not None and _MODE_OF_PREFIX[prefix] != mode:
            raise ConfigError(f"tie-aware measure {name!r} names mode {_MODE_OF_PREFIX[prefix]!r}, not {mode!r}")
        mode, text = _MODE_OF_PREFIX[prefix], inner
    mode = mode or "expected"
    if mode not in MODES:
        raise ConfigError(f"tie mode {mode!r}: expected one of {list(MODES)}")
    base, _, cutoff = text.partition("@")
    base = {"ndcg": "nDCG", "map": "AP", "mrr": "RR", "rprec": "Rprec"}.get(base.lower(), base)
    if base in WHOLE_MEASURES and not cutoff:
        return TieMeasure(base, None, mode)
    if base in CUTOFF_MEASURES and cutoff.isdigit() and int(cutoff) > 0:
        return TieMeasure(base, int(cutoff), mode)
    raise ConfigError(f"tie-aware measure {name!r}: expected AP, RR, Rprec or P@k, R@k, nDCG@k (k > 0), "
                      "optionally as E[...], best[...] or worst[...]")


def is_tie_measure(name: str) -> bool:
    """Whether ``name`` is written as a tie-aware measure (``E[AP]``, ``best[P@10]``...)."""
    text = str(name).strip()
    return text.endswith("]") and text.split("[", 1)[0] in _MODE_OF_PREFIX


@dataclass(frozen=True)
class TiedRanking:
    """One query's ranking as tie groups, best score first: per group its size, relevant count
    (relevance >= 1) and gain (relevance clipped at 0); and the query's judgements' relevant count
    and ideal gains (descending), which the measures normalise by."""

    sizes: np.ndarray
    relevant: np.ndarray
    gains: np.ndarray
    grades: tuple[tuple[int, ...], ...]
    total_relevant: int
    ideal_gains: np.ndarray

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(self.sizes)[:-1])).astype(np.int64) if len(self.sizes) else self.sizes

    def ordered(self, mode: str) -> TiedRanking:
        """The ranking with every group ordered (``best``: relevance descending; ``worst``: ascending)
        as groups of one; ``expected``: itself."""
        if mode == "expected":
            return self
        if len(self.sizes) and not self.grades:
            raise ValueError("this ranking was built without its groups' grades (expected values only)")
        grades = [grade for group in self.grades
                  for grade in sorted(group, reverse=(mode == "best"))]
        return tied_ranking([[grade] for grade in grades], self.total_relevant, self.ideal_gains)


def tied_ranking(groups: Sequence[Sequence[int]], total_relevant: int, ideal_gains: Iterable[float]) -> TiedRanking:
    """A :class:`TiedRanking` from each tie group's relevance grades (unjudged: 0), best group first."""
    grades = tuple(tuple(int(grade) for grade in group) for group in groups if len(group))
    return TiedRanking(
        sizes=np.array([len(group) for group in grades], dtype=np.int64),
        relevant=np.array([sum(grade >= 1 for grade in group) for group in grades], dtype=np.int64),
        gains=np.array([sum(max(grade, 0) for grade in group) for group in grades], dtype=np.float64),
        grades=grades,
        total_relevant=int(total_relevant),
        ideal_gains=np.sort(np.asarray(list(ideal_gains), dtype=np.float64))[::-1],
    )


def ranking_from_scores(scores: Sequence[float], grades: Sequence[int], judged_grades: Iterable[int]) -> TiedRanking:
    """A query's :class:`TiedRanking` from its retrieved documents' scores and relevance grades
    (unjudged: 0) in any order, and every judgement's grade for the query (retrieved or not)."""
    scores = np.asarray(scores, dtype=np.float64)
    grades = np.asarray(grades, dtype=np.int64)
    judged = [int(grade) for grade in judged_grades]
    order = np.argsort(-scores, kind="stable")
    scores, grades = scores[order], grades[order]
    bounds = np.flatnonzero(np.r_[True, scores[1:] != scores[:-1], True]) if len(scores) else np.array([0])
    groups = [grades[lo:hi].tolist() for lo, hi in zip(bounds[:-1], bounds[1:])]
    return tied_ranking(groups, sum(grade >= 1 for grade in judged), [max(grade, 0) for grade in judged])


def _positions_within(ranking: TiedRanking, cutoff: int) -> np.ndarray:
    """Per group, how many of its ranks are among the first ``cutoff``."""
    starts = ranking.starts
    return np.clip(np.minimum(starts + ranking.sizes, cutoff) - starts, 0, None)


def precision(ranking: TiedRanking, cutoff: int) -> float:
    """E[P@cutoff] (trec_eval's P_k: relevant among the first k, over k)."""
    if not len(ranking.sizes):
        return 0.0
    within = _positions_within(ranking, cutoff)
    return float(np.sum(within * ranking.relevant / ranking.sizes)) / cutoff


def recall(ranking: TiedRanking, cutoff: int) -> float:
    """E[R@cutoff]: relevant among the first k over the query's relevant judgements."""
    if not len(ranking.sizes) or ranking.total_relevant == 0:
        return 0.0
    within = _positions_within(ranking, cutoff)
    return float(np.sum(within * ranking.relevant / ranking.sizes)) / ranking.total_relevant


def r_precision(ranking: TiedRanking) -> float:
    """E[R-precision]: P@R with R the query's relevant judgements."""
    if ranking.total_relevant == 0:
        return 0.0
    return precision(ranking, ranking.total_relevant)


def _discounts(count: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, count + 2, dtype=np.float64))


def ndcg(ranking: TiedRanking, cutoff: int) -> float:
    """E[nDCG@cutoff] (trec_eval's ndcg_cut: gain = grade, discount 1/log2(rank+1), ideal over the judgements)."""
    ideal = ranking.ideal_gains[:cutoff]
    ideal_dcg = float(np.sum(ideal * _discounts(len(ideal))))
    if ideal_dcg <= 0 or not len(ranking.sizes):
        return 0.0
    depth = min(int(np.sum(ranking.sizes)), cutoff)
    mean_gain = np.repeat(ranking.gains / ranking.sizes, ranking.sizes)[:depth]
    return float(np.sum(mean_gain * _discounts(depth))) / ideal_dcg


def reciprocal_rank(ranking: TiedRanking) -> float:
    """E[RR]: the first group holding a relevant document decides (see the module's docstring)."""
    hits = np.flatnonzero(ranking.relevant > 0)
    if not len(hits):
        return 0.0
    group = int(hits[0])
    start, n, r = int(ranking.starts[group]), int(ranking.sizes[group]), int(ranking.relevant[group])
    # P(first relevant at the group's j-th rank) = C(n-j, r-1) / C(n, r): r/n at j = 1, then each
    # step multiplies by (n-j-r+1)/(n-j)
    expected, probability = 0.0, r / n
    for j in range(1, n - r + 2):
        expected += probability / (start + j)
        if n - j > 0:
            probability *= (n - j - r + 1) / (n - j)
    return expected


def average_precision(ranking: TiedRanking) -> float:
    """E[AP] (trec_eval's map; relevant documents not retrieved add 0; see the module's docstring)."""
    if ranking.total_relevant == 0 or not len(ranking.sizes):
        return 0.0
    hits = np.flatnonzero(ranking.relevant > 0)  # only groups holding a relevant document add to AP
    starts, sizes, relevant = ranking.starts[hits], ranking.sizes[hits], ranking.relevant[hits]
    befores = np.cumsum(relevant) - relevant
    single = sizes == 1  # a group of one: its document's precision, (before + 1) / rank, in one step
    total = float(np.sum((befores[single] + 1) / (starts[single] + 1)))
    for start, n, r, before in zip(starts[~single].tolist(), sizes[~single].tolist(), relevant[~single].tolist(),
                                   befores[~single].tolist()):
        j = np.arange(1, n + 1, dtype=np.float64)
        others_before = (j - 1) * (r - 1) / (n - 1)
        total += r * float(np.mean((before + 1 + others_before) / (start + j)))
    return total / ranking.total_relevant


def value(ranking: TiedRanking, measure: TieMeasure) -> float:
    """One query's value of ``measure`` (in its mode)."""
    ranking = ranking.ordered(measure.mode)
    if measure.base == "AP":
        return average_precision(ranking)
    if measure.base == "RR":
        return reciprocal_rank(ranking)
    if measure.base == "Rprec":
        return r_precision(ranking)
    if measure.base == "P":
        return precision(ranking, measure.cutoff)
    if measure.base == "R":
        return recall(ranking, measure.cutoff)
    return ndcg(ranking, measure.cutoff)


def ties_touch_relevant(ranking: TiedRanking, cutoff: int | None = None) -> bool:
    """Whether a tie group holds a relevant document and a document of another grade (among those
    starting within the first ``cutoff`` ranks; None: anywhere)."""
    starts = ranking.starts
    for start, group in zip(starts.tolist(), ranking.grades):
        if cutoff is not None and start >= cutoff:
            break
        if len(group) > 1 and any(grade >= 1 for grade in group) and len(set(group)) > 1:
            return True
    return False


#: the per-query flags a tie-aware evaluation can give beside its measures (value 1 or 0; mean: a share)
TIED_RELEVANT = "tied_relevant"


def tied_relevant_name(cutoff: int | None) -> str:
    """``tied_relevant`` (anywhere) or ``tied_relevant@k`` (a group starting in the top k)."""
    return TIED_RELEVANT if cutoff is None else f"{TIED_RELEVANT}@{cutoff}"


def parse_tied_relevant(name: str) -> int | None:
    """The cutoff of a ``tied_relevant[@k]`` name (None: anywhere); ConfigError for another name."""
    base, _, cutoff = str(name).strip().partition("@")
    if base != TIED_RELEVANT or (cutoff and not (cutoff.isdigit() and int(cutoff) > 0)):
        raise ConfigError(f"{name!r}: expected tied_relevant or tied_relevant@k (k > 0)")
    return int(cutoff) if cutoff else None


def is_tie_aware_name(name: str) -> bool:
    """Whether this module evaluates ``name``: a tie-aware measure (``E[AP]``...) or a ``tied_relevant`` flag."""
    text = str(name).strip()
    return is_tie_measure(text) or text.partition("@")[0] == TIED_RELEVANT


def canonical_name(name: str) -> str:
    """A tie-aware name as evaluation files store it (``E[ndcg@10]`` -> ``E[nDCG@10]``); ConfigError if unknown."""
    if str(name).strip().partition("@")[0] == TIED_RELEVANT:
        return tied_relevant_name(parse_tied_relevant(name))
    if not is_tie_measure(name):
        raise ConfigError(f"{name!r}: expected a tie-aware measure E[...], best[...], worst[...] or tied_relevant[@k]")
    return str(parse_tie_measure(name))


def beside_each(measures: Sequence[str]) -> tuple[list[str], list[str]]:
    """For a table of trec_eval-style ``measures``: (the table's measures with each one this module
    computes followed by its expected value, and ``tied_relevant@k`` for the largest cutoff k and
    ``tied_relevant`` at the end; the tie-aware names to evaluate). ``[AP, P@10, Judged@10]`` ->
    ``[AP, E[AP], P@10, E[P@10], Judged@10, tied_relevant@10, tied_relevant]``."""
    table, evaluated = [], []
    for name in measures:
        table.append(name)
        if is_tie_aware_name(name):
            evaluated.append(canonical_name(name))
            continue
        try:
            tie_aware = str(parse_tie_measure(name, "expected"))
        except ConfigError:  # a measure without a tie-aware form here (Judged@k, bpref...)
            continue
        if tie_aware not in measures:
            table.append(tie_aware)
            evaluated.append(tie_aware)
    cutoffs = [parse_tie_measure(name).cutoff for name in evaluated if is_tie_measure(name)]
    cutoffs = [cutoff for cutoff in cutoffs if cutoff is not None]
    flags = ([tied_relevant_name(max(cutoffs))] if cutoffs else []) + [tied_relevant_name(None)]
    for flag in flags:
        if flag not in table:
            table.append(flag)
            evaluated.append(flag)
    return table, list(dict.fromkeys(evaluated))


def evaluate_ties(
    run: pa.Table,
    qrels: pa.Table,
    names: Sequence[str],
    topic_qids: Iterable[str] | None = None,
    run_source: str | os.PathLike = "run",
) -> pa.Table:
    """Per-query tie-aware values (qid, measure, value) of a run (qid, docno, score) for every judged
    query (of ``topic_qids`` when given), as irgrid.evaluation.evaluator gives trec_eval-style ones: a query the
    run retrieves nothing for scores 0.

    ``names``: tie-aware measures (``E[AP]``, ``best[P@10]``, ``worst[RR]``; a plain ``AP`` is
    ``E[AP]``) and ``tied_relevant``/``tied_relevant@k`` flags: 1 where the query's ties (those of a
    group starting in the top k) touch a relevant document, else 0.
    """
    # deferred: the config imports this module to plan; .evaluator brings ir_measures, needed only when ties are scanned
    from .evaluator import EVAL_SCHEMA, qrels_columns

    flags = {name: parse_tied_relevant(name) for name in names if str(name).partition("@")[0] == TIED_RELEVANT}
    measures = [parse_tie_measure(name) for name in names if name not in flags]
    missing = {"qid", "docno", "score"} - set(run.column_names)
    if missing:
        raise InputFormatError(run_source, None, "a run with columns qid, docno, score", f"columns {run.column_names}")
    qrel_qids, qrel_docnos, qrel_grades = qrels_columns(qrels)
    judgements: dict[str, dict[str, int]] = {}
    for qid, docno, grade in zip(qrel_qids, qrel_docnos, qrel_grades):
        judgements.setdefault(qid, {})[docno] = grade  # a repeated pair keeps its last grade, as in evaluate
    judged = set(judgements)
    if topic_qids is not None:
        judged &= {str(qid) for qid in topic_qids}
    run_qids = [str(qid) for qid in run.column("qid").to_pylist()]
    run_docnos = [str(docno) for docno in run.column("docno").to_pylist()]
    run_scores = run.column("score").to_numpy()
    rows_of: dict[str, list[int]] = {}
    for row, qid in enumerate(run_qids):
        if qid in judged:
            rows_of.setdefault(qid, []).append(row)
    out_names = [str(measure) for measure in measures] + list(flags)
    qids, values = [], []
    for qid in sorted(judged):
        grades_of = judgements[qid]
        rows = rows_of.get(qid, [])
        ranking = ranking_from_scores(run_scores[rows], [grades_of.get(run_docnos[row], 0) for row in rows],
                                      grades_of.values())
        values.extend(value(ranking, measure) for measure in measures)
        values.extend(float(ties_touch_relevant(ranking, cutoff)) for cutoff in flags.values())
        qids.extend([qid] * len(out_names))
    return pa.table({"qid": pa.array(qids, pa.string()),
                     "measure": pa.array(out_names * (len(qids) // max(len(out_names), 1)), pa.string()),
                     "value": pa.array(values, pa.float64())}, schema=EVAL_SCHEMA)


def summarise_ties(per_query: pa.Table) -> dict[str, float]:
    """Each measure's mean over the queries, and each ``tied_relevant`` flag's count of queries."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for name, number in zip(per_query.column("measure").to_pylist(), per_query.column("value").to_pylist()):
        sums[name] = sums.get(name, 0.0) + number
        counts[name] = counts.get(name, 0) + 1
    return {name: (sums[name] if name.startswith(TIED_RELEVANT) else sums[name] / counts[name]) for name in sums}



# ------------------------------------------------------------------ reading runs and qrels, the summary


def _is_parquet(path: str | os.PathLike) -> bool:
    with open(path, "rb") as file:
        return file.read(4) == b"PAR1"


def read_scored_run(path: str | os.PathLike) -> pa.Table:
    """A run as (qid, docno, rank, score): irgrid's Parquet run, or a TREC run file (``qid Q0 docno rank
    score tag``), whose ranks are then trec_eval's own order (score descending, docno descending)."""
    if _is_parquet(path):
        with pq.ParquetFile(path) as file:
            columns = file.schema_arrow.names
            missing = {"qid", "docno", "score"} - set(columns)
            if missing:
                raise InputFormatError(path, None, "a run with columns qid, docno, score", f"columns {columns}")
            table = file.read(columns=[name for name in ("qid", "docno", "rank", "score") if name in columns])
        for name in ("qid", "docno"):  # irgrid's runs keep them dictionary-encoded
            table = table.set_column(table.column_names.index(name), name, table.column(name).cast(pa.string()))
        if "rank" not in table.column_names:
            table = table.append_column("rank", pa.array(_trec_eval_ranks(table), pa.int64()))
        return table.select(["qid", "docno", "rank", "score"])
    qids, docnos, scores = [], [], []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                raise InputFormatError(path, number, "a TREC run line: qid Q0 docno rank score tag",
                                       f"{len(fields)} fields")
            try:
                score = float(fields[4])
            except ValueError:
                raise InputFormatError(path, number, "a number as the fifth field (the score)", fields[4]) from None
            qids.append(fields[0])
            docnos.append(fields[2])
            scores.append(score)
    table = pa.table({"qid": pa.array(qids, pa.string()), "docno": pa.array(docnos, pa.string()),
                      "score": pa.array(scores, pa.float64())})
    return table.append_column("rank", pa.array(_trec_eval_ranks(table), pa.int64())).select(
        ["qid", "docno", "rank", "score"])


def _trec_eval_ranks(table: pa.Table) -> list[int]:
    """Each row's rank in its query under trec_eval's order: score descending, then docno descending."""
    qids = table.column("qid").to_pylist()
    docnos = table.column("docno").to_pylist()
    scores = table.column("score").to_pylist()
    order = sorted(range(len(qids)), key=lambda row: (qids[row], -scores[row], _descending(docnos[row])))
    ranks = [0] * len(qids)
    previous, rank = None, 0
    for row in order:
        rank = rank + 1 if qids[row] == previous else 1
        previous = qids[row]
        ranks[row] = rank
    return ranks


class _descending(str):
    """A string that sorts in reverse (for a docno-descending tie-break inside an ascending sort key)."""

    def __lt__(self, other: str) -> bool:
        return str.__gt__(self, other)


def read_any_qrels(path: str | os.PathLike) -> pa.Table:
    """Qrels as (qid, docno, relevance): irgrid's Parquet qrels, or a TREC qrels file (``qid iter docno rel``)."""
    if _is_parquet(path):
        # deferred: the config imports this module to plan; .evaluator brings ir_measures, needed only when ties are scanned
        from .evaluator import read_qrels_table

        return read_qrels_table(path)
    qids, docnos, grades = [], [], []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 4:
                raise InputFormatError(path, number, "a TREC qrels line: qid iteration docno relevance",
                                       f"{len(fields)} fields")
            try:
                grades.append(int(fields[3]))
            except ValueError:
                raise InputFormatError(path, number, "an integer relevance as the fourth field", fields[3]) from None
            qids.append(fields[0])
            docnos.append(fields[2])
    return pa.table({"qid": pa.array(qids, pa.string()), "docno": pa.array(docnos, pa.string()),
                     "relevance": pa.array(grades, pa.int64())})


def compare_with_trec_eval(run: pa.Table, qrels: pa.Table, measures: Sequence[str],
                           topic_qids: Iterable[str] | None = None) -> tuple[list[dict], dict[str, int], int]:
    """For each measure: the trec_eval-style mean (the run's ranks), and the tie-aware expected, best and
    worst means; the number of queries whose ties touch a relevant document (``tied_relevant``, and
    ``tied_relevant@k`` for the largest cutoff among the measures); the number of judged queries."""
    # deferred: the config imports this module to plan; .evaluator brings ir_measures, needed only when ties are scanned
    from .evaluator import RunEvaluator

    parsed = [parse_tie_measure(name, "expected") for name in measures]
    plain = [tie.measure for tie in parsed]
    evaluated = RunEvaluator(qrels, plain, topic_qids).evaluate_table(run)
    cutoffs = [tie.cutoff for tie in parsed if tie.cutoff is not None]
    flags = [tied_relevant_name(None)] + ([tied_relevant_name(max(cutoffs))] if cutoffs else [])
    names = [str(TieMeasure(tie.base, tie.cutoff, mode)) for tie in parsed for mode in MODES] + flags
    tied = evaluate_ties(run, qrels, names, topic_qids)
    means = summarise_ties(tied)
    trec_eval = summarise_ties(evaluated)
    rows = [{"measure": tie.measure, "trec_eval": trec_eval[tie.measure],
             **{mode: means[str(TieMeasure(tie.base, tie.cutoff, mode))] for mode in MODES}} for tie in parsed]
    queries = len(set(tied.column("qid").to_pylist()))
    return rows, {flag: int(means[flag]) for flag in flags}, queries


# ------------------------------------------------------------------ every evaluation: where ties touch a relevant document

#: per query, the rank (1-based) at which its first tie group touching a relevant document starts; an
#: evaluation file holds a row of it only for the queries that have such a group (most have none), so
#: "ties touching a relevant document within the top k" is a row with value <= k
FIRST_TIED_RELEVANT = "first_tied_relevant_rank"


def tie_form(measure: str) -> TieMeasure | None:
    """The expected-value form of a trec_eval-style ``measure`` (``P@10`` -> ``E[P@10]``), or None where
    this module has none (Judged@k, bpref, a measure with options) or ``measure`` is tie-aware already."""
    if is_tie_aware_name(measure) or str(measure) == FIRST_TIED_RELEVANT:
        return None
    try:
        return parse_tie_measure(measure, "expected")
    except ConfigError:
        return None


def touches_within(first_rank: float, tie: TieMeasure) -> bool:
    """Whether a query whose first tie touching a relevant document starts at ``first_rank`` can have
    ``tie``'s value changed by it: within the cutoff, or anywhere for AP, RR and R-precision."""
    return tie.cutoff is None or first_rank <= tie.cutoff


class TiedRelevantScan:
    """For every run of one query set: which judged queries have a tie group touching a relevant document
    and where the first one starts (:data:`FIRST_TIED_RELEVANT`), and, for each of ``measures`` with a
    tie-aware form, the expected value ``E[m]`` of the queries whose tie starts within m's cutoff.

    What `irgrid evaluate` adds to every evaluation. The scan is vectorised over the run (numpy, no
    Python step per row), and expected values are computed and written only for the queries a tie
    touches: every other query's ``E[m]`` is its trec_eval-style m, equal in exact arithmetic (no tie
    group of its within the cutoff mixes a relevant document with one of another grade), so a table
    takes m there (irgrid.tables). An experiment with ``tie_aware`` asks for its ``E[m]`` by name and
    gets them for every judged query; those names are left to that path (``skip``).
    """

    def __init__(self, qrels: pa.Table, judged: Sequence[str], measures: Sequence[str]):
        # deferred: the config imports this module to plan; .evaluator brings ir_measures, needed only when ties are scanned
        from .evaluator import qrels_columns

        self.judged = [str(qid) for qid in judged]
        self.measures = {name: tie for name in measures if (tie := tie_form(name)) is not None}
        row_of_qid = {qid: row for row, qid in enumerate(self.judged)}
        self._row_of_qid = row_of_qid
        self.judgements: list[dict[str, int]] = [{} for _ in self.judged]
        for qid, docno, grade in zip(*qrels_columns(qrels)):
            row = row_of_qid.get(qid)
            if row is not None:
                self.judgements[row][docno] = grade  # a repeated pair keeps its last grade, as in evaluate
        docnos = sorted({docno for judged_docs in self.judgements for docno in judged_docs})
        self._docnos = pa.array(docnos, pa.string())
        document_of = {docno: i for i, docno in enumerate(docnos)}
        keys, grades = [], []
        for row, judged_docs in enumerate(self.judgements):
            for docno, grade in judged_docs.items():
                keys.append(row * len(docnos) + document_of[docno])
                grades.append(grade)
        order = np.argsort(np.asarray(keys, dtype=np.int64), kind="stable")
        self._keys = np.asarray(keys, dtype=np.int64)[order]
        self._grades = np.asarray(grades, dtype=np.int64)[order]

    def scan(self, run: pa.Table) -> _Scan:
        """The run's rows of judged queries in ranking order (query, then score descending), and per
        judged query the rank where its first tie group touching a relevant document starts (0: none).

        Grades are looked up only for the rows of tie groups (a run of floating-point scores has
        few), and a run already in ranking order (irgrid's runs are) is not sorted again."""
        # deferred: the config imports this module to plan; .evaluator brings ir_measures, needed only when ties are scanned
        from .evaluator import _run_columns

        missing = {"qid", "docno", "score"} - set(run.column_names)
        if missing:
            raise ValueError(f"a run with columns qid, docno, score: it has {run.column_names}")
        # (_run_columns reads a rank column, which the scan does not use)
        ranked = run if "rank" in run.column_names else run.append_column("rank", run.column("score"))
        codes, qid_names, docno_entries, docno_codes, _ = _run_columns(ranked)
        scores = run.column("score").to_numpy().astype(np.float64)
        query_of_code = np.array([self._row_of_qid.get(qid, -1) for qid in qid_names], dtype=np.int64)
        query = query_of_code[codes] if len(codes) else np.zeros(0, np.int64)
        if not np.all(query >= 0):
            keep = np.flatnonzero(query >= 0)
            query, scores, docno_codes = query[keep], scores[keep], docno_codes[keep]
        document_of_entry = pc.fill_null(pc.index_in(docno_entries, value_set=self._docnos), -1)
        found = _Scan(self, query, scores, docno_codes, document_of_entry.to_numpy().astype(np.int64))
        if not len(query):
            return found
        new_query = np.r_[True, query[1:] != query[:-1]]
        in_order = (np.all(new_query[1:] | (scores[1:] <= scores[:-1]))
                    and len(np.unique(query[new_query])) == int(np.sum(new_query)))
        if not in_order:
            order = np.lexsort((-scores, query))
            found.query, found.scores, found.docno_codes = query[order], scores[order], docno_codes[order]
            query, scores = found.query, found.scores
            new_query = np.r_[True, query[1:] != query[:-1]]
        starts_of_queries = np.flatnonzero(new_query)
        found.bounds[query[starts_of_queries], 0] = starts_of_queries
        found.bounds[query[starts_of_queries], 1] = np.r_[starts_of_queries[1:], len(query)]
        new_group = new_query | np.r_[True, scores[1:] != scores[:-1]]
        group_of_row = np.cumsum(new_group) - 1
        size = np.bincount(group_of_row)
        tied_rows = np.flatnonzero(size[group_of_row] > 1)
        if not len(tied_rows):
            return found
        grade = found.grades(tied_rows)
        group_starts = np.flatnonzero(np.r_[True, group_of_row[tied_rows][1:] != group_of_row[tied_rows][:-1]])
        relevant = np.maximum.reduceat((grade >= 1).astype(np.int8), group_starts) > 0
        mixed = np.minimum.reduceat(grade, group_starts) != np.maximum.reduceat(grade, group_starts)
        touched = tied_rows[group_starts[relevant & mixed]]  # ties_touch_relevant's test, per group
        if len(touched):
            queries, first = np.unique(query[touched], return_index=True)  # in ranking order: a query's first
            found.first_rank[queries] = touched[first] - found.bounds[queries, 0] + 1
        return found

    def evaluate(self, run: pa.Table, skip: Iterable[str] = ()) -> pa.Table:
        """The rows (EVAL_SCHEMA) to add to the run's trec_eval-style values: :data:`FIRST_TIED_RELEVANT`
        for each judged query a tie touches, and ``E[m]`` for each measure m (not those named in ``skip``)
        and each query whose tie starts within m's cutoff. A query without such a row has ``E[m]`` = m."""
        # deferred: the config imports this module to plan; .evaluator brings ir_measures, needed only when ties are scanned
        from .evaluator import EVAL_SCHEMA

        found = self.scan(run)
        first_rank = found.first_rank
        tied = np.flatnonzero(first_rank > 0).tolist()
        qids = [self.judged[row] for row in tied]
        values = first_rank[tied].astype(np.float64).tolist()
        names = [FIRST_TIED_RELEVANT] * len(tied)
        skip = set(skip)
        rankings = {}
        for tie in self.measures.values():
            if str(tie) in skip:
                continue
            for row in tied:
                if touches_within(first_rank[row], tie):
                    if row not in rankings:
                        lo, hi = found.bounds[row].tolist()
                        rankings[row] = _ranking_of_sorted(found.scores[lo:hi], found.grades(np.arange(lo, hi)),
                                                           self.judgements[row].values())
                    qids.append(self.judged[row])
                    values.append(value(rankings[row], tie))
                    names.append(str(tie))
        return pa.table({"qid": pa.array(qids, pa.string()), "measure": pa.array(names, pa.string()),
                         "value": pa.array(values, pa.float64())}, schema=EVAL_SCHEMA)


    @staticmethod
    def tied_queries(rows: pa.Table) -> int:
        """How many queries :meth:`evaluate`'s ``rows`` give a :data:`FIRST_TIED_RELEVANT` (a tie touching a
        relevant document anywhere)."""
        return int(pc.sum(pc.equal(rows.column("measure"), FIRST_TIED_RELEVANT)).as_py() or 0)


class _Scan:
    """A run's judged rows in ranking order (TiedRelevantScan.scan): query row, score and docno (an index
    into the run's docno entries) per row; per judged query its rows' [start, end) and first tied rank."""

    def __init__(self, owner: TiedRelevantScan, query: np.ndarray, scores: np.ndarray, docno_codes: np.ndarray,
                 document_of_entry: np.ndarray):
        self.owner, self.query, self.scores, self.docno_codes = owner, query, scores, docno_codes
        self.document_of_entry = document_of_entry
        self.bounds = np.zeros((len(owner.judged), 2), dtype=np.int64)
        self.first_rank = np.zeros(len(owner.judged), dtype=np.int64)

    def grades(self, rows: np.ndarray) -> np.ndarray:
        """The relevance grade of each of ``rows`` (unjudged: 0)."""
        keys, grades = self.owner._keys, self.owner._grades
        grade = np.zeros(len(rows), dtype=np.int64)
        if not len(keys) or not len(rows):
            return grade
        document = self.document_of_entry[self.docno_codes[rows]]
        key = self.query[rows] * len(self.owner._docnos) + document
        at = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
        hit = (document >= 0) & (keys[at] == key)
        grade[hit] = grades[at[hit]]
        return grade


def _ranking_of_sorted(scores: np.ndarray, grades: np.ndarray, judged_grades: Iterable[int]) -> TiedRanking:
    """:func:`ranking_from_scores` for scores already in descending order, without a Python step per
    document (a run holds a query's 1,000 documents; only the expected values are asked of it, so the
    per-group grades that ``best`` and ``worst`` reorder are left out)."""
    judged = np.asarray(list(judged_grades), dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, scores[1:] != scores[:-1]])
    return TiedRanking(
        sizes=np.diff(np.r_[starts, len(scores)]).astype(np.int64),
        relevant=np.add.reduceat((grades >= 1).astype(np.int64), starts),
        gains=np.add.reduceat(np.maximum(grades, 0).astype(np.float64), starts),
        grades=(),
        total_relevant=int(np.sum(judged >= 1)),
        ideal_gains=np.sort(np.maximum(judged, 0).astype(np.float64))[::-1],
    )


def read_run_scores(path: str | os.PathLike) -> pa.ChunkedArray | None:
    """An irgrid run's score column, in the file's row order (what :class:`TiedRelevantScan` adds to the
    columns irgrid.evaluation.evaluator reads); None for a run stored without scores."""
    with pq.ParquetFile(path) as file:
        if "score" not in file.schema_arrow.names:
            return None
        return file.read(columns=["score"]).column("score")
