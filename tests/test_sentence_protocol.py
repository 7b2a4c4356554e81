"""The answer-selection protocol: judged candidates per question, the mixed subset, tables tuned on dev."""

from __future__ import annotations

import pandas as pd
import pytest

from irgrid.evaluate import write_evaluation
from irgrid.sentences.protocol import judged_topics, mixed_qids
from irgrid.tables import TableSpec, load_cells, subset_qids, summarise


def test_judged_topics_list_each_questions_candidates_sorted_and_count_its_relevant_ones():
    topics = pd.DataFrame({"qid": ["1", "2", "3", "4"], "text": ["a", "b", "c", "d"]})
    qrels = pd.DataFrame({"qid": ["1", "1", "1", "2", "2", "3"],
                          "docno": ["sb", "sa", "sc", "sx", "sy", "sz"],
                          "relevance": [1, 0, 0, 1, 1, 0]})
    judged = judged_topics(topics, qrels).set_index("qid")
    assert list(judged.loc["1", "candidates"]) == ["sa", "sb", "sc"]  # docno order, not the qrels' order
    assert judged.loc["1", "relevant"] == 1
    assert judged.loc["2", "relevant"] == 2 and judged.loc["3", "relevant"] == 0
    assert list(judged.loc["4", "candidates"]) == [] and judged.loc["4", "relevant"] == 0
    # mixed: a positive and a negative candidate (TrecQA's "clean" questions): only question 1
    assert mixed_qids(judged.reset_index()) == {"1"}
    assert subset_qids(judged.reset_index(), "mixed") == {"1"}
    assert subset_qids(topics, "mixed") == set()  # a query set without judged candidates has none


def test_a_sentence_judged_twice_for_one_question_counts_once():
    topics = pd.DataFrame({"qid": ["1"], "text": ["a"]})
    qrels = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["s1", "s1", "s2"], "relevance": [0, 1, 0]})
    judged = judged_topics(topics, qrels)
    assert list(judged["candidates"].iloc[0]) == ["s1", "s2"] and judged["relevant"].iloc[0] == 1


def _cells(tmp_path, values):
    rows = []
    for (queryset, model, params), per_qid in values.items():
        frame = pd.DataFrame({"qid": list(per_qid), "measure": "AP", "value": list(per_qid.values())})
        path = tmp_path / f"{queryset}-{model}-{params}.parquet"
        write_evaluation(frame, path)
        rows.append({"collection": "c", "queryset": queryset, "model": model, "params": params, "path": str(path)})
    return pd.DataFrame(rows)


def test_tuned_table_reports_test_at_the_point_best_on_dev(tmp_path):
    dev = {"d1": 0, "d2": 0}
    values = {
        ("dev", "m", "x~1"): dict.fromkeys(dev, 0.6), ("dev", "m", "x~2"): dict.fromkeys(dev, 0.4),
        ("test", "m", "x~1"): {"t1": 0.2, "t2": 0.3}, ("test", "m", "x~2"): {"t1": 0.9, "t2": 0.8},
        ("dev", "b", "y~1"): dict.fromkeys(dev, 0.5), ("test", "b", "y~1"): {"t1": 0.1, "t2": 0.2},
    }
    evaluations = load_cells(_cells(tmp_path, values))
    spec = TableSpec(experiment="e", models=["b", "m"], baseline="b", measures=["AP"], selection="tuned",
                     tune_on={"test": "dev"})
    summary = summarise(evaluations, spec).set_index("model")
    # x~2 is best on test but x~1 on dev: the tuned table reports x~1's test value, not the oracle's
    assert summary.loc["m", "params"] == "x~1"
    assert summary.loc["m", "mean"] == pytest.approx(0.25)
    assert set(summary["queryset"]) == {"test"}  # the tuning set is not a row
    best = summarise(evaluations, TableSpec(experiment="e", models=["b", "m"], baseline="b", measures=["AP"]))
    assert best.set_index(["queryset", "model"]).loc[("test", "m"), "params"] == "x~2"


def test_tuned_table_names_a_missing_tuning_set(tmp_path):
    values = {("test", "m", "x~1"): {"t1": 0.2, "t2": 0.3}}
    spec = TableSpec(experiment="e", models=["m"], baseline="m", measures=["AP"], selection="tuned",
                     tune_on={"test": "dev"})
    with pytest.raises(ValueError, match="'dev', which has no evaluations"):
        summarise(load_cells(_cells(tmp_path, values)), spec)
