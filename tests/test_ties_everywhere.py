"""Ties in every evaluation (irgrid.evaluation.ties.TiedRelevantScan, `irgrid evaluate`) and in every table:
checked against trec_eval over every ordering of the tied documents (test_ties' brute force)."""

import itertools
import json
import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_ties import MEASURES, trec_eval_over_orderings

from irgrid.evaluation.evaluator import RunEvaluator
from irgrid.evaluation.ties import FIRST_TIED_RELEVANT, TiedRelevantScan


def first_rank_over_orderings(scores, grades):
    """The first rank at which some ordering of the ties puts a relevant document and some other
    ordering a document of another grade (0: none): where a tie touches a relevant document."""
    groups = {}
    for score, grade in zip(scores, grades):
        groups.setdefault(score, []).append(grade)
    ordered = [groups[score] for score in sorted(groups, reverse=True)]
    seen = [set() for _ in scores]
    for orderings in itertools.product(*(itertools.permutations(group) for group in ordered)):
        for rank, grade in enumerate(grade for group in orderings for grade in group):
            seen[rank].add(grade)
    return next((rank + 1 for rank, grades_there in enumerate(seen)
                 if len(grades_there) > 1 and max(grades_there) >= 1), 0)


@st.composite
def tied_queries(draw):
    """Up to three queries, each a few documents with few distinct scores (ties are the rule)."""
    queries = []
    for _ in range(draw(st.integers(1, 3))):
        depth = draw(st.integers(1, 6))
        scores = [float(s) for s in draw(st.lists(st.integers(0, 2), min_size=depth, max_size=depth))]
        grades = draw(st.lists(st.integers(-1, 2), min_size=depth, max_size=depth))
        unjudged = draw(st.lists(st.booleans(), min_size=depth, max_size=depth))
        missed = draw(st.lists(st.integers(0, 2), max_size=2))
        queries.append((scores, grades, unjudged, missed))
    return queries, draw(st.randoms())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(tied_queries())
def test_the_scan_finds_the_first_tie_touching_a_relevant_document_and_its_expected_values(case):
    queries, shuffle = case
    rows, judgements, truth = [], {}, {}
    for number, (scores, grades, unjudged, missed) in enumerate(queries):
        qid = f"q{number}"
        orderings = math.prod(math.factorial(scores.count(s)) for s in set(scores))
        assume(orderings <= 720)
        qrels = {f"d{i}": g for i, (g, u) in enumerate(zip(grades, unjudged)) if not u}
        qrels.update({f"m{i}": g for i, g in enumerate(missed)})
        if not qrels:
            continue
        judgements[qid] = qrels
        retrieved = [qrels.get(f"d{i}", 0) for i in range(len(scores))]
        truth[qid] = (first_rank_over_orderings(scores, retrieved), trec_eval_over_orderings(scores, grades, qrels))
        # the run's own ranks: score descending, docno ascending (irgrid's tie-break)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], f"d{i}"))
        rows.extend((qid, f"d{i}", rank, scores[i]) for rank, i in enumerate(order, 1))
    assume(judgements)
    shuffle.shuffle(rows)  # the scan must not rely on the run's row order
    run = pa.table(dict(zip(["qid", "docno", "rank", "score"], map(list, zip(*rows))))) if rows else pa.table(
        {"qid": pa.array([], pa.string()), "docno": pa.array([], pa.string()), "rank": pa.array([], pa.int64()),
         "score": pa.array([], pa.float64())})
    qrels = pa.table({"qid": [q for q, docs in judgements.items() for _ in docs],
                      "docno": [d for docs in judgements.values() for d in docs],
                      "relevance": pa.array([g for docs in judgements.values() for g in docs.values()], pa.int64())})
    added = TiedRelevantScan(qrels, sorted(judgements), MEASURES).evaluate(run).to_pandas()
    plain = RunEvaluator(qrels, MEASURES).evaluate(run).set_index(["qid", "measure"])["value"]
    firsts = added[added["measure"] == FIRST_TIED_RELEVANT].set_index("qid")["value"].to_dict()
    expected = added[added["measure"] != FIRST_TIED_RELEVANT].set_index(["qid", "measure"])["value"].to_dict()
    for qid, (first, brute) in truth.items():
        assert firsts.get(qid, 0) == first, qid
        for name in MEASURES:
            cutoff = int(name.split("@")[1]) if "@" in name else None
            within = first > 0 and (cutoff is None or first <= cutoff)
            assert ((qid, f"E[{name}]") in expected) == within, (qid, name)
            # where no row is written, E[m] is the trec_eval-style m: the mean over orderings equals it
            value = expected.get((qid, f"E[{name}]"), plain[(qid, name)])
            assert value == pytest.approx(sum(brute[name]) / len(brute[name]), abs=1e-12), (qid, name)


