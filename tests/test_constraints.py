"""The experiment-level summary of constraint violations (the counting itself: test_axioms.py)."""

import io
import math
from itertools import permutations
from pathlib import Path

import pandas as pd
import pytest
import yaml
from common import REPO
from scipy import stats as scipy_stats

from irgrid.axioms.experiment import (
    fewest_violations,
    inverse_correlation,
    violation_claims,
    violation_summary,
    violation_tables,
    violations_per_document,
)
from irgrid.config import load_config, load_yaml
from irgrid.errors import ConfigError
from irgrid.evaluation.stats import spearman_test
from irgrid.tables import TableSpec


def per_doc_frame():
    rows = []
    # Model m1: query 1 has two documents (C1 = 1 and 3 -> mean 2), query 2 one document (C1 = 4).
    for qid, docno, c1 in [("1", "a", 1), ("1", "b", 3), ("2", "c", 4)]:
        rows.append(("col", "text", "m1", "p~1", qid, docno, c1, 0, 0, 0))
    for qid, docno, c1 in [("1", "a", 0), ("2", "c", 1)]:
        rows.append(("col", "text", "m2", "p~2", qid, docno, c1, 1, 0, 0))
    for qid, docno, c1 in [("1", "a", 10), ("2", "c", 10)]:
        rows.append(("col", "text", "m3", "p~3", qid, docno, c1, 0, 2, 1))
    return pd.DataFrame(rows, columns=["collection", "queryset", "model", "params", "qid", "docno", "C1", "C2", "C3", "C4"])


def test_violations_are_averaged_per_document_then_per_query():
    summary = violations_per_document(per_doc_frame()).set_index("model")
    # Query means 2 and 4: the per-query average is 3 (a per-document average would give 8/3).
    assert summary.loc["m1", "C1"] == pytest.approx(3.0)
    assert summary.loc["m2", "total"] == pytest.approx(0.5 + 1.0)
    assert summary.loc["m3", "total"] == pytest.approx(10 + 0 + 2 + 1)


def test_spearman_between_total_violations_and_the_measure():
    evaluations = pd.DataFrame(
        [("col", "text", model, params, qid, "AP", ap)
         for model, params, ap in [("m1", "p~1", 0.3), ("m2", "p~2", 0.4), ("m3", "p~3", 0.1)]
         for qid in ["1", "2"]],
        columns=["collection", "queryset", "model", "params", "qid", "measure", "value"],
    )
    spec = TableSpec(experiment="e", models=["m1", "m2", "m3"], baseline="m2")
    table, correlations = violation_summary(per_doc_frame(), evaluations, spec)
    totals = table.set_index("model")["total"]
    expected = scipy_stats.spearmanr([totals["m1"], totals["m2"], totals["m3"]], [0.3, 0.4, 0.1])
    assert correlations.loc[0, "rho"] == pytest.approx(expected.statistic)
    assert correlations.loc[0, "rho"] == pytest.approx(-1.0)  # fewer violations, higher AP, in order
    texts = violation_tables(table, correlations, spec)
    assert "| col (text) | m1 | p~1 | 3.00 |" in texts["md"]
    # m2: fewest violations (1.5) and best AP (0.4); m3: most violations and worst AP.
    ranks = table.set_index("model")[["rank_violations", "rank_measure"]]
    assert ranks.loc["m2"].tolist() == [1, 1] and ranks.loc["m3"].tolist() == [3, 3]
    assert "rho" in texts["tex"] and "Spearman" in texts["html"]


# --------------------------------------------------------------- Spearman's rho, exact p-values
def brute_force_p_values(x, y):
    """(rho, p of rho <= observed, two-sided p) by pairing y with x in each of the n! orders,
    rho from scipy's spearmanr each time (mid-ranks for ties)."""
    observed = scipy_stats.spearmanr(x, y).statistic
    rhos = [scipy_stats.spearmanr(x, [y[i] for i in order]).statistic for order in permutations(range(len(y)))]
    less = sum(r <= observed + 1e-12 for r in rhos) / len(rhos)
    two_sided = sum(abs(r) >= abs(observed) - 1e-12 for r in rhos) / len(rhos)
    return observed, less, two_sided


