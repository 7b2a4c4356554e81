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
