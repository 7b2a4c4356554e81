import random

import pandas as pd
import pytest

from irgrid.errors import ConfigError
from irgrid.evaluation.evaluator import RunEvaluator, evaluate_run, mean_values


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
    with pytest.raises(ValueError, match="expected judgements for at least one query of the query set"):
        evaluate_run(run, QRELS, ["AP"], topic_qids=["01", "02"])


# ------------------------------------------------------------------ several runs, one evaluator


def random_run(rng, qids, docnos, depth):
    rows = []
    for qid in qids:
        ranking = rng.sample(docnos, k=min(depth, len(docnos)))
        rows += [(qid, docno, rank, float(depth - rank)) for rank, docno in enumerate(ranking, start=1)]
    return run_frame(rows)


RUN_QRELS = pd.DataFrame(
    [(str(q), f"d{d}", (q * d) % 3) for q in range(1, 9) for d in range(0, 40, q)],
    columns=["qid", "docno", "relevance"],
)


def several_runs():
    rng = random.Random(7)
    docnos = [f"d{d}" for d in range(60)]
    runs = [random_run(rng, [str(q) for q in range(1, 9)], docnos, depth) for depth in (5, 20, 60)]
    runs.append(random_run(rng, ["1", "3"], docnos, 10))  # most judged queries retrieve nothing
    runs.append(run_frame([]))  # nothing at all
    return runs


def test_one_evaluator_for_several_runs_gives_each_run_its_own_values():
    from irgrid.evaluation.evaluator import RunEvaluator

    measures = ["AP", "P@10", "nDCG@10", "Rprec", "R@1000"]
    topics = [str(q) for q in range(1, 8)]  # query 8 is judged but not in the query set
    runs = several_runs()
    alone = [evaluate_run(run, RUN_QRELS, measures, topics) for run in runs]
    evaluator = RunEvaluator(RUN_QRELS, measures, topics)
    for order in (range(len(runs)), reversed(range(len(runs)))):
        for i in order:
            pd.testing.assert_frame_equal(evaluator.evaluate(runs[i]), alone[i])
    # The runs differ, so equal frames above are not a constant.
    assert not alone[0].equals(alone[2])
    assert (alone[4]["value"] == 0).all() and len(alone[4]) == 7 * len(measures)


def test_values_are_ir_measures_values_for_the_run_as_a_data_frame():
    """The run handed over as {qid: {docno: score}} gives what ir-measures computes from the frame itself."""
    import ir_measures

    measures = ["AP", "P@10", "nDCG@10", "Rprec", "R@1000"]
    qrels = pd.DataFrame({"query_id": RUN_QRELS["qid"], "doc_id": RUN_QRELS["docno"], "relevance": RUN_QRELS["relevance"]})
    for run in several_runs()[:4]:
        frame = pd.DataFrame({"query_id": run["qid"], "doc_id": run["docno"], "score": -run["rank"].astype(float)})
        expected = {(m.query_id, str(m.measure)): m.value
                    for m in ir_measures.iter_calc([ir_measures.parse_measure(name) for name in measures], qrels, frame)}
        values = evaluate_run(run, RUN_QRELS, measures).set_index(["qid", "measure"])["value"]
        for (qid, measure), value in values.items():
            assert value == expected.get((qid, measure), 0.0), (qid, measure)
        assert set(expected) <= set(values.index)


def write_inputs(tmp_path):
    import pyarrow as pa

    from irgrid.io import write_parquet
    from irgrid.runs import write_run

    qrels_path, topics_path = tmp_path / "qrels.parquet", tmp_path / "topics.parquet"
    write_parquet(pa.Table.from_pandas(RUN_QRELS.astype({"relevance": "int32"}), preserve_index=False), qrels_path)
    topics = pd.DataFrame({"qid": [str(q) for q in range(1, 8)], "text": ["q"] * 7})
    write_parquet(pa.Table.from_pandas(topics, preserve_index=False), topics_path)
    run_paths = []
    for i, run in enumerate(several_runs()[:4]):
        run_paths.append(tmp_path / "runs" / f"run{i}.parquet")
        write_run(run.astype({"rank": "int32"}), run_paths[-1])
    return qrels_path, topics_path, run_paths


def test_evaluate_command_with_several_runs_writes_what_one_run_at_a_time_writes(tmp_path):
    from irgrid import cli
    from irgrid.evaluation.evaluator import read_evaluation

    qrels, topics, runs = write_inputs(tmp_path)
    common = ["--qrels", str(qrels), "--topics", str(topics), "--measures", '["AP", "P@10"]']
    together = [tmp_path / "together" / f"{run.stem}.parquet" for run in runs]
    assert cli.main(["evaluate", "--run", *map(str, runs), *common, "--out", *map(str, together)]) == 0
    for run, out in zip(runs, together):
        single = tmp_path / "single" / f"{run.stem}.parquet"
        assert cli.main(["evaluate", "--run", str(run), *common, "--out", str(single)]) == 0
        pd.testing.assert_frame_equal(read_evaluation(out), read_evaluation(single))
    assert not read_evaluation(together[0]).equals(read_evaluation(together[1]))


