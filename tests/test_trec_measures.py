"""trec_eval's rank-only measures of integer rankings against ir-measures (pytrec_eval) on the same rankings."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from irgrid.evaluation.evaluator import RunEvaluator
from irgrid.jobs.trec_measures import RankedJudgements, supported

MEASURES = ["AP", "P@1", "P@5", "P@10", "P@20", "P@30", "nDCG@10", "nDCG", "Rprec", "R@1000", "R@5", "RR", "AP@5",
            "nDCG@3"]
DOCNOS = [f"doc{n:02d}" for n in range(30)]


def _qrels(judgements):
    qids, docnos, grades = zip(*judgements) if judgements else ((), (), ())
    return pa.table({"qid": pa.array(qids, pa.string()), "docno": pa.array(docnos, pa.string()),
                     "relevance": pa.array(grades, pa.int64())})


judgement = st.tuples(st.sampled_from(["q1", "q2", "q3"]),
                      st.sampled_from(DOCNOS + ["not-indexed"]), st.sampled_from([-1, 0, 0, 1, 1, 2, 3]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(judgements=st.lists(judgement, min_size=1, max_size=60),
       rankings=st.lists(st.permutations(range(len(DOCNOS))).flatmap(
           lambda order: st.integers(0, len(order)).map(lambda n: order[:n])), min_size=4, max_size=4),
       names=st.lists(st.sampled_from(MEASURES), min_size=1, max_size=6, unique=True))
def test_the_measures_of_integer_rankings_are_ir_measures_values(judgements, rankings, names):
    # trec_eval (pytrec_eval-terrier 0.5.11, under ir-measures) loops for ever computing nDCG's ideal gain of a
    # query whose every judgement is negative (no relevance level >= 0): the reference has no value there
    judged = {qid for qid, _, _ in judgements}
    assume(all(any(grade >= 0 for q, _, grade in judgements if q == qid) for qid in judged))
    qrels = _qrels(judgements)
    qids = ["q1", "q2", "q3", "q4"]  # q4 is never judged; a judged query may rank nothing
    try:
        evaluator = RunEvaluator(qrels, names, qids)
    except Exception:  # no judgement of the query set: RunEvaluator refuses, and so no ranking is evaluated
        return
    docids = np.array([d for ranking in rankings for d in ranking], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rankings])]).astype(np.int64)
    run = pa.table({
        "qid": pa.array([qid for qid, ranking in zip(qids, rankings) for _ in ranking], pa.string()),
        "docno": pa.array([DOCNOS[d] for d in docids], pa.string()),
        "rank": pa.array([r + 1 for ranking in rankings for r in range(len(ranking))], pa.int32()),
        "score": pa.array([-float(r) for ranking in rankings for r in range(len(ranking))], pa.float64()),
    })
    expected = evaluator.evaluate_table(run)
    ranked = RankedJudgements(evaluator, qrels, pa.array(DOCNOS, pa.string()))
    got = ranked.evaluate_table(qids, docids, offsets)
    assert got.column("qid").to_pylist() == expected.column("qid").to_pylist()
    assert got.column("measure").to_pylist() == expected.column("measure").to_pylist()
    # to the last bit: the tables' significance tests read these values
    assert got.column("value").to_pylist() == expected.column("value").to_pylist()
    # the rankers' int32 ids, evaluated again by the same judgements (a job evaluates all its cells with one):
    # nothing of the first call's queries is left in its table of judged ids
    again = ranked.evaluate_table(qids, docids.astype(np.int32), offsets)
    assert again.column("value").to_pylist() == expected.column("value").to_pylist()


@pytest.mark.parametrize(("names", "expected"), [
    (["AP", "P@10", "nDCG@10", "Rprec", "R@1000", "RR", "nDCG", "AP@10"], True),
    (["P"], False),           # P without a cutoff is not trec_eval's P_k
    (["RR@10"], False),       # not a trec_eval measure
    (["P(rel=2)@10"], False), # a relevance level other than 1
    (["ERR@10"], False),
])
def test_supported_names_the_measures_computed_here(names, expected):
    assert supported(names) is expected


def test_hand_computed_values():
    # q1 judges a (2), b (1), c (0), z (1, not in the index): 3 relevant documents; ranking b x a c
    qrels = _qrels([("q1", "a", 2), ("q1", "b", 1), ("q1", "c", 0), ("q1", "z", 1)])
    names = ["AP", "P@2", "RR", "Rprec", "R@3", "nDCG@2"]
    evaluator = RunEvaluator(qrels, names, ["q1"])
    docnos = pa.array(["a", "b", "c", "x"], pa.string())
    values = RankedJudgements(evaluator, qrels, docnos).values(["q1"], np.array([1, 3, 0, 2]), np.array([0, 4]))
    ideal = 2 + 1 / np.log2(3)
    assert values.tolist() == pytest.approx([
        (1 / 1 + 2 / 3) / 3,       # AP: relevant at ranks 1 and 3, over 3 relevant
        1 / 2,                     # P@2
        1.0,                       # RR
        2 / 3,                     # Rprec: 2 relevant in the first 3
        2 / 3,                     # R@3
        1 / ideal,                 # nDCG@2: b (1) at rank 1, x (0) at rank 2; ideal a (2), then b or z (1)
    ])


@pytest.mark.parametrize("docid", [-1, 4])
def test_a_ranking_with_an_id_outside_the_index_is_refused(docid):
    qrels = _qrels([("q1", "a", 1)])
    evaluator = RunEvaluator(qrels, ["AP"], ["q1"])
    judgements = RankedJudgements(evaluator, qrels, pa.array(["a", "b", "c", "x"], pa.string()))
    with pytest.raises(ValueError, match="outside 0..3"):
        judgements.values(["q1"], np.array([0, docid], dtype=np.int32), np.array([0, 2]))
