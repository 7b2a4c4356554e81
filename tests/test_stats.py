import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from irgrid.errors import ConfigError
from irgrid.evaluation.stats import (
    CVResult,
    align,
    apply_selection,
    best_point,
    bootstrap_ci,
    correct_p_values,
    cross_validated_selection,
    paired_test,
    paired_ttest,
    randomization_test,
    spearman,
    wilcoxon_test,
)

ALTERNATIVES = ["two-sided", "greater", "less"]


def series(values, prefix="q"):
    return pd.Series({f"{prefix}{i:02d}": float(v) for i, v in enumerate(values)})


def random_pair(seed, n, shift=0.05):
    rng = np.random.default_rng(seed)
    baseline = rng.uniform(0, 1, n)
    system = np.clip(baseline + rng.normal(shift, 0.15, n), 0, 1)
    return series(system), series(baseline)


# --- paired t-test -----------------------------------------------------------------


def test_paired_ttest_equals_scipy_on_aligned_queries():
    system = pd.Series({"1": 0.5, "2": 0.3, "3": 0.9, "4": 0.2})
    # Same queries, other order: the test must align by qid, not by position.
    baseline = pd.Series({"4": 0.1, "3": 0.7, "2": 0.35, "1": 0.4})
    result = paired_ttest(system, baseline)
    expected = scipy_stats.ttest_rel([0.5, 0.3, 0.9, 0.2], [0.4, 0.35, 0.7, 0.1])
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.mean_difference == pytest.approx(np.mean([0.1, -0.05, 0.2, 0.1]))
    assert result.num_queries == 4


def test_paired_ttest_by_hand():
    # differences 1, 2, 3: mean 2, sd 1, t = 2 / (1 / sqrt 3) = 3.4641; two-sided p with 2 df = 0.0742
    result = paired_ttest(pd.Series({"a": 2.0, "b": 3.0, "c": 4.0}), pd.Series({"a": 1.0, "b": 1.0, "c": 1.0}))
    assert result.statistic == pytest.approx(2 * np.sqrt(3))
    assert result.p_value == pytest.approx(0.07418, abs=1e-4)
    # One-sided: half of it in the direction of the difference, 1 - half against it.
    greater = paired_ttest(
        pd.Series({"a": 2.0, "b": 3.0, "c": 4.0}), pd.Series({"a": 1.0, "b": 1.0, "c": 1.0}), "greater"
    )
    assert greater.p_value == pytest.approx(0.07418 / 2, abs=1e-4)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paired_ttest_one_and_two_sided_equal_scipy(alternative, seed):
    system, baseline = random_pair(seed, 25)
    # Shuffle one side: alignment is by qid.
    baseline = baseline.sample(frac=1, random_state=seed)
    result = paired_ttest(system, baseline, alternative=alternative)
    expected = scipy_stats.ttest_rel(system.sort_index(), baseline.sort_index(), alternative=alternative)
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)


def test_paired_ttest_constant_difference_respects_the_alternative():
    system, baseline = series([0.5, 0.75, 1.0]), series([0.25, 0.5, 0.75])
    assert paired_ttest(system, baseline).p_value == 0.0
    assert paired_ttest(system, baseline, "greater").p_value == 0.0
    assert paired_ttest(system, baseline, "less").p_value == 1.0
    assert paired_ttest(baseline, system, "less").p_value == 0.0
    assert paired_ttest(baseline, system, "greater").statistic == -np.inf


def test_identical_systems_have_p_one_and_different_queries_raise():
    values = pd.Series({"1": 0.1, "2": 0.2})
    assert paired_ttest(values, values).p_value == 1.0
    with pytest.raises(ValueError, match="different query sets"):
        paired_ttest(values, pd.Series({"1": 0.1, "3": 0.2}))


@pytest.mark.parametrize("test", [paired_ttest, wilcoxon_test, randomization_test])
def test_every_paired_test_refuses_bad_pairings(test):
    values = pd.Series({"1": 0.1, "2": 0.2, "3": 0.3})
    with pytest.raises(ValueError, match="different query sets"):
        test(values, pd.Series({"1": 0.1, "2": 0.2, "4": 0.3}))
    with pytest.raises(ValueError, match="more than once"):
        test(values, pd.Series([0.1, 0.2, 0.3, 0.4], index=["1", "2", "3", "3"]))
    with pytest.raises(ValueError, match="NaN"):
        test(values, pd.Series({"1": 0.1, "2": np.nan, "3": 0.3}))
    with pytest.raises(ConfigError, match="alternative"):
        test(values, values, alternative="bigger")