def test_spearman_exact_p_on_five_points_counted_by_hand():
    # Fewer violations, higher MAP, except the two functions with the most violations swap:
    # ranks of MAP against ranks of violations 1..5 are 5, 4, 3, 1, 2; sum d^2 = 16+4+0+9+9 = 38,
    # rho = 1 - 6*38/(5*24) = -0.9. Orders at least that far down: the reverse (rho -1) and the
    # 4 that swap one adjacent pair of it (rho -0.9): 5 of 120. Two-sided: 10 of 120. (Tables of
    # Spearman's critical values give 0.900 as n = 5's one-sided 5% value: p = 0.042.)
    violations = [10.0, 20.0, 30.0, 40.0, 50.0]
    ap = [0.50, 0.40, 0.30, 0.10, 0.20]
    test = spearman_test(violations, ap)
    assert test.rho == pytest.approx(-0.9)
    assert test.p_less == pytest.approx(5 / 120)
    assert test.p_two_sided == pytest.approx(10 / 120)
    assert test.p_greater == pytest.approx(119 / 120)  # every order but the reverse has rho >= -0.9
    assert test.method == "exact" and test.num_points == 5
    assert test.min_p_one_sided == pytest.approx(1 / 120)
    perfect = spearman_test(violations, [0.5, 0.4, 0.3, 0.2, 0.1])
    assert (perfect.rho, perfect.p_less, perfect.p_two_sided) == pytest.approx((-1.0, 1 / 120, 2 / 120))


@pytest.mark.parametrize("x,y", [
    ([10.0, 20.0, 30.0, 40.0, 50.0], [0.50, 0.40, 0.30, 0.10, 0.20]),
    ([3.0, 1.0, 2.0, 5.0, 4.0], [0.2, 0.3, 0.1, 0.25, 0.15]),
    ([1.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.1, 0.4, 0.2, 0.3, 0.6, 0.5]),   # tied violations
    ([7.0, 3.0, 3.0, 9.0, 1.0, 2.0, 8.0], [0.3, 0.3, 0.1, 0.2, 0.5, 0.4, 0.05]),
])
def test_spearman_exact_p_equals_enumeration(x, y):
    rho, less, two_sided = brute_force_p_values(x, y)
    test = spearman_test(x, y)
    assert (test.rho, test.p_less, test.p_two_sided) == pytest.approx((rho, less, two_sided))


def test_spearman_beyond_the_exact_limit_is_scipys_approximation():
    x, y = list(range(10)), [3, 1, 2, 0, 5, 4, 9, 6, 8, 7]
    test = spearman_test(x, y)
    assert test.method == "asymptotic"
    assert test.p_two_sided == pytest.approx(scipy_stats.spearmanr(x, y).pvalue)
    assert test.p_less == pytest.approx(scipy_stats.spearmanr(x, y, alternative="less").pvalue)
    constant = spearman_test([1.0] * 5, [0.1, 0.2, 0.3, 0.4, 0.5])
    assert math.isnan(constant.rho) and math.isnan(constant.p_less)


# ----------------------------------------------------------------------------------- claims
def test_fewest_violations_holds_by_a_margin():
    check = fewest_violations({"bm25": 9.0, "es": 3.0, "piv": 4.0, "dfr": 5.0}, "es", {"es": "ES", "piv": "PIV"})
    assert check["verdict"] == "holds"
    assert check["next_model"] == "piv"
    assert check["margin"] == pytest.approx(1.0) and check["relative_margin"] == pytest.approx(0.25)
    assert "ES 3.0000 against 4.0000 for PIV, the next fewest: 1 fewer (25.00% of PIV's)" in check["detail"]


def test_fewest_violations_tie_favours_no_one():
    check = fewest_violations({"bm25": 9.0, "es": 4.0, "piv": 4.0, "dfr": 5.0}, "es", {"es": "ES", "piv": "PIV"})
    assert check["verdict"] == "tied"
    assert check["margin"] == 0.0 and "ties PIV" in check["detail"]
    # equal averages of the same counts summed in another order are a tie too
    assert fewest_violations({"es": 0.1 + 0.2, "piv": 0.3}, "es")["verdict"] == "tied"