def test_evaluate_command_wants_one_out_per_run(tmp_path):
    from irgrid import cli

    qrels, topics, runs = write_inputs(tmp_path)
    with pytest.raises(SystemExit, match="4 --run but 3 --out"):
        cli.main(["evaluate", "--run", *map(str, runs), "--qrels", str(qrels), "--measures", '["AP"]',
                  "--out", *(str(tmp_path / f"{i}.parquet") for i in range(3))])
    assert not list(tmp_path.glob("[0-9].parquet"))  # nothing written before the mismatch was found


def test_a_query_whose_rows_are_split_apart_is_evaluated_whole():
    qrels = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "c", "x"], "relevance": [1, 1, 1]})
    together = pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": ["a", "b", "c", "x"], "rank": [1, 2, 3, 1],
                             "score": [3.0, 2.0, 1.0, 1.0]})
    split = together.iloc[[0, 3, 1, 2]].reset_index(drop=True)  # query 2's row between query 1's
    evaluator = RunEvaluator(qrels, ["AP"])
    expected = evaluator.evaluate(together).sort_values("qid").reset_index(drop=True)
    got = evaluator.evaluate(split).sort_values("qid").reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected)
    # AP of query 1: relevant at ranks 1 and 3, (1/1 + 2/3) / 2
    assert expected["value"].iloc[0] == pytest.approx((1 + 2 / 3) / 2)


def test_a_run_as_an_arrow_table_gives_the_values_of_ir_measures_on_the_frame(tmp_path):
    """What `irgrid evaluate` hands over (read_run_table: Arrow, no pandas) against ir-measures on the frame."""
    import ir_measures

    from irgrid.runs import read_run_table

    qrels_path, topics_path, run_paths = write_inputs(tmp_path)
    measures = ["AP", "P@10", "nDCG@10", "Rprec", "R@1000", "RR"]
    qrels = pd.DataFrame({"query_id": RUN_QRELS["qid"], "doc_id": RUN_QRELS["docno"], "relevance": RUN_QRELS["relevance"]})
    topics = [str(q) for q in range(1, 8)]
    evaluator = RunEvaluator(RUN_QRELS, measures, topics)
    for run, path in zip(several_runs()[:4], run_paths):
        frame = pd.DataFrame({"query_id": run["qid"], "doc_id": run["docno"], "score": -run["rank"].astype(float)})
        expected = {(m.query_id, str(m.measure)): m.value
                    for m in ir_measures.iter_calc([ir_measures.parse_measure(name) for name in measures], qrels, frame)}
        table = read_run_table(path)
        got = evaluator.evaluate(table)
        assert list(got.columns) == ["qid", "measure", "value"]
        assert len(got) == len(topics) * len(measures)
        for qid, measure, value in got.itertuples(index=False):
            assert value == expected.get((qid, measure), 0.0), (qid, measure)
        # and the same frame as the pandas path, row for row
        pd.testing.assert_frame_equal(got, evaluator.evaluate(run))


def deep_runs_over_few_judgements(seed):
    """Runs of 300 documents a query against qrels judging a few (graded 0-2, some at 0) of 2,000:
    each query's last judged document sits anywhere from the top to past the end of its ranking,
    rows of a query arrive shuffled, ranks may skip (the evaluator cuts by rank, not by row)."""
    rng = random.Random(seed)
    docnos = [f"doc{d}" for d in range(2000)]
    qids = [str(q) for q in range(1, 13)]
    qrels = pd.DataFrame(
        [(qid, docno, rng.choice([0, 1, 1, 2])) for qid in qids[:-1] for docno in rng.sample(docnos, rng.randint(1, 6))],
        columns=["qid", "docno", "relevance"],
    )
    runs = []
    for _ in range(4):
        rows = []
        for qid in qids:
            judged = list(qrels.loc[qrels["qid"] == qid, "docno"])
            ranking = rng.sample([d for d in docnos if d not in judged], 300)
            for docno in rng.sample(judged, rng.randint(0, len(judged))):  # some judged documents, anywhere
                ranking.insert(rng.randrange(0, 301), docno)
            ranking = ranking[:300]
            ranks = sorted(rng.sample(range(1, 400), len(ranking)))  # ascending, with gaps
            rows += [(qid, docno, rank, 0.0) for docno, rank in zip(ranking, ranks)]
        rng.shuffle(rows)
        runs.append(run_frame(rows))
    return qrels, runs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_values_of_deep_runs_are_ir_measures_values_on_the_whole_ranking(seed):
    """Only each query's ranking up to its last judged document reaches ir-measures (RANK_ONLY_MEASURES):
    every value equals ir-measures' own on the whole run, for the measures of the default config and
    for cut-offs past the last judged document; NumRet (not rank-only) still sees every document."""
    import ir_measures
    import pyarrow as pa

    qrels, runs = deep_runs_over_few_judgements(seed)
    measures = ["AP", "P@1", "P@5", "P@10", "P@20", "P@30", "nDCG@10", "nDCG@1000", "Rprec", "R@1000", "R@50", "RR"]
    reference_qrels = pd.DataFrame({"query_id": qrels["qid"], "doc_id": qrels["docno"], "relevance": qrels["relevance"]})
    for names in (measures, ["NumRet", "AP"]):
        evaluator = RunEvaluator(qrels, names)
        for run in runs:
            frame = pd.DataFrame({"query_id": run["qid"], "doc_id": run["docno"], "score": -run["rank"].astype(float)})
            expected = {(m.query_id, str(m.measure)): m.value
                        for m in ir_measures.iter_calc([ir_measures.parse_measure(name) for name in names],
                                                       reference_qrels, frame)}
            for got in (evaluator.evaluate(run), evaluator.evaluate(pa.Table.from_pandas(run, preserve_index=False))):
                values = got.set_index(["qid", "measure"])["value"]
                for (qid, measure), value in values.items():
                    assert value == expected.get((qid, measure), 0.0), (seed, qid, measure)
                assert set(expected) <= set(values.index)
            if "NumRet" in names:  # every judged query that retrieved anything has its whole ranking counted
                assert {value for (qid, measure), value in expected.items() if measure == "NumRet"} == {300}


