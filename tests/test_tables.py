import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from irgrid.evaluation.evaluator import write_evaluation
from irgrid.tables import TableSpec, load_cells, summarise, to_markdown, write_tables


def per_query(values: dict[str, float], measure="AP"):
    return pd.DataFrame({"qid": list(values), "measure": measure, "value": list(values.values())})


@pytest.fixture
def cells(tmp_path):
    rng = np.random.default_rng(7)
    qids = [str(i) for i in range(1, 21)]
    base = rng.uniform(0.1, 0.5, size=20)
    systems = {
        ("ql", "mu~500"): base,
        ("ql", "mu~1000"): base + 0.01,  # the baseline's best point
        ("bm25", "k1~0.9_b~0.4"): base + 0.01 + rng.normal(0.15, 0.02, size=20),  # clearly better
        ("bm25", "k1~1.2_b~0.75"): base - 0.05,
    }
    rows = []
    for (model, params), ap in systems.items():
        frame = pd.concat([per_query(dict(zip(qids, ap)), "AP"), per_query(dict(zip(qids, ap / 2)), "P@10")])
        path = tmp_path / f"{model}-{params}.parquet"
        write_evaluation(frame, path)
        rows.append({"collection": "tiny", "queryset": "text", "model": model, "params": params, "path": str(path)})
    return pd.DataFrame(rows), systems


def test_best_point_and_paired_test_against_baseline(cells, tmp_path):
    frame, systems = cells
    spec = TableSpec(experiment="demo", models=["bm25", "ql"], baseline="ql")
    summary = summarise(load_cells(frame), spec).set_index(["model", "measure"])
    assert summary.loc[("bm25", "AP"), "params"] == "k1~0.9_b~0.4"
    assert summary.loc[("ql", "AP"), "params"] == "mu~1000"
    expected = scipy_stats.ttest_rel(systems[("bm25", "k1~0.9_b~0.4")], systems[("ql", "mu~1000")])
    assert summary.loc[("bm25", "AP"), "p_value"] == pytest.approx(expected.pvalue)
    assert summary.loc[("bm25", "AP"), "significant"]
    assert summary.loc[("bm25", "AP"), "mean"] == pytest.approx(systems[("bm25", "k1~0.9_b~0.4")].mean())
    assert not summary.loc[("ql", "AP"), "significant"]

    paths = write_tables(summary.reset_index(), spec, tmp_path / "out")
    markdown = paths["md"].read_text()
    assert "†" in markdown and "| tiny |" in markdown
    assert r"$^\dagger$" in paths["tex"].read_text()
    csv = pd.read_csv(paths["csv"])
    assert {"p_value", "params", "mean", "significant"} <= set(csv.columns)


def test_holm_correction_over_the_models_compared_with_the_baseline(cells):
    from statsmodels.stats.multitest import multipletests

    frame, systems = cells
    spec = TableSpec(experiment="demo", models=["bm25", "ql"], baseline="ql", correction="holm")
    # A third model: a copy of bm25's runs under another name, so two models face the baseline.
    frame = pd.concat([frame, frame[frame["model"] == "bm25"].assign(model="bm25_copy")], ignore_index=True)
    spec.models = ["bm25", "bm25_copy", "ql"]
    summary = summarise(load_cells(frame), spec)
    ap = summary[(summary["measure"] == "AP") & (summary["model"] != "ql")]
    expected = multipletests(ap["p_value"].to_numpy(), method="holm")[1]
    assert ap["p_corrected"].to_numpy() == pytest.approx(expected)
    assert (ap["p_corrected"] >= ap["p_value"]).all()


def test_cross_validated_table_does_not_reward_an_overfitted_point(tmp_path):
    # Model "spiky": point A is excellent on 3 queries and useless elsewhere; point B is steady.
    # Over all 20 queries A has the best mean, so the best-run table picks it; cross-validation
    # must score most queries with a point chosen without them, and ends lower than the oracle.
    qids = [str(i) for i in range(20)]
    a_values = [1.0 if i < 3 else 0.0 for i in range(20)]
    b_values = [0.14] * 20
    rows = []
    for model, params, values in [("spiky", "x~1", a_values), ("spiky", "x~2", b_values), ("flat", "x~1", b_values)]:
        path = tmp_path / f"{model}-{params}.parquet"
        write_evaluation(per_query(dict(zip(qids, values)), "AP"), path)
        rows.append({"collection": "c", "queryset": "q", "model": model, "params": params, "path": str(path)})
    evaluations = load_cells(pd.DataFrame(rows))
    best = TableSpec(experiment="e", models=["spiky", "flat"], baseline="flat", measures=["AP"])
    cv = TableSpec(experiment="e", models=["spiky", "flat"], baseline="flat", measures=["AP"], selection="cv", folds=5)
    best_mean = summarise(evaluations, best).set_index("model").loc["spiky", "mean"]
    cv_mean = summarise(evaluations, cv).set_index("model").loc["spiky", "mean"]
    assert best_mean == pytest.approx(0.15)
    assert cv_mean < best_mean


