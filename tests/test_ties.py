"""Tie-aware evaluation (irgrid.evaluation.ties) against trec_eval (via ir-measures) over every ordering of the ties."""

import itertools
import math

import ir_measures
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from irgrid.errors import ConfigError, InputFormatError
from irgrid.evaluation.evaluator import RunEvaluator
from irgrid.evaluation.ties import (
    TieMeasure,
    beside_each,
    canonical_name,
    evaluate_ties,
    is_tie_aware_name,
    parse_tie_measure,
    ranking_from_scores,
    summarise_ties,
    ties_touch_relevant,
    value,
)

MEASURES = ["AP", "RR", "Rprec", "P@1", "P@3", "P@5", "R@3", "nDCG@3", "nDCG@10"]


def trec_eval_over_orderings(scores, grades, qrels):
    """Each measure's values under trec_eval (ir-measures) for every ordering of the tied documents:
    one query per ordering, scored by its ranks, so trec_eval's own tie-break never comes in."""
    docnos = [f"d{i}" for i in range(len(scores))]
    groups = {}
    for docno, score in zip(docnos, scores):
        groups.setdefault(score, []).append(docno)
    ordered_groups = [groups[score] for score in sorted(groups, reverse=True)]
    run, judgements = {}, {}
    for number, orderings in enumerate(itertools.product(*(itertools.permutations(g) for g in ordered_groups))):
        ranking = [docno for group in orderings for docno in group]
        run[str(number)] = {docno: float(-rank) for rank, docno in enumerate(ranking)}
        judgements[str(number)] = qrels
    values = {name: [] for name in MEASURES}
    for metric in ir_measures.iter_calc([ir_measures.parse_measure(name) for name in MEASURES], judgements, run):
        values[str(metric.measure)].append(metric.value)
    return values


@st.composite
def tied_cases(draw):
    depth = draw(st.integers(1, 8))
    levels = draw(st.integers(1, 3))  # few distinct scores: ties are the rule
    scores = draw(st.lists(st.integers(0, levels - 1), min_size=depth, max_size=depth))
    graded = draw(st.booleans())
    grade = st.integers(-1, 3) if graded else st.integers(0, 1)
    grades = draw(st.lists(grade, min_size=depth, max_size=depth))
    unjudged = draw(st.lists(st.booleans(), min_size=depth, max_size=depth))
    missed = draw(st.lists(grade, max_size=3))  # judged documents the run does not retrieve
    return [float(s) for s in scores], grades, unjudged, missed


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(tied_cases())
def test_expected_value_is_the_mean_over_every_ordering_and_best_worst_its_bounds(case):
    scores, grades, unjudged, missed = case
    orderings = math.prod(math.factorial(scores.count(s)) for s in set(scores))
    assume(orderings <= 5040)
    qrels = {f"d{i}": g for i, (g, u) in enumerate(zip(grades, unjudged)) if not u}
    qrels.update({f"m{i}": g for i, g in enumerate(missed)})
    assume(qrels)
    retrieved_grades = [qrels.get(f"d{i}", 0) for i in range(len(scores))]
    ranking = ranking_from_scores(scores, retrieved_grades, qrels.values())
    brute = trec_eval_over_orderings(scores, grades, qrels)
    for name in MEASURES:
        values = brute[name]
        assert len(values) == orderings, name
        measure = parse_tie_measure(name)
        assert value(ranking, measure) == pytest.approx(sum(values) / len(values), abs=1e-12), name
        assert value(ranking, TieMeasure(measure.base, measure.cutoff, "best")) == pytest.approx(max(values)), name
        assert value(ranking, TieMeasure(measure.base, measure.cutoff, "worst")) == pytest.approx(min(values)), name