# --- Wilcoxon ----------------------------------------------------------------------


def test_wilcoxon_by_hand():
    # Differences 1..5, all positive: R- = 0. Exact null: each of the 2^5 = 32 sign
    # patterns equally likely and only the all-positive one has R- = 0 (R+ = 15), so
    # P(R+ >= 15) = 1/32 and the two-sided p is 2/32.
    system, baseline = series([1, 2, 3, 4, 5]), series([0, 0, 0, 0, 0])
    assert wilcoxon_test(system, baseline).p_value == pytest.approx(2 / 32)
    assert wilcoxon_test(system, baseline).statistic == 0.0
    assert wilcoxon_test(system, baseline, "greater").p_value == pytest.approx(1 / 32)
    assert wilcoxon_test(system, baseline, "less").p_value == pytest.approx(1.0)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_wilcoxon_equals_scipy_with_ties_and_zeros(alternative, zero_method):
    system, baseline = random_pair(3, 30)
    # Queries where both systems score the same (zero differences), as with two systems
    # that both retrieve nothing relevant, and a tie in |difference|.
    system.iloc[:6] = baseline.iloc[:6]
    system.iloc[6] = baseline.iloc[6] + 0.125
    system.iloc[7] = baseline.iloc[7] - 0.125
    result = wilcoxon_test(system, baseline.iloc[::-1], alternative=alternative, zero_method=zero_method)
    expected = scipy_stats.wilcoxon(system, baseline, zero_method=zero_method, alternative=alternative)
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.num_queries == 30
    assert result.mean_difference == pytest.approx((system - baseline).mean())


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_wilcoxon_all_zero_differences_give_p_one(alternative):
    values = series([0.0, 0.5, 0.25, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = wilcoxon_test(values, values.copy(), alternative=alternative)
    assert (result.statistic, result.p_value, result.mean_difference, result.num_queries) == (0.0, 1.0, 0.0, 4)
    with pytest.raises(ConfigError, match="zero_method"):
        wilcoxon_test(values, values, zero_method="drop")


# --- randomization test --------------------------------------------------------------


@pytest.mark.parametrize(
    "alternative, expected",
    [("greater", 3 / 8), ("less", 7 / 8), ("two-sided", 6 / 8)],
)
def test_randomization_test_by_hand(alternative, expected):
    # Differences d = (3, 1, -1), observed sum 3 (mean 1). The 8 sign flips s give
    # sum(s * d) = 3*s1 + 1*s2 - 1*s3:
    #   (+,+,+):  3 + 1 - 1 =  3      (-,+,+): -3 + 1 - 1 = -3
    #   (+,-,+):  3 - 1 - 1 =  1      (+,+,-):  3 + 1 + 1 =  5
    #   (-,-,+): -3 - 1 - 1 = -5      (-,+,-): -3 + 1 + 1 = -1
    #   (+,-,-):  3 - 1 + 1 =  3      (-,-,-): -3 - 1 + 1 = -3
    # >= 3: {3, 5, 3} -> 3/8;  <= 3: all but 5 -> 7/8;  |.| >= 3: {3, -3, 5, -5, 3, -3} -> 6/8.
    system = pd.Series({"a": 4.0, "b": 2.0, "c": 1.0})
    baseline = pd.Series({"c": 2.0, "b": 1.0, "a": 1.0})
    result = randomization_test(system, baseline, alternative=alternative)
    assert result.p_value == pytest.approx(expected)
    assert result.statistic == pytest.approx(1.0)
    assert result.mean_difference == pytest.approx(1.0)
    assert result.num_queries == 3


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("seed, n", [(4, 6), (5, 9), (6, 12)])
def test_exact_randomization_test_equals_scipy_permutation_test(alternative, seed, n):
    system, baseline = random_pair(seed, n, shift=0.08)
    result = randomization_test(system, baseline, alternative=alternative)  # 2^n <= 10000: exact
    expected = scipy_stats.permutation_test(
        (system.to_numpy(), baseline.to_numpy()),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        alternative=alternative,
        n_resamples=np.inf,
        vectorized=True,
    )
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)


def test_sampled_randomization_test_is_deterministic_and_corrected():
    system, baseline = random_pair(7, 14, shift=0.05)  # 2^14 = 16384 > num_permutations
    first = randomization_test(system, baseline, num_permutations=999, seed=11)
    again = randomization_test(system, baseline, num_permutations=999, seed=11)
    assert first == again
    # (count + 1) / (B + 1) with B = 999: a whole number of thousandths.
    assert first.p_value * 1000 == pytest.approx(round(first.p_value * 1000))
    exact = randomization_test(system, baseline, num_permutations=2**14)
    sampled = randomization_test(system, baseline, num_permutations=20000, seed=3)
    assert sampled.p_value == pytest.approx(exact.p_value, abs=0.015)
    # A sampled p-value is never 0, even when no flip is as extreme as the observation.
    large = randomization_test(series(np.full(30, 0.75)), series(np.zeros(30)), num_permutations=500)
    assert large.p_value == pytest.approx(1 / 501)


def test_randomization_test_without_differences_gives_p_one():
    values = series([0.1, 0.2, 0.3])
    assert randomization_test(values, values).p_value == 1.0


# --- bootstrap -------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_bootstrap_ci_equals_scipy_bootstrap(method):
    system, baseline = random_pair(8, 40)
    low, high = bootstrap_ci(system, baseline.iloc[::-1], confidence=0.9, num_resamples=2000, seed=5, method=method)
    expected = scipy_stats.bootstrap(
        ((system - baseline).to_numpy(),),
        np.mean,
        n_resamples=2000,
        confidence_level=0.9,
        method=method,
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert (low, high) == pytest.approx((expected.low, expected.high))
    assert low < (system - baseline).mean() < high


def test_bootstrap_ci_is_close_to_the_normal_interval_on_many_queries():
    rng = np.random.default_rng(9)
    difference = rng.normal(0.05, 0.2, 400)
    low, high = bootstrap_ci(series(difference), series(np.zeros(400)), num_resamples=4000)
    half_width = 1.96 * difference.std(ddof=1) / np.sqrt(400)
    assert low == pytest.approx(difference.mean() - half_width, abs=0.15 * half_width)
    assert high == pytest.approx(difference.mean() + half_width, abs=0.15 * half_width)
    assert bootstrap_ci(series(difference), series(np.zeros(400)), num_resamples=4000) == (low, high)


def test_bootstrap_ci_of_constant_difference_is_a_point():
    assert bootstrap_ci(series([0.5, 0.75]), series([0.25, 0.5])) == (0.25, 0.25)
    with pytest.raises(ConfigError):
        bootstrap_ci(series([0.5, 0.75]), series([0.25, 0.5]), method="studentized")


# --- dispatcher ------------------------------------------------------------------------


def test_paired_test_dispatches_by_name():
    system, baseline = random_pair(10, 12)
    assert paired_test("ttest", system, baseline) == paired_ttest(system, baseline)
    assert paired_test("wilcoxon", system, baseline, alternative="greater") == wilcoxon_test(
        system, baseline, alternative="greater"
    )
    assert paired_test("randomization", system, baseline, num_permutations=100, seed=1) == randomization_test(
        system, baseline, num_permutations=100, seed=1
    )
    with pytest.raises(ConfigError, match="unknown significance test 'sign'.*ttest, wilcoxon, randomization"):
        paired_test("sign", system, baseline)


# --- multiple comparisons --------------------------------------------------------------


def test_holm_by_hand():
    # p = [0.01, 0.04, 0.03], m = 3. Ascending: 0.01, 0.03, 0.04 times m - j + 1 = 3, 2, 1:
    # 0.03, 0.06, 0.04; running maximum: 0.03, 0.06, 0.06. In input order: [0.03, 0.06, 0.06].
    assert correct_p_values([0.01, 0.04, 0.03], "holm") == pytest.approx([0.03, 0.06, 0.06])
    # BH: ascending times m / j = 3, 3/2, 1: 0.03, 0.045, 0.04; running minimum from the
    # top: 0.03, 0.04, 0.04. In input order: [0.03, 0.04, 0.04].
    assert correct_p_values([0.01, 0.04, 0.03], "bh") == pytest.approx([0.03, 0.04, 0.04])
    assert correct_p_values([0.01, 0.04, 0.5], "bonferroni") == pytest.approx([0.03, 0.12, 1.0])
    assert correct_p_values([0.01, 0.04], "none") == pytest.approx([0.01, 0.04])


def test_nan_p_values_pass_through_and_do_not_count():
    adjusted = correct_p_values([np.nan, 0.01, 0.04, np.nan, 0.03], "holm")
    assert np.isnan(adjusted[[0, 3]]).all()
    assert adjusted[[1, 2, 4]] == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(correct_p_values([np.nan], "bh")).all()
    assert correct_p_values([], "holm").shape == (0,)


@pytest.mark.parametrize(
    "method, statsmodels_method", [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")]
)
@pytest.mark.parametrize("seed", range(4))
def test_corrections_equal_statsmodels(method, statsmodels_method, seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.2, 9) ** rng.uniform(0.5, 2)
    p[2] = p[5]  # a tie
    expected = multipletests(p, method=statsmodels_method)[1]
    assert correct_p_values(p, method) == pytest.approx(expected)
    with_nan = np.insert(p, [0, 4], np.nan)
    adjusted = correct_p_values(with_nan, method)
    assert np.isnan(adjusted[[0, 5]]).all()
    assert np.delete(adjusted, [0, 5]) == pytest.approx(expected)


def test_correction_rejects_unknown_methods_and_bad_p_values():
    with pytest.raises(ConfigError, match="unknown multiple-comparison correction 'fdr'"):
        correct_p_values([0.1], "fdr")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        correct_p_values([0.1, 1.5], "holm")


# --- parameter selection ---------------------------------------------------------------


def test_best_point_takes_the_first_of_ties():
    assert best_point(pd.Series({"mu~500": 0.3, "mu~1000": 0.4, "mu~2000": 0.4})) == "mu~1000"


def long_frame(table: dict[str, list[float]], measure: str | None = None) -> pd.DataFrame:
    """Long per-query frame from {params: values by query q00, q01, ...}."""
    rows = [
        {"qid": f"q{i:02d}", "params": params, "value": float(value)}
        for params, values in table.items()
        for i, value in enumerate(values)
    ]
    frame = pd.DataFrame(rows)
    if measure is not None:
        frame.insert(2, "measure", measure)
    return frame


def best_run(frame: pd.DataFrame) -> str:
    order = list(dict.fromkeys(frame["params"]))
    return best_point(frame.groupby("params", sort=False)["value"].mean().reindex(order))


def test_cv_equals_the_best_run_when_one_point_is_best_everywhere():
    rng = np.random.default_rng(12)
    base = rng.uniform(0, 0.8, 23)
    frame = long_frame({"mu~500": base, "mu~1000": base + 0.1, "mu~2000": base + 0.05})
    result = cross_validated_selection(frame, k=5)
    assert isinstance(result, CVResult)
    assert best_run(frame) == "mu~1000"
    assert set(result.chosen.values()) == {"mu~1000"} and result.num_folds == 5
    assert (result.query_params == "mu~1000").all()
    selected = apply_selection(long_frame({"mu~500": base, "mu~1000": base + 0.1}, measure="map"), result.query_params)
    assert selected.set_index("qid")["value"].to_dict() == pytest.approx(
        {f"q{i:02d}": v for i, v in enumerate(base + 0.1)}
    )


def test_cv_does_not_reward_a_point_that_wins_on_few_queries():
    # "steady" scores 0.5 everywhere. Each "lucky~j" scores 7/16 except 1 on query j:
    # mean 7/16 + (9/16) / 8 = 0.5078 > 0.5, so the best run is lucky~0 (first of the
    # ties; the values are dyadic, so the sums are exact whatever their order), an
    # overfit. In 4-fold CV (2 held-out queries) a lucky point whose lucky query is in
    # training has training mean (5 * 7/16 + 1) / 6 = 0.531 > 0.5 and is chosen, then
    # scores 7/16 on the held-out queries: the CV mean is 0.4375 < 0.5078.
    n = 8
    table = {"steady": [0.5] * n}
    for j in range(n):
        table[f"lucky~{j}"] = [1.0 if i == j else 7 / 16 for i in range(n)]
    frame = long_frame(table)
    assert best_run(frame) == "lucky~0"
    best_run_mean = frame[frame["params"] == "lucky~0"]["value"].mean()
    assert best_run_mean == pytest.approx(7 / 16 + 9 / 128)
    result = cross_validated_selection(frame, k=4, seed=1)
    assert all(params.startswith("lucky") for params in result.chosen.values())
    cv_values = apply_selection(frame.assign(measure="P_10"), result.query_params)
    assert len(cv_values) == n
    assert cv_values["value"].mean() == pytest.approx(7 / 16)
    assert cv_values["value"].mean() < best_run_mean


@pytest.mark.parametrize("num_queries, k", [(23, 5), (10, 3), (7, 7), (50, 10)])
def test_every_query_is_in_exactly_one_test_fold(num_queries, k):
    rng = np.random.default_rng(num_queries)
    frame = long_frame({"a": rng.uniform(size=num_queries), "b": rng.uniform(size=num_queries)})
    result = cross_validated_selection(frame, k=k, seed=3)
    qids = sorted(frame["qid"].unique())
    assert sorted(result.fold_of_query) == qids
    sizes = np.bincount(list(result.fold_of_query.values()), minlength=k)
    assert len(sizes) == k and sizes.sum() == num_queries and sizes.max() - sizes.min() <= 1
    assert list(result.query_params.index) == qids
    assert all(result.query_params[q] == result.chosen[result.fold_of_query[q]] for q in qids)
    # Deterministic for a seed; the split uses sorted qids, so row order does not matter.
    shuffled = frame.sample(frac=1, random_state=0)
    shuffled = shuffled.sort_values("params", kind="stable")  # keep point order a, b
    assert cross_validated_selection(shuffled, k=k, seed=3).fold_of_query == result.fold_of_query


def test_cv_falls_back_to_leave_one_out_and_says_so():
    frame = long_frame({"a": [0.1, 0.2, 0.3], "b": [0.3, 0.1, 0.1]})
    with pytest.warns(UserWarning, match="leave-one-out"):
        result = cross_validated_selection(frame, k=5)
    assert result.leave_one_out and result.num_folds == 3
    assert sorted(result.fold_of_query.values()) == [0, 1, 2]
    # Leaving out q00 (a 0.1, b 0.3): training means a 0.25, b 0.1 -> a; q01: a 0.2, b 0.2 -> a (tie,
    # first listed); q02: a 0.15, b 0.2 -> b.
    assert result.query_params.to_dict() == {"q00": "a", "q01": "a", "q02": "b"}


def test_cv_ties_go_to_the_first_point_in_input_order():
    frame = long_frame({"z": [0.2, 0.4, 0.6, 0.8], "a": [0.2, 0.4, 0.6, 0.8]})
    assert set(cross_validated_selection(frame, k=2).chosen.values()) == {"z"}


def test_cv_rejects_incomplete_grids():
    frame = long_frame({"a": [0.1, 0.2, 0.3], "b": [0.3, 0.1, 0.1]})
    with pytest.raises(ValueError, match="same queries"):
        cross_validated_selection(frame.iloc[:-1], k=2)
    with pytest.raises(ValueError, match="more than one value"):
        cross_validated_selection(pd.concat([frame, frame.iloc[:1]]), k=2)
    with pytest.raises(ConfigError, match="at least 2 folds"):
        cross_validated_selection(frame, k=1)


def test_apply_selection_takes_every_measure_of_the_chosen_point():
    frame = pd.concat(
        [
            long_frame({"a": [0.1, 0.2, 0.3], "b": [0.5, 0.6, 0.7]}, measure="map"),
            long_frame({"a": [1.0, 2.0, 3.0], "b": [5.0, 6.0, 7.0]}, measure="ndcg"),
        ]
    )
    query_params = pd.Series({"q00": "a", "q01": "b", "q02": "a"})
    selected = apply_selection(frame, query_params)
    assert list(selected.columns) == ["qid", "measure", "value"]
    values = selected.set_index(["measure", "qid"])["value"].to_dict()
    assert values == {
        ("map", "q00"): 0.1, ("map", "q01"): 0.6, ("map", "q02"): 0.3,
        ("ndcg", "q00"): 1.0, ("ndcg", "q01"): 6.0, ("ndcg", "q02"): 3.0,
    }  # fmt: skip
    with pytest.raises(ValueError, match="different query sets"):
        apply_selection(frame, query_params.iloc[:2])
    with pytest.raises(ValueError, match=r"measure 'ndcg' has no value at the chosen point for queries \['q01'\]"):
        apply_selection(frame[~((frame["qid"] == "q01") & (frame["measure"] == "ndcg"))], query_params)
    # q01's map is only at the point not chosen for it: map lacks q01 (ndcg is complete)
    lacking_map = frame[~((frame["qid"] == "q01") & (frame["measure"] == "map") & (frame["params"] == "b"))]
    with pytest.raises(ValueError, match=r"measure 'map' has no value at the chosen point for queries \['q01'\]"):
        apply_selection(lacking_map, query_params)
    with pytest.raises(ValueError, match=r"measures \['ndcg'\] have no value at any chosen point"):
        apply_selection(pd.concat([frame[frame["measure"] == "map"], long_frame({"c": [1.0, 2.0, 3.0]}, "ndcg")]),
                        query_params)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_choice_for_a_fold_never_depends_on_its_own_queries(data):
    num_queries = data.draw(st.integers(2, 12), label="num_queries")
    num_points = data.draw(st.integers(1, 4), label="num_points")
    k = data.draw(st.integers(2, 6), label="k")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    unit = st.floats(0, 1, allow_nan=False)
    values = data.draw(
        st.lists(st.lists(unit, min_size=num_queries, max_size=num_queries), min_size=num_points, max_size=num_points)
    )
    frame = long_frame({f"p~{j}": row for j, row in enumerate(values)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # leave-one-out when k > num_queries
        result = cross_validated_selection(frame, k=k, seed=seed)
        fold = data.draw(st.integers(0, result.num_folds - 1), label="fold")
        held_out = [q for q, f in result.fold_of_query.items() if f == fold]
        changed = frame.copy()
        rows = changed["qid"].isin(held_out)
        changed.loc[rows, "value"] = data.draw(st.lists(unit, min_size=int(rows.sum()), max_size=int(rows.sum())))
        again = cross_validated_selection(changed, k=k, seed=seed)
    assert again.fold_of_query == result.fold_of_query
    assert again.chosen[fold] == result.chosen[fold]


# --- correlation -----------------------------------------------------------------------


def test_spearman_by_hand():
    # Ranks x = 1..5, y = 2,1,4,3,5: d = -1,1,-1,1,0, sum d^2 = 4,
    # rho = 1 - 6 * 4 / (5 * (25 - 1)) = 0.8. p from t = rho sqrt((n - 2) / (1 - rho^2))
    # = 0.8 * sqrt(3 / 0.36) = 2.3094 with 3 df: two-sided p = 0.1041.
    rho, p = spearman([1, 2, 3, 4, 5], [20, 10, 40, 30, 50])
    assert rho == pytest.approx(0.8)
    assert p == pytest.approx(2 * scipy_stats.t.sf(0.8 * np.sqrt(3 / 0.36), 3))
    assert p == pytest.approx(0.1041, abs=1e-4)
    # Series pair by index, not position.
    x = pd.Series({"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "e": 5.0})
    y = pd.Series({"e": 50.0, "d": 30.0, "c": 40.0, "b": 10.0, "a": 20.0})
    assert spearman(x, y) == pytest.approx((rho, p))
    assert all(np.isnan(spearman([1, 2, 3], [1, 1, 1])))
    with pytest.raises(ValueError):
        spearman([1, 2, 3], [1, 2])


def test_align_sorts_by_qid_and_names_the_queries_without_a_value():
    system = pd.Series({"q2": 0.2, "q1": 0.1, "q3": 0.3})
    baseline = pd.Series({"q1": 0.5, "q3": float("nan"), "q2": 0.4}).astype(float)
    with pytest.raises(ValueError, match=r"missing \(NaN\) per-query values for queries \['q3'\]"):
        align(system, baseline)
    a, b = align(system, baseline.fillna(0.6))
    assert a.tolist() == [0.1, 0.2, 0.3] and b.tolist() == [0.5, 0.4, 0.6]
    with pytest.raises(ValueError, match=r"only in system \['q3'\], only in baseline \['q4'\]"):
        align(system, pd.Series({"q1": 0.5, "q2": 0.4, "q4": 0.1}))
