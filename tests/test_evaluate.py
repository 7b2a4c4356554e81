import pandas as pd
import pytest

from irgrid.errors import ConfigError
from irgrid.evaluate import evaluate_run, mean_values


def run_frame(rows):
    return pd.DataFrame(rows, columns=["qid", "docno", "rank", "score"])


QRELS = pd.DataFrame(
    [("1", "a", 1), ("1", "c", 2), ("1", "x", 0), ("2", "b", 1), ("3", "z", 1)],
    columns=["qid", "docno", "relevance"],
)


def test_average_precision_by_hand_and_missing_query_is_zero():
    run = run_frame(
        [
            ("1", "a", 1, 3.0),  # relevant: precision 1/1
            ("1", "b", 2, 2.0),
            ("1", "c", 3, 1.0),  # relevant: precision 2/3
            ("2", "q", 1, 1.0),
            ("2", "b", 2, 0.5),  # relevant: precision 1/2
            ("9", "b", 1, 1.0),  # query without judgements: not evaluated
        ]
    )
    per_query = evaluate_run(run, QRELS, ["AP", "P@2"])
    values = per_query.set_index(["qid", "measure"])["value"]
    assert values[("1", "AP")] == pytest.approx((1 + 2 / 3) / 2)
    assert values[("2", "AP")] == pytest.approx(0.5)
    assert values[("1", "P@2")] == pytest.approx(0.5)
    # Query 3 is judged but retrieved nothing: it counts, as zero.
    assert values[("3", "AP")] == 0.0
    assert set(per_query["qid"]) == {"1", "2", "3"}
    assert mean_values(per_query)["AP"] == pytest.approx(((1 + 2 / 3) / 2 + 0.5 + 0) / 3)


def test_the_run_rank_is_what_gets_evaluated():
    # Equal scores: trec_eval alone would order b before a (docno descending); our rank says a first.
    run = run_frame([("1", "a", 1, 1.0), ("1", "b", 2, 1.0)])
    values = evaluate_run(run, QRELS, ["P@1"]).set_index(["qid", "measure"])["value"]
    assert values[("1", "P@1")] == 1.0


def test_unknown_measure_is_a_config_error():
    with pytest.raises(ConfigError, match="Bogus"):
        evaluate_run(run_frame([]), QRELS, ["Bogus@3"])


def test_graded_ndcg_uses_mapped_relevance():
    run = run_frame([("1", "c", 1, 2.0), ("1", "a", 2, 1.0)])
    values = evaluate_run(run, QRELS, ["nDCG@2"]).set_index(["qid", "measure"])["value"]
    # Ideal order c (2), a (1); the run is ideal, so nDCG@2 = 1.
    assert values[("1", "nDCG@2")] == pytest.approx(1.0)


def test_only_judged_queries_of_the_query_set_are_evaluated():
    # Query 3 has judgements but is not in the query set that was run: it is not scored 0.
    run = run_frame([("1", "a", 1, 1.0), ("2", "b", 1, 1.0)])
    per_query = evaluate_run(run, QRELS, ["AP"], topic_qids=["1", "2", "4"])
    assert set(per_query["qid"]) == {"1", "2"}
    with pytest.raises(ValueError, match="no query of the query set has judgements"):
        evaluate_run(run, QRELS, ["AP"], topic_qids=["01", "02"])