def test_hand_computed_expectations_of_one_tie_group():
    # four documents tied at the top, one relevant (of one judged relevant): it is at rank 1..4 alike
    ranking = ranking_from_scores([1.0] * 4, [1, 0, 0, 0], [1])
    assert value(ranking, parse_tie_measure("RR")) == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    assert value(ranking, parse_tie_measure("AP")) == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)
    assert value(ranking, parse_tie_measure("P@1")) == pytest.approx(1 / 4)
    assert value(ranking, parse_tie_measure("P@2")) == pytest.approx(1 / 4)  # (1/4 + 1/4) / 2
    # two relevant among three tied after one non-relevant: orderings RRN, RNR, NRR (as ranks 2-4)
    ranking = ranking_from_scores([2.0, 1.0, 1.0, 1.0], [0, 1, 1, 0], [1, 1])
    aps = [(1 / 2 + 2 / 3) / 2, (1 / 2 + 2 / 4) / 2, (1 / 3 + 2 / 4) / 2]
    assert value(ranking, parse_tie_measure("AP")) == pytest.approx(sum(aps) / 3)
    assert value(ranking, parse_tie_measure("RR")) == pytest.approx((1 / 2 + 1 / 2 + 1 / 3) / 3)


def test_without_ties_the_values_are_trec_evals():
    qrels = pd.DataFrame([("1", "a", 2), ("1", "c", 1), ("1", "x", 1), ("1", "e", 0), ("2", "b", 1), ("3", "z", 1)],
                         columns=["qid", "docno", "relevance"])
    run = pd.DataFrame([("1", "a", 1, 5.0), ("1", "b", 2, 4.0), ("1", "c", 3, 3.0), ("1", "e", 4, 2.0),
                        ("2", "q", 1, 2.0), ("2", "b", 2, 1.5), ("9", "b", 1, 1.0)],
                       columns=["qid", "docno", "rank", "score"])
    expected = RunEvaluator(qrels, MEASURES).evaluate(run).set_index(["qid", "measure"])["value"]
    tied = evaluate_ties(pa.Table.from_pandas(run, preserve_index=False), pa.Table.from_pandas(qrels),
                         [f"E[{name}]" for name in MEASURES]).to_pandas()
    tied = tied.set_index(["qid", "measure"])["value"]
    assert len(tied) == len(expected) == 3 * len(MEASURES)  # query 3: judged, not retrieved: 0
    for (qid, measure), trec_eval in expected.items():
        assert tied[(qid, f"E[{measure}]")] == pytest.approx(trec_eval), (qid, measure)
    assert tied[("3", "E[AP]")] == 0.0


def test_a_run_of_ties_lies_between_its_bounds_and_differs_from_trec_evals_order():
    # two documents tied: trec_eval orders by docno descending (b, then a), the relevant a second
    qrels = pa.table({"qid": ["1"], "docno": ["a"], "relevance": [1]})
    run = pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "rank": [1, 2], "score": [1.0, 1.0]})
    per_query = evaluate_ties(run, qrels, ["E[AP]", "best[AP]", "worst[AP]", "tied_relevant", "tied_relevant@1"])
    values = dict(zip(per_query.column("measure").to_pylist(), per_query.column("value").to_pylist()))
    assert values == {"E[AP]": 0.75, "best[AP]": 1.0, "worst[AP]": 0.5, "tied_relevant": 1.0,
                      "tied_relevant@1": 1.0}


def test_ties_touch_a_relevant_document_only_across_grades():
    # ties among non-relevant documents, or among documents of one grade, change nothing
    assert not ties_touch_relevant(ranking_from_scores([3.0, 2.0, 2.0, 1.0], [1, 0, 0, 1], [1, 1]))
    assert not ties_touch_relevant(ranking_from_scores([2.0, 2.0, 1.0], [1, 1, 0], [1, 1]))
    mixed_low = ranking_from_scores([3.0, 2.0, 1.0, 1.0], [0, 0, 1, 0], [1])
    assert ties_touch_relevant(mixed_low)
    assert not ties_touch_relevant(mixed_low, cutoff=2)  # the tie group starts at rank 3
    assert ties_touch_relevant(mixed_low, cutoff=3)
    # grades 2 and 1 tied: nDCG can change, so the tie counts
    assert ties_touch_relevant(ranking_from_scores([1.0, 1.0], [2, 1], [2, 1]))