def evaluate_cell(tmp_path, name, rows, qrels_path, *options):
    """`irgrid evaluate` on one run (qid, docno, score; ranks by score, then docno) as the workflow runs it."""
    from irgrid.cli import main

    ranked = sorted(rows, key=lambda row: (row[0], -row[2], row[1]))
    ranks, previous, rank = [], None, 0
    for qid, _, _ in ranked:
        rank = rank + 1 if qid == previous else 1
        previous = qid
        ranks.append(rank)
    run = pa.table({"qid": [r[0] for r in ranked], "docno": [r[1] for r in ranked], "rank": ranks,
                    "score": [r[2] for r in ranked]})
    pq.write_table(run, tmp_path / f"{name}.run.parquet")
    out = tmp_path / f"{name}{''.join(options)}.eval.parquet"
    assert main(["evaluate", "--run", str(tmp_path / f"{name}.run.parquet"), "--qrels", str(qrels_path),
                 "--measures", json.dumps(["AP", "P@1", "P@5"]), "--out", str(out), *options]) == 0
    return out


def tables_of(paths, selection="best"):
    from irgrid.tables import TableSpec, load_cells, summarise, to_latex, to_markdown

    cells = pd.DataFrame([{"collection": "mini", "queryset": "text", "model": model, "params": "default",
                           "path": str(path)} for model, path in paths.items()])
    spec = TableSpec(experiment="mini", models=list(paths), baseline="base", measures=["AP", "P@1", "P@5"],
                     selection=selection, folds=2)
    summary = summarise(load_cells(cells), spec)
    return summary, to_markdown(summary, spec), to_latex(summary, spec), summary.to_csv(index=False)


@pytest.fixture
def two_runs(tmp_path):
    """q1 judges a relevant and b not; q2 judges c relevant. ``tied`` scores a and b equally (a first by
    docno), ``base`` ties nothing."""
    qrels = tmp_path / "qrels.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "c"],
                             "relevance": pa.array([1, 0, 1], pa.int64())}), qrels)
    base = evaluate_cell(tmp_path, "base", [("q1", "a", 2.0), ("q1", "b", 1.0), ("q2", "c", 1.0)], qrels)
    tied = evaluate_cell(tmp_path, "tied", [("q1", "a", 1.0), ("q1", "b", 1.0), ("q2", "c", 1.0)], qrels)
    return tmp_path, qrels, base, tied


def test_a_run_with_ties_touching_a_relevant_document_gets_their_count_and_expected_values(two_runs):
    tmp_path, qrels, base, tied = two_runs
    rows = pd.read_parquet(tied)
    added = rows[~rows["measure"].isin(["AP", "P@1", "P@5"])].set_index(["qid", "measure"])["value"].to_dict()
    # q1: a and b tied at ranks 1-2, a relevant: half the orderings put it first. AP 1 or 1/2: 3/4;
    # P@1 1 or 0: 1/2; P@5 1/5 either way, but the tie starts in the top 5, so it is counted and computed
    assert added == pytest.approx({("q1", "first_tied_relevant_rank"): 1, ("q1", "E[AP]"): 0.75,
                                   ("q1", "E[P@1]"): 0.5, ("q1", "E[P@5]"): 0.2})
    # the trec_eval-style values are those of the run's own order (a first), unchanged
    assert rows.set_index(["qid", "measure"])["value"][("q1", "P@1")] == 1.0
    assert not pd.read_parquet(base)["measure"].isin(["first_tied_relevant_rank", "E[AP]"]).any()


@pytest.mark.parametrize("selection", ["best", "cv"])
def test_a_table_shows_the_expected_value_beside_a_run_with_ties_and_counts_them(two_runs, selection):
    _, _, base, tied = two_runs
    summary, markdown, latex, _ = tables_of({"base": base, "tied": tied}, selection)
    # tied: AP (1 + 1)/2 as ranked, (3/4 + 1)/2 expected; P@1 1 and (1/2 + 1)/2; P@5 0.2 both ways (no mark)
    assert "| mini | 1.0000 / 1.0000 / 0.2000 | 1.0000 (E 0.8750) / 1.0000 (E 0.7500) / 0.2000 |" in markdown
    assert "mini (text) tied: AP 1, P@1 1, P@5 1 of 2" in markdown
    assert "(E 0.8750)" in latex and "tied: AP 1, P@1 1, P@5 1 of 2" in latex
    tied_rows = summary[summary["model"] == "tied"].set_index("measure")
    assert tied_rows["tied_queries"].to_dict() == {"AP": 1, "P@1": 1, "P@5": 1}
    assert tied_rows["expected"].to_dict() == pytest.approx({"AP": 0.875, "P@1": 0.75, "P@5": 0.2})
    assert summary.loc[summary["model"] == "base", "tied_queries"].tolist() == [0, 0, 0]