def test_fewest_violations_does_not_hold():
    check = fewest_violations({"bm25": 9.0, "es": 6.0, "piv": 4.0, "dfr": 5.0}, "es")
    assert check["verdict"] == "does not hold"
    assert check["next_model"] == "piv" and check["margin"] == pytest.approx(-2.0)
    assert "es ranks 3 of 4" in check["detail"]
    assert fewest_violations({"es": float("nan"), "piv": 4.0}, "es")["verdict"] == "undefined"


def test_inverse_correlation_direction_and_significance_are_separate():
    significant = inverse_correlation(-0.9, 5 / 120, 0.05, 5, "exact", 1 / 120)
    assert significant["verdict"] == "holds" and significant["significant"]
    inverse_only = inverse_correlation(-0.7, 0.1167, 0.05, 5, "exact", 1 / 120)
    assert inverse_only["verdict"] == "holds" and not inverse_only["significant"]
    assert "not significant" in inverse_only["detail"]
    assert inverse_correlation(0.3, 0.7, 0.05, 5, "exact", 1 / 120)["verdict"] == "opposite"
    assert inverse_correlation(float("nan"), float("nan"), 0.05, 5, "exact", 1 / 120)["verdict"] == "undefined"


def experiment_frames():
    """Six functions on one row, five of them the paper's; counted on their own runs and on a common one.

    Own totals (one query, one document each): es 1, dfr 2, piv 3, mbm25 4, bm25 5, tfidf 0;
    common totals: es 2, dfr 2 (a tie), piv 6, mbm25 4, bm25 5, tfidf 9. AP: es .50, dfr .40,
    piv .30, mbm25 .20, bm25 .10, tfidf .05.
    """
    own = {"es": 1, "dfr": 2, "piv": 3, "mbm25": 4, "bm25": 5, "tfidf": 0}
    common = {"es": 2, "dfr": 2, "piv": 6, "mbm25": 4, "bm25": 5, "tfidf": 9}
    ap = {"es": 0.5, "dfr": 0.4, "piv": 0.3, "mbm25": 0.2, "bm25": 0.1, "tfidf": 0.05}
    rows = [("col", "text", model, "p", counted_on, "1", "d", totals[model], 0, 0, 0)
            for counted_on, totals in [("own", own), ("common", common)] for model in own]
    per_doc = pd.DataFrame(rows, columns=["collection", "queryset", "model", "params", "counted_on", "qid", "docno",
                                          "C1", "C2", "C3", "C4"])
    evaluations = pd.DataFrame([("col", "text", model, "p", "1", "AP", value) for model, value in ap.items()],
                               columns=["collection", "queryset", "model", "params", "qid", "measure", "value"])
    return per_doc, evaluations, own, common, ap