def runs_over_few_documents(seed):
    """Judgements over 60 documents and runs ranking 40 of them for each of 30 queries (rows shuffled):
    few distinct docnos, so Parquet keeps the docno column as a dictionary in every row group."""
    rng = random.Random(seed)
    docnos = [f"doc{d}" for d in range(60)]
    qids = [str(q) for q in range(1, 31)]
    qrels = pd.DataFrame([(qid, docno, rng.choice([0, 1, 2])) for qid in qids[:-2]
                          for docno in rng.sample(docnos, rng.randint(1, 8))], columns=["qid", "docno", "relevance"])
    runs = []
    for _ in range(2):
        rows = [(qid, docno, rank, 0.0) for qid in qids for rank, docno in enumerate(rng.sample(docnos, 40), start=1)]
        rng.shuffle(rows)
        runs.append(run_frame(rows))
    return qrels, runs


@pytest.mark.parametrize("seed,dictionaries", [(4, True), (5, True), (6, False)])
def test_a_run_read_with_its_dictionaries_gives_ir_measures_values(tmp_path, seed, dictionaries):
    """`irgrid evaluate` reads qid and docno as Parquet's dictionaries (read_run_for_evaluation) when Parquet
    holds them so, one a row group: with row groups of 500 rows each has a dictionary of its own, unified
    before the lookup. A run written without dictionaries is read as plain strings. The values must be
    ir-measures' own on the run's frame, and the same as for the plain-string table."""
    import ir_measures
    import pyarrow as pa
    import pyarrow.parquet as pq

    from irgrid.evaluation.evaluator import read_run_for_evaluation
    from irgrid.runs import RUN_SCHEMA, RUN_WRITE_OPTIONS

    qrels, runs = runs_over_few_documents(seed)
    measures = ["AP", "P@10", "nDCG@10", "Rprec", "R@1000", "RR"]
    reference_qrels = pd.DataFrame({"query_id": qrels["qid"], "doc_id": qrels["docno"], "relevance": qrels["relevance"]})
    evaluator = RunEvaluator(qrels, measures)
    for i, run in enumerate(runs):
        path = tmp_path / f"run{i}.parquet"
        options = RUN_WRITE_OPTIONS if dictionaries else {"use_dictionary": False}
        pq.write_table(pa.Table.from_pandas(run, schema=RUN_SCHEMA, preserve_index=False), path, row_group_size=500,
                       **options)
        table = read_run_for_evaluation(path)
        assert all(pa.types.is_dictionary(table.column(name).type) == dictionaries for name in ("qid", "docno"))
        assert table.column("docno").num_chunks > 1 or not dictionaries
        frame = pd.DataFrame({"query_id": run["qid"], "doc_id": run["docno"], "score": -run["rank"].astype(float)})
        expected = {(m.query_id, str(m.measure)): m.value
                    for m in ir_measures.iter_calc([ir_measures.parse_measure(name) for name in measures],
                                                   reference_qrels, frame)}
        got = evaluator.evaluate(table)
        assert len(got) == len(evaluator.judged) * len(measures)
        for qid, measure, value in got.itertuples(index=False):
            assert value == expected.get((qid, measure), 0.0), (seed, qid, measure)
        pd.testing.assert_frame_equal(got, evaluator.evaluate(pa.Table.from_pandas(run, preserve_index=False)))