def test_a_table_without_such_ties_is_what_it_was_without_the_scan(two_runs):
    tmp_path, qrels, base, _ = two_runs
    # a tie of two non-relevant documents changes no measure: not counted
    other = evaluate_cell(tmp_path, "other", [("q1", "a", 3.0), ("q1", "b", 1.0), ("q1", "x", 1.0),
                                              ("q2", "c", 1.0)], qrels)
    plain_base = evaluate_cell(tmp_path, "base", [("q1", "a", 2.0), ("q1", "b", 1.0), ("q2", "c", 1.0)], qrels,
                               "--no-tie-scan")
    plain_other = evaluate_cell(tmp_path, "other", [("q1", "a", 3.0), ("q1", "b", 1.0), ("q1", "x", 1.0),
                                                    ("q2", "c", 1.0)], qrels, "--no-tie-scan")
    for selection in ("best", "cv"):
        scanned = tables_of({"base": base, "other": other}, selection)[1:]
        plain = tables_of({"base": plain_base, "other": plain_other}, selection)[1:]
        assert scanned == plain


@pytest.mark.slow
def test_a_wikiqa_layout_answer_file_gets_tie_aware_figures_without_asking(tmp_path):
    """A WikiQA-layout answer file (format answer_tsv) in an experiment without ``tie_aware``: word counts
    tie, and the table says so. T2's answer ("The Titanic sank ...") and "Titanic films were made later"
    share one query word each (sank is no form of sink): a tie at rank 1."""
    import yaml
    from test_workflow import ANALYZER, assert_ok, make_workdir, snakemake, write_yaml
    from test_workflow_sentences import HEADER, QUESTIONS

    data = tmp_path / "data"
    data.mkdir()
    for role, questions in QUESTIONS.items():
        lines = [HEADER] + [f"{qid}\t{question}\t{qid}-doc\ttitle\t{qid}-{i}\t{sentence}\t{label}\n"
                            for qid, question, candidates in questions for i, (sentence, label) in enumerate(candidates)]
        (data / f"{role}.tsv").write_text("".join(lines), encoding="utf-8")
    config = {"registry": "config/collections.yaml", "num_shards": 2,
              "analyzers": {"porter_smart": {**ANALYZER, "stopwords": "smart"}},
              "measures": ["AP", "RR", "P@1"], "experiments": {"wordcounts": "config/experiments/wordcounts.yaml"}}
    workdir = make_workdir(tmp_path / "work", config, experiment={})
    write_yaml({"title": "Word counts on a mini QA set", "collections": ["mini_qa"], "querysets": ["test+judged"],
                "analyzer": "porter_smart", "baseline": "kld", "table_measures": ["AP", "P@1"], "tables": ["best"],
                "models": {"kld": {"family": "kl_ml", "grid": {"mu": [10]}}, "word_count": {"family": "word_count"}}},
               workdir / "config" / "experiments" / "wordcounts.yaml")
    registry = workdir / "config" / "collections.yaml"
    entries = yaml.safe_load(registry.read_text(encoding="utf-8"))
    entries["mini_qa"] = {"format": "answer_tsv", "files": {"dev": str(data / "dev.tsv"), "test": str(data / "test.tsv")}}
    write_yaml(entries, registry)
    assert_ok(snakemake(workdir))

    evaluation = pd.concat(pd.read_parquet(path) for path in
                           (workdir / "results" / "mini_qa" / "eval").glob("porter_smart/test+judged/chunk-*.parquet"))
    tied = evaluation[evaluation["model"] == "word_count"].set_index(["qid", "measure"])["value"]
    assert tied[("T2", "first_tied_relevant_rank")] == 1
    # T2's answer first or second, half the orderings each: AP 1 or 1/2, P@1 1 or 0
    assert tied[("T2", "E[AP]")] == pytest.approx(0.75) and tied[("T2", "E[P@1]")] == pytest.approx(0.5)
    table = (workdir / "results" / "tables" / "wordcounts" / "table.md").read_text(encoding="utf-8")
    assert "mini_qa (test+judged) word_count: AP 1, P@1 1 of 3" in table
    # the questions with a positive (T4 has none): T1 and T3 ranked right, T2 by its expected value
    assert "(E 0.9167)" in table and "(E 0.8333)" in table