def test_rho_over_the_papers_functions_and_over_all_on_both_document_sets():
    per_doc, evaluations, own, common, ap = experiment_frames()
    paper = ["bm25", "piv", "dfr", "mbm25", "es"]
    spec = TableSpec(experiment="e", models=[*paper, "tfidf"], baseline="dfr", model_labels={"es": "ES"})
    table, correlations = violation_summary(per_doc, evaluations, spec, paper_models=paper,
                                            analyzers={("col", "text"): "porter"})
    assert table.set_index("model")["common_total"].to_dict() == {m: float(v) for m, v in common.items()}
    found = correlations.set_index(["models", "counted_on"])
    assert sorted(found.index) == [("all", "common"), ("all", "own"), ("paper", "common"), ("paper", "own")]
    for models, names in [("paper", paper), ("all", [*paper, "tfidf"])]:
        for counted_on, totals in [("own", own), ("common", common)]:
            rho, less, two_sided = brute_force_p_values([totals[m] for m in names], [ap[m] for m in names])
            entry = found.loc[(models, counted_on)]
            assert (entry["rho"], entry["p_less"], entry["p_two_sided"]) == pytest.approx((rho, less, two_sided))
            assert entry["functions"] == len(names)
    # the paper's five on their own runs: violations in exactly the reverse order of AP
    assert found.loc[("paper", "own"), "rho"] == pytest.approx(-1.0)
    assert found.loc[("paper", "own"), "p_less"] == pytest.approx(1 / 120)

    claims = violation_claims(table, correlations, spec, fewest="es", common_run="dfr")
    verdicts = claims.set_index(["claim", "counted_on"])["verdict"].to_dict()
    assert verdicts == {("inverse_correlation", "own"): "holds", ("inverse_correlation", "common"): "holds",
                        ("fewest_violations", "own"): "holds", ("fewest_violations", "common"): "tied"}
    assert set(claims["analyzer"]) == {"porter"} and set(claims["functions"]) == {5}
    fewest_own = claims[(claims["claim"] == "fewest_violations") & (claims["counted_on"] == "own")].iloc[0]
    # tfidf (0 violations) is not one of the paper's functions: the next fewest is dfr
    assert fewest_own["next_model"] == "dfr" and fewest_own["margin"] == pytest.approx(1.0)

    texts = violation_tables(table, correlations, spec, claims, common_run="dfr")
    assert "## Claims" in texts["md"] and "tfidf (extended)" in texts["md"]
    assert "| col (text) | ES | p | 1.00 | 0.00 | 0.00 | 0.00 | 1.00 | 2.00 | 0.00 | 0.00 | 0.00 | 2.00 |" in texts["md"]
    assert "Claims" in texts["html"] and "Claims" in texts["tex"]
    written = pd.read_csv(io.StringIO(texts["claims.csv"]))
    assert len(written) == 4 and set(written["verdict"]) == {"holds", "tied"}
    wide = pd.read_csv(io.StringIO(texts["csv"]))
    assert {"common_total", "rho_paper_own", "p_less_paper_common", "rho_all_own", "paper_model"} <= set(wide.columns)


def test_paper_models_default_to_all_models():
    per_doc, evaluations, *_ = experiment_frames()
    spec = TableSpec(experiment="e", models=["bm25", "piv", "dfr", "mbm25", "es", "tfidf"], baseline="dfr")
    table, correlations = violation_summary(per_doc, evaluations, spec)
    assert table["paper_model"].all()
    assert set(correlations["models"]) == {"paper"} and set(correlations["functions"]) == {6}


# ------------------------------------------------------------------------- experiment keys
TWO_MODELS = {"title": "two", "collections": ["adi"], "analyzer": "porter", "baseline": "ql",
              "models": {"bm25": {"family": "bm25"}, "ql": {"family": "ql_dirichlet"}}}


def load_experiment(tmp_path: Path, experiment: dict) -> dict:
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment), encoding="utf-8")
    config = load_yaml(REPO / "config" / "config.yaml")
    config["registry"] = str(REPO / "config" / "collections.yaml")
    config["experiments"] = {"exp": str(path)}
    return load_config(config)["_experiments"]["exp"]


def test_the_constraints_experiment_names_the_papers_five_functions():
    experiment = load_yaml(REPO / "config" / "experiments" / "constraints.yaml")
    assert experiment["paper_models"] == ["bm25_default", "piv", "dfr", "mbm25", "es"]
    assert set(experiment["models"]) - set(experiment["paper_models"]) == {"tfidf", "es_linear"}
    assert experiment["axiom_common_run"] == "dfr" and experiment["axiom_fewest_violations"] == "es"


def test_paper_models_and_common_run_default_to_all_models_and_the_baseline(tmp_path):
    experiment = load_experiment(tmp_path, TWO_MODELS)
    assert experiment["paper_models"] == ["bm25", "ql"]
    assert experiment["axiom_common_run"] == "ql" and experiment["axiom_fewest_violations"] is None


@pytest.mark.parametrize("keys,words", [
    ({"paper_models": ["bm25", "dfr"]}, "paper_models names 'dfr'"),
    ({"axiom_common_run": "dfr"}, "axiom_common_run 'dfr'"),
    ({"paper_models": ["ql"], "axiom_fewest_violations": "bm25"}, "axiom_fewest_violations 'bm25'"),
])
def test_axiom_keys_must_name_the_experiments_models(tmp_path, keys, words):
    with pytest.raises(ConfigError) as error:
        load_experiment(tmp_path, {**TWO_MODELS, **keys})
    assert str(tmp_path / "exp.yaml") in str(error.value) and words in str(error.value)