def test_one_sided_test_is_passed_through(cells):
    frame, systems = cells
    spec = TableSpec(experiment="demo", models=["bm25", "ql"], baseline="ql", alternative="greater")
    summary = summarise(load_cells(frame), spec).set_index(["model", "measure"])
    expected = scipy_stats.ttest_rel(systems[("bm25", "k1~0.9_b~0.4")], systems[("ql", "mu~1000")], alternative="greater")
    assert summary.loc[("bm25", "AP"), "p_value"] == pytest.approx(expected.pvalue)
    assert "one-sided" in to_markdown(summary.reset_index(), spec)


def test_a_query_subset_row_keeps_the_points_chosen_on_all_queries(cells, tmp_path):
    from irgrid.tables import query_subsets

    frame, systems = cells
    # queries 1-5 have a phrase of two words; 6 a one-word "phrase"; the others none
    topics = pd.DataFrame({"qid": [str(i) for i in range(1, 21)], "text": "x",
                           "phrases": [["hot dog"]] * 5 + [["dog"]] + [[]] * 14})
    topics_path = tmp_path / "topics.parquet"
    topics.to_parquet(topics_path)
    frame = frame.assign(topics=str(topics_path))
    subsets = query_subsets(frame, ["phrases"])
    assert subsets == {("tiny", "text"): {"phrases": {"1", "2", "3", "4", "5"}}}
    spec = TableSpec(experiment="demo", models=["bm25", "ql"], baseline="ql", subsets=["phrases"], query_counts=True)
    summary = summarise(load_cells(frame), spec, subsets)
    subset = summary[summary["queryset"] == "text, queries with a phrase"].set_index(["model", "measure"])
    # the point chosen over all 20 queries, even where another point is better on the five
    assert subset.loc[("ql", "AP"), "params"] == "mu~1000"
    assert subset.loc[("bm25", "AP"), "num_queries"] == 5
    chosen = systems[("bm25", "k1~0.9_b~0.4")][:5]
    assert subset.loc[("bm25", "AP"), "mean"] == pytest.approx(chosen.mean())
    expected = scipy_stats.ttest_rel(chosen, systems[("ql", "mu~1000")][:5])
    assert subset.loc[("bm25", "AP"), "p_value"] == pytest.approx(expected.pvalue)
    markdown = to_markdown(summary, spec)
    assert "| tiny (text; 20 queries) |" in markdown
    assert "| tiny (text, queries with a phrase; 5 queries) |" in markdown


def test_load_cells_one_arrow_concat_equals_a_frame_per_file(cells, tmp_path):
    """The files concatenated as Arrow tables give the frame of the per-file pandas path; files of
    different schemas (integer qids in one) go through the per-file path, as pandas reconciles them."""
    from irgrid.tables.loading import _load_cells_one_by_one

    frame, _ = cells
    combined = load_cells(frame)
    pd.testing.assert_frame_equal(combined, _load_cells_one_by_one(frame), check_exact=True)
    assert list(combined.columns) == ["qid", "measure", "value", "collection", "queryset", "model", "params"]
    assert combined["model"].tolist() == [model for model in frame["model"] for _ in range(40)]
    odd = tmp_path / "odd.parquet"
    pd.DataFrame({"qid": [1, 2], "measure": "AP", "value": [0.5, 0.25]}).to_parquet(odd, index=False)
    mixed = pd.concat([frame, frame.iloc[:1].assign(path=str(odd), params="odd")], ignore_index=True)
    pd.testing.assert_frame_equal(load_cells(mixed), _load_cells_one_by_one(mixed), check_exact=True)
    assert load_cells(mixed)["qid"].tolist()[-2:] == [1, 2]
    with pytest.raises(ValueError, match="no evaluation files"):
        load_cells(frame.iloc[:0])


def test_chosen_means_are_the_summary_means(cells):
    from irgrid.tables import chosen_means

    frame, _ = cells
    for selection in ("best", "cv"):
        spec = TableSpec(experiment="t", models=["bm25", "ql"], baseline="ql", selection=selection, folds=2)
        evaluations = load_cells(frame)
        summary = summarise(evaluations, spec)
        means = chosen_means(evaluations, spec, "P@10")
        expected = summary[summary["measure"] == "P@10"][list(means.columns)].reset_index(drop=True)
        pd.testing.assert_frame_equal(means, expected, check_exact=True)


def test_topics_file_reads_as_the_retrieval_code_reads_it(tmp_path):
    from irgrid.errors import InputFormatError
    from irgrid.runs import read_topics
    from irgrid.tables import read_topics_file

    path = tmp_path / "topics.parquet"
    pd.DataFrame({"qid": ["1", "2"], "text": ["a b", "c"], "phrases": [[["a", "b"]], []]}).to_parquet(path)
    pd.testing.assert_frame_equal(read_topics_file(path), read_topics(path), check_exact=True)
    pd.DataFrame({"qid": ["1"]}).to_parquet(path)
    with pytest.raises(InputFormatError, match="columns qid, text"):
        read_topics_file(path)