def test_summary_counts_queries_and_averages_measures():
    qrels = pa.table({"qid": ["1", "2", "3"], "docno": ["a", "a", "a"], "relevance": [1, 1, 1]})
    run = pa.table({"qid": ["1", "1", "2", "2"], "docno": ["a", "b", "a", "b"], "score": [1.0, 1.0, 2.0, 1.0]})
    summary = summarise_ties(evaluate_ties(run, qrels, ["P@1", "tied_relevant"]))
    assert summary["E[P@1]"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert summary["tied_relevant"] == 1  # query 1 only


def test_topic_qids_restrict_the_judged_queries():
    qrels = pa.table({"qid": ["1", "2"], "docno": ["a", "a"], "relevance": [1, 1]})
    run = pa.table({"qid": ["1"], "docno": ["a"], "score": [1.0]})
    per_query = evaluate_ties(run, qrels, ["AP"], topic_qids=["1"])
    assert set(per_query.column("qid").to_pylist()) == {"1"}


@pytest.mark.parametrize("name, parsed", [
    ("AP", TieMeasure("AP")), ("E[P@10]", TieMeasure("P", 10)), ("best[nDCG@5]", TieMeasure("nDCG", 5, "best")),
    ("worst[RR]", TieMeasure("RR", None, "worst")), ("E[Rprec]", TieMeasure("Rprec")),
])
def test_measure_names(name, parsed):
    assert parse_tie_measure(name) == parsed
    assert str(parse_tie_measure(str(parsed))) == str(parsed)


@pytest.mark.parametrize("name", ["P", "AP@10", "bpref", "max[AP]", "E[P@0]"])
def test_bad_measure_names_are_config_errors(name):
    with pytest.raises(ConfigError):
        parse_tie_measure(name)


def test_a_run_without_scores_is_refused_naming_the_file():
    qrels = pa.table({"qid": ["1"], "docno": ["a"], "relevance": [1]})
    with pytest.raises(InputFormatError, match="run.parquet"):
        evaluate_ties(pa.table({"qid": ["1"], "docno": ["a"]}), qrels, ["AP"], run_source="run.parquet")


def test_table_measures_get_their_expected_value_beside_them():
    table, evaluated = beside_each(["AP", "P@10", "Judged@10", "nDCG@5"])
    assert table == ["AP", "E[AP]", "P@10", "E[P@10]", "Judged@10", "nDCG@5", "E[nDCG@5]",
                     "tied_relevant@10", "tied_relevant"]
    assert evaluated == ["E[AP]", "E[P@10]", "E[nDCG@5]", "tied_relevant@10", "tied_relevant"]
    # a table already naming a tie-aware figure keeps it once
    table, evaluated = beside_each(["AP", "E[AP]", "RR"])
    assert table == ["AP", "E[AP]", "RR", "E[RR]", "tied_relevant"]
    assert evaluated == ["E[AP]", "E[RR]", "tied_relevant"]


def test_tie_aware_names_are_told_apart_from_ir_measures_ones():
    assert [is_tie_aware_name(name) for name in ["E[AP]", "worst[P@5]", "tied_relevant@3", "AP", "AP(rel=2)"]] == [
        True, True, True, False, False]
    assert canonical_name("E[ndcg@10]") == "E[nDCG@10]"
    with pytest.raises(ConfigError):
        canonical_name("tied_relevant@x")


def write_run_and_qrels(tmp_path):
    import pyarrow.parquet as pq

    run = pa.table({"qid": ["1", "1", "1", "2"], "docno": ["a", "b", "c", "a"], "rank": [1, 2, 3, 1],
                    "score": [2.0, 1.0, 1.0, 5.0]})
    qrels = pa.table({"qid": ["1", "1", "2", "3"], "docno": ["c", "b2", "a", "a"], "relevance": [1, 1, 1, 1]})
    pq.write_table(run, tmp_path / "run.parquet")
    pq.write_table(qrels, tmp_path / "qrels.parquet")
    return tmp_path / "run.parquet", tmp_path / "qrels.parquet"


def test_irgrid_evaluate_adds_tie_aware_rows_after_unchanged_ir_measures_ones(tmp_path):
    import json

    from irgrid.cli import main
    from irgrid.evaluation.evaluator import read_evaluation

    run, qrels = write_run_and_qrels(tmp_path)
    # (without the rows every evaluation adds on ties: test_every_evaluation_counts_ties_touching_relevant_documents)
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", json.dumps(["AP", "P@1"]),
                 "--out", str(tmp_path / "plain.parquet"), "--no-tie-scan"]) == 0
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels),
                 "--measures", json.dumps(["AP", "P@1", "E[AP]", "tied_relevant"]),
                 "--out", str(tmp_path / "tied.parquet"), "--no-tie-scan"]) == 0
    plain, tied = read_evaluation(tmp_path / "plain.parquet"), read_evaluation(tmp_path / "tied.parquet")
    pd.testing.assert_frame_equal(tied.iloc[:len(plain)], plain)
    values = tied.iloc[len(plain):].set_index(["qid", "measure"])["value"].to_dict()
    # query 1: b and c tied at ranks 2-3, c relevant (of 2 relevant): AP (1/2 + 1/3) / 2 / 2 in the mean;
    # the run's own order (c third) gives (1/3) / 2
    assert values[("1", "E[AP]")] == pytest.approx((1 / 2 + 1 / 3) / 2 / 2)
    assert plain.set_index(["qid", "measure"])["value"][("1", "AP")] == pytest.approx(1 / 3 / 2)
    # tie-aware names alone: the same rows
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", json.dumps(["E[AP]"]),
                 "--out", str(tmp_path / "alone.parquet"), "--no-tie-scan"]) == 0
    alone = read_evaluation(tmp_path / "alone.parquet").set_index(["qid", "measure"])["value"].to_dict()
    assert alone == {key: number for key, number in values.items() if key[1] == "E[AP]"}
    assert values == pytest.approx({("1", "E[AP]"): 5 / 24, ("1", "tied_relevant"): 1.0, ("2", "E[AP]"): 1.0,
                                    ("2", "tied_relevant"): 0.0, ("3", "E[AP]"): 0.0, ("3", "tied_relevant"): 0.0})


def test_irgrid_tie_aware_reads_trec_files_and_prints_the_spread(tmp_path, capsys):
    from irgrid.cli import main

    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 x\n1 Q0 b 2 1.0 x\n1 Q0 c 3 1.0 x\n")
    (tmp_path / "qrels.txt").write_text("1 0 c 1\n1 0 a 0\n")
    assert main(["tie-aware", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--measures", "AP,P@2"]) == 0
    out = capsys.readouterr().out.splitlines()
    # trec_eval orders the tie b, c by docno descending: c second (AP 1/2); the mean over both orders
    # 5/12 (1/2, 1/3); best 1/2, worst 1/3
    assert out[1].split() == ["AP", "0.5000", "0.4167", "0.5000", "0.3333"]
    assert out[2].split() == ["P@2", "0.5000", "0.2500", "0.5000", "0.0000"]
    assert "tied_relevant: 1 of 1 judged queries" in out[3]


def test_a_malformed_trec_run_line_is_named(tmp_path):
    from irgrid.evaluation.ties import read_scored_run

    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 x\n1 Q0 b 2 high x\n")
    with pytest.raises(InputFormatError, match="run.txt.*2"):
        read_scored_run(tmp_path / "run.txt")
