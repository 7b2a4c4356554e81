"""The answer-selection protocol: judged candidates per question, the mixed subset, tables tuned on dev."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from irgrid.collections.trecqa import iter_trecqa_documents, iter_trecqa_parses, iter_trecqa_qrels
from irgrid.evaluation.evaluator import RunEvaluator, write_evaluation
from irgrid.features.sentence_parses import SentenceParses
from irgrid.retrieve import retrieve_grid
from irgrid.sentences.protocol import judged_topics, mixed_qids
from irgrid.tables import TableSpec, load_cells, subset_qids, summarise
from tiny_index import TinyIndex


def test_judged_topics_list_each_questions_candidates_sorted_and_count_its_relevant_ones():
    topics = pd.DataFrame({"qid": ["1", "2", "3", "4"], "text": ["a", "b", "c", "d"]})
    qrels = pd.DataFrame({"qid": ["1", "1", "1", "2", "2", "3"],
                          "docno": ["sb", "sa", "sc", "sx", "sy", "sz"],
                          "relevance": [1, 0, 0, 1, 1, 0]})
    judged = judged_topics(topics, qrels, "all").set_index("qid")
    assert list(judged.loc["1", "candidates"]) == ["sa", "sb", "sc"]  # docno order, not the qrels' order
    assert judged.loc["1", "relevant"] == 1
    assert judged.loc["2", "relevant"] == 2 and judged.loc["3", "relevant"] == 0
    assert list(judged.loc["4", "candidates"]) == [] and judged.loc["4", "relevant"] == 0
    # mixed: a positive and a negative candidate (TrecQA's "clean" questions): only question 1
    assert mixed_qids(judged.reset_index()) == {"1"}
    assert subset_qids(judged.reset_index(), "mixed") == {"1"}
    assert subset_qids(topics, "mixed") == set()  # a query set without judged candidates has none
    assert subset_qids(judged.reset_index(), "positive") == {"1", "2"}


def test_judged_topics_keep_the_questions_with_a_relevant_candidate_by_default():
    # X+judged: 3 (negatives only) and 4 (no judgements) would score 0 whatever the ranker
    topics = pd.DataFrame({"qid": ["1", "2", "3", "4"], "text": ["a", "b", "c", "d"]})
    qrels = pd.DataFrame({"qid": ["1", "1", "2", "3", "3"], "docno": ["s1", "s2", "s3", "s4", "s5"],
                          "relevance": [0, 2, 1, 0, 0]})
    judged = judged_topics(topics, qrels)
    assert list(judged["qid"]) == ["1", "2"] and list(judged["relevant"]) == [1, 1]
    assert list(judged["candidates"].iloc[0]) == ["s1", "s2"]
    assert len(judged_topics(topics, qrels, "all")) == 4
    with pytest.raises(ValueError, match="questions"):
        judged_topics(topics, qrels, "some")


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


# -- ties must not leak the labels: a TrecQA question whose candidates all tie --------------------

def _trecqa_file(path, candidates):
    """One question, ``candidates`` ((kind, text) in file order), heads a chain onto the first token."""
    def element(kind, text):
        tokens = text.split()
        heads = ["0"] + ["1"] * (len(tokens) - 1)
        return "\n".join([f"<{kind}>", "\t".join(tokens), "\t".join(["NN"] * len(tokens)),
                          "\t".join(["DEP"] * len(tokens)), "\t".join(heads), "\t".join(["-"] * len(tokens)),
                          f"</{kind}>"])
    body = [element("question", "alpha beta ?")] + [element(kind, text) for kind, text in candidates]
    path.write_text("\n".join(["<QApairs id='1'>", *body, "</QApairs>"]) + "\n", encoding="utf-8")
    return path


def _average_precision(ranked_labels):
    hits, total = 0, 0.0
    for rank, relevant in enumerate(ranked_labels, start=1):
        if relevant:
            hits += 1
            total += hits / rank
    return total / max(1, sum(ranked_labels))


@pytest.mark.parametrize("family,point", [("word_count", {"idf": 0}), ("tfidf", {}), ("tfidf_sentence", {}),
                                          ("kl_ml", {"mu": 10}), ("mrf_sentence", {"lambda_sr": 0.5})])
def test_tied_candidates_rank_the_same_whichever_order_the_file_lists_them(tmp_path, family, point):
    # every candidate holds both question words once and has the same length: all tie under every model
    texts = [f"alpha beta filler{i}" for i in range(10)]
    listings = {"positives first": [("positive", t) for t in texts[:3]] + [("negative", t) for t in texts[3:]],
                "positives last": [("negative", t) for t in texts[3:]] + [("positive", t) for t in texts[:3]]}
    average_precision = {}
    for name, candidates in listings.items():
        files = {"test": _trecqa_file(tmp_path / f"{name}.xml", candidates)}
        documents = {d.docno: d.fields["sentence"].split() for d in iter_trecqa_documents(files)}
        index = TinyIndex(documents)
        parses = SentenceParses({key: parse for kind, key, parse in iter_trecqa_parses(files) if kind == "document"},
                                index.docnos, index.analyzer)
        qrels = pd.DataFrame([(q.qid, q.docno, q.relevance) for q in iter_trecqa_qrels(files)],
                             columns=["qid", "docno", "relevance"])
        topics = judged_topics(pd.DataFrame({"qid": ["1"], "text": ["alpha beta"]}), qrels)
        [run] = retrieve_grid(index, topics, family, [point], parses=parses)
        assert run["score"].nunique() == 1  # the premise: every candidate ties
        per_query = RunEvaluator(qrels, ["AP"]).evaluate(run)
        average_precision[name] = float(per_query["value"].iloc[0])
        # ties are broken by docno, the hash of the text: worked out here from the texts alone
        by_docno = sorted(texts, key=lambda t: "s" + hashlib.sha1(t.encode()).hexdigest()[:16])
        expected = _average_precision([t in texts[:3] for t in by_docno])
        assert average_precision[name] == pytest.approx(expected)
    assert average_precision["positives first"] == average_precision["positives last"]
    assert average_precision["positives first"] < 1.0  # ids in file order would have given 1.0
