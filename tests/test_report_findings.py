"""Findings (claims evaluated per row) and per-query evidence, on small hand-made evaluations.

Checked against independent computations: scipy's paired t-test and bootstrap called directly, a
bootstrap done by hand with numpy, Holm's correction worked by hand, differences sorted by hand.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from irgrid.report.claims import Claim
from irgrid.report.evidence import gains_and_losses, per_query_differences, plot_per_query
from irgrid.report.findings import evaluate_claims, findings_html, findings_markdown
from irgrid.tables import TableSpec, chosen_points, summarise

RNG = np.random.default_rng(7)
QIDS = [f"q{i:02d}" for i in range(30)]
BASE = RNG.uniform(0.1, 0.6, len(QIDS))
# per model: one point, values on 30 queries of row (adi, text)
VALUES = {"base": BASE, "up": np.clip(BASE + RNG.normal(0.08, 0.05, len(QIDS)), 0, 1),
          "down": np.clip(BASE - RNG.normal(0.08, 0.05, len(QIDS)), 0, 1),
          "same": np.clip(BASE + RNG.normal(0.0, 0.05, len(QIDS)), 0, 1)}


def evaluations(models=VALUES, collection="adi", queryset="text") -> pd.DataFrame:
    frames = []
    for model, values in models.items():
        frames.append(pd.DataFrame({"qid": QIDS, "measure": "AP", "value": values, "collection": collection,
                                    "queryset": queryset, "model": model, "params": "mu~1"}))
    return pd.concat(frames, ignore_index=True)


def spec(models=("base", "up", "down", "same"), correction="holm", **kwargs) -> TableSpec:
    return TableSpec(experiment="x", models=list(models), baseline="base", measures=["AP"], select_by="AP",
                     correction=correction, **kwargs)


def test_difference_p_value_and_ci_against_scipy():
    [line] = evaluate_claims(evaluations(), spec(correction="none"), [Claim("up", "base", "AP")]).to_dict("records")
    differences = VALUES["up"] - VALUES["base"]
    assert line["difference"] == pytest.approx(differences.mean())
    assert line["p_value"] == pytest.approx(scipy_stats.ttest_rel(VALUES["up"], VALUES["base"]).pvalue)
    # scipy's bootstrap on the paired differences with the experiment's seed (0): the same interval
    expected = scipy_stats.bootstrap((differences,), np.mean, n_resamples=10_000, confidence_level=0.95,
                                     method="BCa", rng=np.random.default_rng(0)).confidence_interval
    assert (line["ci_low"], line["ci_high"]) == pytest.approx((expected.low, expected.high))
    assert line["ci_low"] < line["difference"] < line["ci_high"]
    assert line["verdict"] == "holds" and line["num_queries"] == 30


def test_percentile_interval_agrees_with_a_bootstrap_by_hand():
    [line] = evaluate_claims(evaluations(), spec(), [Claim("same", "base", "AP")], method="percentile").to_dict("records")
    differences = VALUES["same"] - VALUES["base"]
    resampled = np.random.default_rng(123).choice(differences, size=(40_000, len(differences)), replace=True).mean(axis=1)
    low, high = np.percentile(resampled, [2.5, 97.5])
    # two independent Monte Carlo estimates of the same quantiles: close, not equal
    assert line["ci_low"] == pytest.approx(low, abs=0.002) and line["ci_high"] == pytest.approx(high, abs=0.002)


def test_corrected_p_is_holm_over_the_comparisons_with_the_same_model_and_the_table_agrees():
    found = evaluate_claims(evaluations(), spec(), [Claim("up", "base", "AP"), Claim("same", "base", "AP")])
    raw = {model: scipy_stats.ttest_rel(VALUES[model], VALUES["base"]).pvalue for model in ("up", "down", "same")}
    order = sorted(raw, key=raw.get)
    holm, running = {}, 0.0
    for i, model in enumerate(order):  # step-down: (m - i) p_(i), kept monotone
        running = max(running, min(1.0, (len(order) - i) * raw[model]))
        holm[model] = running
    assert found["p_corrected"].tolist() == pytest.approx([holm["up"], holm["same"]])
    table = summarise(evaluations(), spec()).set_index("model")
    assert found["p_corrected"].tolist() == pytest.approx([table.loc["up", "p_corrected"], table.loc["same", "p_corrected"]])


def test_verdicts():
    found = evaluate_claims(evaluations(), spec(), [Claim("up", "base", "AP"), Claim("down", "base", "AP"),
                                                    Claim("same", "base", "AP"), Claim("base", "down", "AP")])
    assert found["verdict"].tolist() == ["holds", "opposite", "no difference", "holds"]
    # a claim between two other models: the family is the comparisons with `than` (here 'down')
    assert found["difference"].iloc[3] == pytest.approx(-found["difference"].iloc[1])


def test_a_row_without_judged_queries_is_shown_without_numbers():
    found = evaluate_claims(evaluations(), spec(), [Claim("up", "base", "AP")],
                            rows=[("adi", "text"), ("med", "text")])
    assert found["verdict"].tolist() == ["holds", "no judged queries"]
    assert found["num_queries"].tolist() == [30, 0] and np.isnan(found["difference"].iloc[1])
    html = findings_html(found, 0.05)
    assert "no judged queries" in html and "med (text)" in html
    assert "| med (text) | 0 |" in findings_markdown(found, "x", 0.05)


def test_no_claims_renders_a_sentence():
    found = evaluate_claims(evaluations(), spec(), [])
    assert found.empty and "states no claims" in findings_html(found, 0.05)


def test_per_query_differences_sorted_by_hand():
    chosen = chosen_points(evaluations(), spec())[("adi", "text")]
    frame = per_query_differences(chosen, "up", "base", "AP")
    by_hand = sorted(zip(QIDS, VALUES["up"] - VALUES["base"]), key=lambda pair: (-pair[1], pair[0]))
    assert frame["qid"].tolist() == [qid for qid, _ in by_hand]
    assert frame["difference"].tolist() == pytest.approx([d for _, d in by_hand])


def test_gains_and_losses_with_the_query_text():
    chosen_by_row = chosen_points(evaluations(), spec())
    texts = {("adi", "text"): {qid: f"query {qid}" for qid in QIDS}}
    table = gains_and_losses(chosen_by_row, spec(), texts, top=3)
    same = table[table["model"] == "same"]
    differences = dict(zip(QIDS, VALUES["same"] - VALUES["base"]))
    largest = sorted(differences, key=differences.get, reverse=True)[:3]
    smallest = sorted(differences, key=differences.get)[:3]
    assert same[same["kind"] == "gain"]["qid"].tolist() == largest
    assert same[same["kind"] == "loss"]["qid"].tolist() == smallest
    assert same["text"].iloc[0] == f"query {largest[0]}"


def test_per_query_figure_has_labelled_axes_and_one_bar_per_query(tmp_path):
    paths = plot_per_query(chosen_points(evaluations(), spec()), spec(), tmp_path / "per_query")
    svg = paths[0].read_text()
    assert "queries, sorted by difference" in svg and "Δ AP" in svg
    # 3 panels, each one collection of a bar per query (a path each in the SVG), a gain green and
    # the rest red: as many green bars in a panel as the model beats the baseline on (by hand)
    import re

    panels = re.findall(r'<g id="PolyCollection_\d+">(.*?)</g>', svg, flags=re.S)
    assert [panel.count("<path") for panel in panels] == [30, 30, 30]
    wins = {model: int((VALUES[model] > VALUES["base"]).sum()) for model in ("up", "down", "same")}
    assert sorted(panel.count("fill: #2a7f3f") for panel in panels) == sorted(wins.values())
    assert [panel.count("fill: #2a7f3f") + panel.count("fill: #b2302e") for panel in panels] == [30, 30, 30]


def test_one_model_experiment_figure_says_so(tmp_path):
    one = spec(models=("base",))
    paths = plot_per_query(chosen_points(evaluations({"base": BASE}), one), one, tmp_path / "per_query")
    assert "one model only" in paths[0].read_text()
    assert gains_and_losses(chosen_points(evaluations({"base": BASE}), one), one, {}).empty


def test_claims_on_chosen_points_given_equal_the_claims_choosing_them():
    """``irgrid findings`` hands each selection's chosen points to evaluate_claims (and reuses them for
    the evidence): the lines are those evaluate_claims gives choosing them itself."""
    two_rows = pd.concat([evaluations(), evaluations(queryset="other")], ignore_index=True)
    claims = [Claim("up", "base", "AP"), Claim("same", "base", "AP"), Claim("up", "down", "AP")]
    for selection in ("best", "cv"):
        table_spec = spec(selection=selection)
        chosen = chosen_points(two_rows, table_spec)
        given = evaluate_claims(two_rows, table_spec, claims, [("adi", "text"), ("adi", "none")], chosen_by_row=chosen)
        pd.testing.assert_frame_equal(given, evaluate_claims(two_rows, table_spec, claims,
                                                             [("adi", "text"), ("adi", "none")]), check_exact=True)
        assert given["verdict"].tolist()[:3] == ["holds", "no judged queries", "holds"]


def test_differences_computed_once_give_the_same_table_and_figure(tmp_path):
    from irgrid.report.evidence import differences_by_panel

    chosen_by_row = chosen_points(evaluations(), spec())
    differences = differences_by_panel(chosen_by_row, spec())
    assert sorted(differences) == [(("adi", "text"), model) for model in ("down", "same", "up")]
    pd.testing.assert_frame_equal(differences[(("adi", "text"), "up")],
                                  per_query_differences(chosen_by_row[("adi", "text")], "up", "base", "AP"))
    texts = {("adi", "text"): {qid: f"query {qid}" for qid in QIDS}}
    pd.testing.assert_frame_equal(gains_and_losses(chosen_by_row, spec(), texts, differences=differences),
                                  gains_and_losses(chosen_by_row, spec(), texts))
    given = plot_per_query(chosen_by_row, spec(), tmp_path / "given", differences=differences)
    computed = plot_per_query(chosen_by_row, spec(), tmp_path / "computed")
    assert given[0].read_bytes() == computed[0].read_bytes()


# --- fair verdicts: grid positions, the deciding selection, both tests, directions, subsets --------------------

def test_grid_position_flags_an_edge_that_can_move_and_not_a_bound():
    from irgrid.tables import grid_position

    params = [f"mu~{mu}_alpha~{alpha}" for mu in (250, 500, 1000) for alpha in (0, 0.5, 1)]
    low_mu = grid_position(params, "mu~250_alpha~0.5", {"mu": [None, 1e9], "alpha": [0, 1]})
    assert low_mu.points == 9 and low_mu.edges == ("mu=250 (lowest of 3)",) and low_mu.on_edge
    # alpha = 0 is the bottom of its range [0, 1]: no grid reaches past it
    at_bound = grid_position(params, "mu~500_alpha~0", {"mu": [None, 1e9], "alpha": [0, 1]})
    assert not at_bound.on_edge and at_bound.bounded == ("alpha=0 (lowest of 3)",)
    assert "range's bound" in at_bound.describe()
    assert not grid_position(params, "mu~500_alpha~0.5").on_edge
    assert not grid_position(["mu~500"], "mu~500").on_edge  # one value is not swept


def test_tables_count_points_and_mark_a_best_point_on_an_edge():
    frames = [evaluations({"base": BASE})]
    for shift, mu in ((0.0, 100), (0.05, 200), (0.1, 400)):  # the best point is the largest mu: an edge
        frames.append(evaluations({"up": np.clip(BASE + shift, 0, 1)}).assign(params=f"mu~{mu}"))
    frame = pd.concat(frames, ignore_index=True)
    two = spec(models=("base", "up"))
    summary = summarise(frame, two)
    up = summary[summary["model"] == "up"].iloc[0]
    assert up["points"] == 3 and up["on_edge"] and "mu=400 (highest of 3)" in up["edge"]
    from irgrid.tables import EDGE_MARK, to_markdown

    text = to_markdown(summary, two)
    assert "Grid points per model: base 1, up 3." in text and EDGE_MARK in text
    [line] = evaluate_claims(frame, two, [Claim("up", "base", "AP")]).to_dict("records")
    assert line["points_better"] == 3 and "extend the grid" in line["edge_better"] and line["edge_than"] == ""


def test_a_one_sided_test_says_opposite_when_the_model_is_significantly_worse():
    one_sided = spec(correction="none", alternative="greater")
    [line] = evaluate_claims(evaluations(), one_sided, [Claim("down", "base", "AP")]).to_dict("records")
    # the claimed direction is not significant (p near 1); the test the other way is
    assert line["p_value"] == pytest.approx(scipy_stats.ttest_rel(VALUES["down"], VALUES["base"],
                                                                  alternative="greater").pvalue)
    assert line["p_value"] > 0.5
    assert scipy_stats.ttest_rel(VALUES["down"], VALUES["base"], alternative="less").pvalue < 0.05
    assert line["verdict"] == "opposite" and line["significant"] == "yes, the other way"


def test_a_direction_claim_says_the_sign_and_significance_apart():
    found = evaluate_claims(evaluations(), spec(), [Claim("up", "base", "AP", kind="direction"),
                                                    Claim("same", "base", "AP", kind="direction")])
    up, same = found.to_dict("records")
    assert up["verdict"] == "direction holds" and up["significant"] == "yes"
    expected_same = "direction holds" if (VALUES["same"] - VALUES["base"]).mean() > 0 else "direction reversed"
    assert same["verdict"] == expected_same and same["significant"] == "no"


def test_the_papers_own_test_runs_beside_the_corrected_one():
    from irgrid.report.claims import PaperTest

    paper = PaperTest(test="ttest", alternative="greater", alpha=0.0005)
    [line] = evaluate_claims(evaluations(), spec(), [Claim("same", "base", "AP")], paper_test=paper).to_dict("records")
    assert line["paper_p"] == pytest.approx(scipy_stats.ttest_rel(VALUES["same"], VALUES["base"],
                                                                  alternative="greater").pvalue)
    assert "one-sided" in line["paper_test"] and "0.0005" in line["paper_test"]
    [none] = evaluate_claims(evaluations(), spec(), [Claim("up", "base", "AP")]).to_dict("records")
    assert "direction only" in none["paper_test"] and np.isnan(none["paper_p"])


def test_the_verdict_is_cross_validated_while_the_best_run_rewards_more_points():
    """A model given 40 grid points of pure noise around the baseline: its best run looks better than
    the baseline (selection on the test queries), its cross-validated points do not."""
    rng = np.random.default_rng(11)
    qids = [f"q{i:02d}" for i in range(60)]
    base = rng.uniform(0.1, 0.6, len(qids))
    frames = [pd.DataFrame({"qid": qids, "measure": "AP", "value": base, "collection": "c", "queryset": "t",
                            "model": "base", "params": "mu~1"})]
    for point in range(40):
        frames.append(pd.DataFrame({"qid": qids, "measure": "AP", "value": base + rng.normal(0, 0.1, len(qids)),
                                    "collection": "c", "queryset": "t", "model": "noisy", "params": f"k~{point}"}))
    frame = pd.concat(frames, ignore_index=True)
    cv = spec(models=("base", "noisy"), selection="cv", folds=5)
    [line] = evaluate_claims(frame, cv, [Claim("noisy", "base", "AP")]).to_dict("records")
    assert line["selection"] == "cv" and line["points_better"] == 40
    best_means = frame[frame["model"] == "noisy"].groupby("params")["value"].mean() - base.mean()
    assert line["oracle_difference"] == pytest.approx(best_means.max())  # the oracle: the largest of 40 means
    assert line["difference"] < line["oracle_difference"]
    assert line["verdict"] == "no difference"


def test_a_claim_about_some_query_sets_keeps_to_them_and_says_when_none_ran():
    frame = pd.concat([evaluations(queryset="title"), evaluations(queryset="desc")], ignore_index=True)
    found = evaluate_claims(frame, spec(), [Claim("up", "base", "AP", querysets=("desc",)),
                                            Claim("up", "base", "AP", querysets=("title_desc_narr",))])
    assert found["queryset"].tolist() == ["desc", ""]
    assert found["verdict"].tolist() == ["holds", "no rows"] and "title_desc_narr" in found["note"].iloc[1]


def test_a_gain_larger_on_a_subset_against_welch_by_hand():
    gains = np.where(np.arange(len(QIDS)) < 10, 0.2, 0.0) + RNG.normal(0, 0.01, len(QIDS))
    frame = evaluations({"base": BASE, "up": BASE + gains})
    subset = set(QIDS[:10])
    [line] = evaluate_claims(frame, spec(models=("base", "up")), [Claim("up", "base", "AP", kind="direction",
                                                                        larger_on="phrases")],
                             subsets={("adi", "text"): {"phrases": subset}}).to_dict("records")
    assert line["mean_better"] == pytest.approx(gains[:10].mean())
    assert line["mean_than"] == pytest.approx(gains.mean())
    assert line["p_value"] == pytest.approx(scipy_stats.ttest_ind(gains[:10], gains[10:], equal_var=False).pvalue)
    assert line["verdict"] == "direction holds" and line["ci_low"] > 0


def test_a_ci_that_disagrees_with_the_corrected_test_is_noted():
    found = evaluate_claims(evaluations(), spec(correction="bonferroni"), [Claim("up", "base", "AP")])
    line = found.iloc[0].to_dict()
    line.update(ci_low=0.01, ci_high=0.05, significant="no")
    from irgrid.report.findings import _note

    assert "CI excludes 0 but the corrected test does not reject" in _note(line, Claim("up", "base", "AP"))


def test_a_subset_claim_with_every_query_in_the_subset_is_untestable():
    frame = evaluations({"base": BASE, "up": VALUES["up"]})
    [line] = evaluate_claims(frame, spec(models=("base", "up")), [Claim("up", "base", "AP", kind="direction",
                                                                        larger_on="phrases")],
                             subsets={("adi", "text"): {"phrases": set(QIDS)}}).to_dict("records")
    assert line["verdict"] == "untestable" and "30 of the row's 30" in line["note"]
