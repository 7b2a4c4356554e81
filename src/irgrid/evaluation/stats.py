"""Paired significance tests on per-query values, multiple-comparison corrections and
parameter selection (best run and cross-validated).

Inputs are per-query values of one measure for one system: a ``pd.Series`` indexed by
query id over the judged queries. Every paired test aligns the two systems' values by
query id (:func:`align`), never by position: two evaluation files list the same queries,
but nothing promises the same order, and pairing query 5 of one system with query 7 of
the other would silently test noise. Both systems must have a value for the same
queries: evaluation gives every judged query a value (0 when nothing was retrieved), so
a mismatch is a bug upstream and raises instead of being "fixed" by dropping queries.

``alternative`` always refers to the difference ``system - baseline``: ``"greater"``
tests whether the system is better than the baseline (for measures where higher is
better), ``"less"`` whether it is worse, ``"two-sided"`` whether they differ.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConfigError

ALTERNATIVES = ("two-sided", "greater", "less")
CORRECTION_METHODS = ("holm", "bonferroni", "bh", "none")
WILCOXON_ZERO_METHODS = ("wilcox", "pratt", "zsplit")


@dataclass(frozen=True)
class TestResult:
    """Outcome of a paired test of a system against a baseline on the same queries.

    ``mean_difference`` is the mean over queries of ``system - baseline`` whatever the
    test (so tables report one effect size for every test), ``num_queries`` the number
    of paired queries (including those with a zero difference).
    """

    __test__ = False  # not a pytest test class, despite the name

    statistic: float
    p_value: float
    mean_difference: float
    num_queries: int


def align(system: pd.Series, baseline: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values of two systems (Series indexed by qid) on the same queries, same order.

    The queries are sorted by qid, so the result does not depend on the order of the
    inputs. Different query sets, a qid listed twice or a missing (NaN) value raise
    ``ValueError``: a paired test is only meaningful on one value per query per system.
    """
    for name, values in (("system", system), ("baseline", baseline)):
        if values.index.has_duplicates:
            duplicated = sorted(values.index[values.index.duplicated()].unique())[:5]
            raise ValueError(f"paired test: {name} lists queries more than once: {duplicated}")
    # The qids as one Python list each (tolist), not iterated one by one out of an Arrow-backed
    # index: tables and findings align every model with the baseline on every row and measure.
    system_qids, baseline_qids = system.index.tolist(), baseline.index.tolist()
    if set(system_qids) != set(baseline_qids):
        only_system = sorted(set(system_qids) - set(baseline_qids))[:5]
        only_baseline = sorted(set(baseline_qids) - set(system_qids))[:5]
        raise ValueError(
            "paired test on different query sets: "
            f"only in system {only_system}, only in baseline {only_baseline}"
        )
    qids = sorted(system_qids)
    a = system.loc[qids].to_numpy(dtype=float)
    b = baseline.loc[qids].to_numpy(dtype=float)
    missing = np.flatnonzero(np.isnan(a) | np.isnan(b))
    if len(missing):
        raise ValueError(f"paired test: missing (NaN) per-query values for queries {[qids[i] for i in missing[:5]]}")
    return a, b


def _scipy_stats():
    """scipy.stats, imported on first use: the import is slow, and the jobs that only
    select parameter points or draw figures from this module never test anything."""
    # deferred: scipy is imported only by the tests that need it
    from scipy import stats

    return stats


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ConfigError(f"unknown alternative {alternative!r}: expected one of {', '.join(ALTERNATIVES)}")


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else 0.0


def paired_ttest(system: pd.Series, baseline: pd.Series, alternative: str = "two-sided") -> TestResult:
    """Student's paired t-test of system against baseline (scipy.stats.ttest_rel).

    Degenerate cases that scipy answers with nan or a warning get their limiting value:
    identical per-query values (or fewer than two queries) give statistic 0 and p = 1
    (no evidence of a difference is the honest reading); a constant non-zero difference
    gives an infinite statistic, p = 0 when the alternative points its way (or is
    two-sided) and p = 1 otherwise.
    """
    _check_alternative(alternative)
    a, b = align(system, baseline)
    difference = a - b
    if len(a) < 2 or np.allclose(difference, difference[0]):
        statistic, p_value = 0.0, 1.0
        if len(a) >= 2 and not np.isclose(difference[0], 0.0):
            # A constant non-zero difference: the t statistic is infinite.
            sign = float(np.sign(difference[0]))
            statistic = sign * np.inf
            agrees = alternative == "two-sided" or (alternative == "greater") == (sign > 0)
            p_value = 0.0 if agrees else 1.0
    else:
        result = _scipy_stats().ttest_rel(a, b, alternative=alternative)
        statistic, p_value = float(result.statistic), float(result.pvalue)
    return TestResult(statistic, p_value, _mean(difference), len(a))


def wilcoxon_test(
    system: pd.Series,
    baseline: pd.Series,
    alternative: str = "two-sided",
    zero_method: str = "wilcox",
) -> TestResult:
    """Wilcoxon signed-rank test of system against baseline (scipy.stats.wilcoxon).

    Zero differences (queries where both systems score the same, typically both 0 when
    neither retrieves a relevant document) are discarded by default (``"wilcox"``,
    Wilcoxon's original convention). That is the default of scipy and of R's
    ``wilcox.test``, which is what IR papers and toolkits built on them (ranx, trectools)
    report, so our p-values are comparable with theirs; a tied query also says nothing
    about which system is better. ``"pratt"`` (rank the zeros, then drop their ranks;
    more conservative when many queries tie) and ``"zsplit"`` are available.

    ``statistic`` is scipy's: min(R+, R-) for a two-sided test, R+ for a one-sided one;
    ``num_queries`` counts all paired queries, zeros included. With no non-zero
    difference at all the test has nothing to rank: statistic 0, p = 1.
    """
    _check_alternative(alternative)
    if zero_method not in WILCOXON_ZERO_METHODS:
        raise ConfigError(
            f"unknown Wilcoxon zero_method {zero_method!r}: expected one of {', '.join(WILCOXON_ZERO_METHODS)}"
        )
    a, b = align(system, baseline)
    difference = a - b
    if not np.any(difference != 0):
        return TestResult(0.0, 1.0, _mean(difference), len(a))
    result = _scipy_stats().wilcoxon(a, b, zero_method=zero_method, alternative=alternative)
    return TestResult(float(result.statistic), float(result.pvalue), _mean(difference), len(a))


def _sign_matrices(n: int, num_permutations: int, seed: int | None) -> tuple[bool, Any]:
    """(exact, iterator of ±1 matrices with n columns) for the sign-flip test.

    Exact: all 2**n sign vectors (the identity among them). Sampled: num_permutations
    random sign vectors drawn from numpy's default_rng(seed), in blocks of at most about
    a million entries so memory stays bounded for large query sets.
    """
    if 2**n <= num_permutations:
        codes = np.arange(2**n, dtype=np.int64)[:, None]
        bits = (codes >> np.arange(n, dtype=np.int64)[None, :]) & 1
        return True, iter([1.0 - 2.0 * bits])
    rng = np.random.default_rng(seed)
    block = max(1, 1_000_000 // max(n, 1))

    def blocks():
        for start in range(0, num_permutations, block):
            rows = min(block, num_permutations - start)
            yield 1.0 - 2.0 * rng.integers(0, 2, size=(rows, n))

    return False, blocks()


def randomization_test(
    system: pd.Series,
    baseline: pd.Series,
    alternative: str = "two-sided",
    num_permutations: int = 10000,
    seed: int | None = 0,
) -> TestResult:
    """Paired randomization (sign-flip permutation) test of the mean difference.

    Under the null hypothesis the two systems are exchangeable on every query, so each
    per-query difference is as likely to have the opposite sign: the null distribution
    of the mean difference is that of ``mean(s * d)`` over sign vectors ``s``
    (Fisher's randomization test; Smucker, Allan & Carterette, CIKM 2007, for IR).

    - Exact when ``2**n <= num_permutations``: all 2**n sign vectors are enumerated and
      p = (number with a statistic at least as extreme) / 2**n (the identity included).
    - Otherwise ``num_permutations`` random sign vectors from ``default_rng(seed)``
      (deterministic for a seed) and p = (count + 1) / (B + 1), which counts the observed
      assignment and never gives p = 0 (Phipson & Smyth, 2010).

    "At least as extreme": ``>= observed`` (greater), ``<= observed`` (less), ``|.| >=
    |observed|`` (two-sided; the sign-flip distribution is symmetric, so exactly this is
    twice the one-sided p, as scipy.stats.permutation_test computes it). Comparisons
    allow a relative 1e-9 of the mean |difference| so floating-point noise in sums of
    the same values (0.1 + 0.2 vs 0.3) does not decide a tie.

    ``statistic`` is the observed mean difference.
    """
    _check_alternative(alternative)
    if num_permutations < 1:
        raise ConfigError(f"num_permutations must be at least 1, got {num_permutations}")
    a, b = align(system, baseline)
    difference = a - b
    n = len(difference)
    observed = _mean(difference)
    if n == 0 or not np.any(difference != 0):
        return TestResult(observed, 1.0, observed, n)
    tolerance = 1e-9 * float(np.abs(difference).mean())
    exact, matrices = _sign_matrices(n, num_permutations, seed)
    count = 0
    total = 0
    for signs in matrices:
        null = signs @ difference / n
        if alternative == "greater":
            extreme = null >= observed - tolerance
        elif alternative == "less":
            extreme = null <= observed + tolerance
        else:
            extreme = np.abs(null) >= abs(observed) - tolerance
        count += int(extreme.sum())
        total += len(null)
    p_value = count / total if exact else (count + 1) / (total + 1)
    return TestResult(observed, min(1.0, p_value), observed, n)


def bootstrap_ci(
    system: pd.Series,
    baseline: pd.Series,
    confidence: float = 0.95,
    num_resamples: int = 10000,
    seed: int | None = 0,
    method: str = "BCa",
) -> tuple[float, float]:
    """Bootstrap confidence interval (low, high) of the mean paired difference.

    Resamples queries with replacement (the paired differences ``system - baseline``,
    aligned by qid) via scipy.stats.bootstrap with ``rng=default_rng(seed)``, so the
    interval is deterministic for a seed. Default method BCa (bias-corrected and
    accelerated, scipy's default): per-query differences of IR measures are bounded and
    often skewed (many ties near 0, a few large gains), where BCa's coverage is better
    than the plain percentile interval; ``"percentile"`` and ``"basic"`` are available.

    Constant differences (or a single query) make the bootstrap distribution a single
    point, where BCa is undefined: the interval is then (d, d).
    """
    if method not in ("BCa", "percentile", "basic"):
        raise ConfigError(f"unknown bootstrap method {method!r}: expected BCa, percentile or basic")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be between 0 and 1, got {confidence}")
    a, b = align(system, baseline)
    difference = a - b
    if len(difference) == 0:
        raise ValueError("bootstrap confidence interval of no queries")
    if np.all(difference == difference[0]):
        return float(difference[0]), float(difference[0])
    result = _scipy_stats().bootstrap(
        (difference,),
        np.mean,
        n_resamples=num_resamples,
        confidence_level=confidence,
        method=method,
        batch=max(1, 1_000_000 // len(difference)),
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


PAIRED_TESTS = {"ttest": paired_ttest, "wilcoxon": wilcoxon_test, "randomization": randomization_test}


def paired_test(name: str, system: pd.Series, baseline: pd.Series, **kwargs: Any) -> TestResult:
    """Run the paired test called ``name`` ("ttest", "wilcoxon", "randomization").

    ``kwargs`` go to the test (``alternative`` for all; ``zero_method`` for wilcoxon;
    ``num_permutations`` and ``seed`` for randomization). An unknown name, as written
    in a table specification, raises ConfigError listing the known ones.
    """
    try:
        test = PAIRED_TESTS[name]
    except (KeyError, TypeError):
        raise ConfigError(
            f"unknown significance test {name!r}: expected one of {', '.join(PAIRED_TESTS)}"
        ) from None
    return test(system, baseline, **kwargs)


def correct_p_values(p_values: Sequence[float], method: str = "holm") -> np.ndarray:
    """Adjust p-values for multiple comparisons; returns adjusted p-values in input order.

    A table compares several systems with one baseline: testing each at alpha inflates
    the chance of some false "significant" mark, so the p-values of one family are
    adjusted together.

    - ``"bonferroni"``: ``min(1, m p)`` (controls the family-wise error rate).
    - ``"holm"``: step-down Bonferroni, ``p_(i)`` in ascending order becomes
      ``max_{j<=i} min(1, (m - j + 1) p_(j))`` (same guarantee, uniformly more powerful).
    - ``"bh"``: Benjamini-Hochberg, ``min_{j>=i} min(1, m p_(j) / j)`` (controls the
      false discovery rate).
    - ``"none"``: unchanged.

    NaN entries (e.g. the baseline's own row, which is not tested) stay NaN and do not
    count in m. Matches statsmodels' multipletests (holm, bonferroni, fdr_bh).
    """
    if method not in CORRECTION_METHODS:
        raise ConfigError(
            f"unknown multiple-comparison correction {method!r}: expected one of {', '.join(CORRECTION_METHODS)}"
        )
    p = np.array(p_values, dtype=float).reshape(-1)
    adjusted = np.full_like(p, np.nan)
    tested = ~np.isnan(p)
    values = p[tested]
    if np.any((values < 0) | (values > 1)):
        raise ValueError(f"p-values must lie in [0, 1], got {values[(values < 0) | (values > 1)][:5].tolist()}")
    m = len(values)
    if m == 0:
        return adjusted
    if method == "none":
        result = values.copy()
    elif method == "bonferroni":
        result = np.minimum(1.0, m * values)
    else:
        order = np.argsort(values, kind="stable")
        ranked = values[order]
        rank = np.arange(1, m + 1)
        if method == "holm":
            stepped = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
        else:  # bh
            stepped = np.minimum.accumulate(np.minimum(1.0, m * ranked / rank)[::-1])[::-1]
        result = np.empty(m)
        result[order] = stepped
    adjusted[tested] = result
    return adjusted


def best_point(means: pd.Series) -> str:
    """The parameter point with the highest mean; ties go to the first listed (grid order)."""
    if means.empty:
        raise ValueError("no parameter point to choose from")
    return str(means.idxmax())


@dataclass(frozen=True, eq=False)
class CVResult:
    """Cross-validated parameter selection.

    - ``chosen``: fold index -> params chosen on the other folds (applied to this fold);
    - ``fold_of_query``: qid -> the fold whose test set holds it (exactly one per query);
    - ``query_params``: Series qid -> params applied to that query (``chosen`` of its fold),
      sorted by qid.
    """

    chosen: dict[int, str]
    fold_of_query: dict[Any, int]
    query_params: pd.Series

    @property
    def num_folds(self) -> int:
        return len(self.chosen)

    @property
    def leave_one_out(self) -> bool:
        return self.num_folds == len(self.fold_of_query)


def _point_table(per_query: pd.DataFrame, value_column: str) -> pd.DataFrame:
    """qid x params table of the selection measure, columns in input order; checks completeness."""
    missing_columns = {"qid", "params", value_column} - set(per_query.columns)
    if missing_columns:
        raise ValueError(f"per-query values lack columns {sorted(missing_columns)}")
    duplicated = per_query.duplicated(["qid", "params"])
    if duplicated.any():
        first = per_query.loc[duplicated, ["qid", "params"]].iloc[0]
        raise ValueError(f"query {first['qid']!r} has more than one value for point {first['params']!r}")
    points = list(pd.unique(per_query["params"]))
    table = per_query.pivot(index="qid", columns="params", values=value_column)
    table = table.reindex(index=sorted(table.index), columns=points)
    if table.isna().to_numpy().any():
        column = table.columns[table.isna().any()][0]
        lacking = list(table.index[table[column].isna()])[:5]
        raise ValueError(
            f"all points must be evaluated on the same queries: point {column!r} has no value for queries {lacking}"
        )
    return table.astype(float)


def cross_validated_selection(
    per_query: pd.DataFrame, measure_values_column: str = "value", k: int = 5, seed: int = 0
) -> CVResult:
    """Choose a parameter point by k-fold cross-validation over queries.

    Choosing the best point on all queries and reporting its mean on the same queries
    overstates what the model would do on new queries (it rewards points that got lucky
    on a few of them). Instead the queries are split into k folds and each fold gets the
    point with the best mean on the OTHER folds; the resulting per-query values
    (:func:`apply_selection`) are an honest estimate and the ones to test.

    ``per_query`` has columns ``qid``, ``params`` (the encoded point) and
    ``measure_values_column`` (the selection measure), one row per query and point, all
    points on the same queries. Folds: the sorted unique qids shuffled with
    ``numpy.random.default_rng(seed)`` then ``np.array_split`` into k parts, so the split
    depends only on the query set and the seed, never on the values. If k exceeds the
    number of queries, leave-one-out is used instead (with a warning). Ties between
    points go to the first in the order the points appear in the input (grid order).
    """
    if k < 2:
        raise ConfigError(f"cross-validation needs at least 2 folds, got k={k}")
    table = _point_table(per_query, measure_values_column)
    qids = list(table.index)
    if len(qids) < 2:
        raise ValueError(f"cross-validation needs at least 2 queries, got {len(qids)}")
    if k > len(qids):
        warnings.warn(
            f"k={k} folds but only {len(qids)} queries: using leave-one-out ({len(qids)} folds)",
            stacklevel=2,
        )
        k = len(qids)
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(len(qids))
    folds = np.array_split(shuffled, k)
    fold_of_position = np.empty(len(qids), dtype=int)
    for fold, positions in enumerate(folds):
        fold_of_position[positions] = fold
    values = table.to_numpy()
    chosen: dict[int, str] = {}
    for fold in range(k):
        training = fold_of_position != fold
        means = pd.Series(values[training].mean(axis=0), index=table.columns)
        chosen[fold] = best_point(means)
    fold_of_query = {qid: int(fold) for qid, fold in zip(qids, fold_of_position)}
    query_params = pd.Series(
        [chosen[fold_of_query[qid]] for qid in qids], index=pd.Index(qids, name="qid"), name="params"
    )
    return CVResult(chosen, fold_of_query, query_params)


def apply_selection(per_query_all_measures: pd.DataFrame, query_params: pd.Series) -> pd.DataFrame:
    """Per-query values of the cross-validated selection: columns qid, measure, value.

    For each query, the rows of the point chosen for its fold (``query_params``, e.g.
    ``CVResult.query_params``), for every measure; rows keep their input order. Every
    query must have a value for every measure at its point, and the query sets must
    match (a query outside the selection would have no point).
    """
    required = {"qid", "params", "measure", "value"}
    if required - set(per_query_all_measures.columns):
        raise ValueError(f"per-query values lack columns {sorted(required - set(per_query_all_measures.columns))}")
    if query_params.index.has_duplicates:
        raise ValueError("query_params lists a query more than once")
    frame = per_query_all_measures
    # Sets of the distinct values (unique), not of every row: a model's values hold each qid once
    # per point and measure, and building a set from an Arrow-backed column one element at a time
    # was most of a cross-validated table's time.
    all_qids = set(frame["qid"].unique())
    selected_qids = set(query_params.index)
    if all_qids != selected_qids:
        raise ValueError(
            "selection and per-query values on different query sets: "
            f"only in values {sorted(all_qids - selected_qids)[:5]}, "
            f"only in selection {sorted(selected_qids - all_qids)[:5]}"
        )
    wanted = frame["qid"].map(query_params)
    selected = frame.loc[frame["params"] == wanted, ["qid", "measure", "value"]].reset_index(drop=True)
    if selected.duplicated(["qid", "measure"]).any():
        raise ValueError("a query has more than one value for a measure at its chosen point")
    # Without duplicates, and with every qid one of the selection's, a measure lacks a query exactly
    # when it has fewer rows than there are queries: only those measures need their sets.
    rows_per_measure = selected.groupby("measure", sort=False).size()
    for measure in rows_per_measure.index[rows_per_measure.to_numpy() < len(selected_qids)]:
        lacking = sorted(selected_qids - set(selected.loc[selected["measure"] == measure, "qid"].unique()))
        raise ValueError(f"measure {measure!r} has no value at the chosen point for queries {lacking[:5]}")
    lacking_measures = set(frame["measure"].unique()) - set(selected["measure"].unique())
    if lacking_measures:
        raise ValueError(f"measures {sorted(lacking_measures)} have no value at any chosen point")
    return selected


def spearman(x: Sequence[float] | pd.Series, y: Sequence[float] | pd.Series) -> tuple[float, float]:
    """Spearman rank correlation (rho, two-sided p) via scipy.stats.spearmanr.

    Two Series are aligned by index first (like the paired tests: e.g. per-point means
    of two collections, paired by point); other inputs pair by position and must have
    the same length. A constant input has no ranking to correlate: (nan, nan).
    """
    if isinstance(x, pd.Series) and isinstance(y, pd.Series):
        a, b = align(x, y)
    else:
        a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if a.shape != b.shape or a.ndim != 1:
            raise ValueError(f"spearman needs two sequences of the same length, got {a.shape} and {b.shape}")
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan"), float("nan")
    result = _scipy_stats().spearmanr(a, b)
    return float(result.statistic), float(result.pvalue)


#: spearman_test enumerates every pairing up to this many points (8! = 40,320 pairings).
EXACT_SPEARMAN_MAX_POINTS = 8


@dataclass(frozen=True)
class SpearmanTest:
    """Spearman's rho with its p-values for each alternative.

    ``p_less`` is the probability, under independence, of a rho at most the observed one (the
    alternative "inversely correlated"), ``p_greater`` of one at least it, ``p_two_sided`` of
    one at least as far from 0. ``method`` is ``exact`` (every pairing of the points enumerated)
    or ``asymptotic`` (scipy's t approximation). ``min_p_one_sided`` is the smallest one-sided
    p-value any ordering of these points can give: with 5 points it is 1/120, and only a rho of
    -0.9 or less reaches p <= 0.05 on the lower side.
    """

    rho: float
    p_less: float
    p_greater: float
    p_two_sided: float
    num_points: int
    method: str
    min_p_one_sided: float


def spearman_test(x: Sequence[float], y: Sequence[float],
                  max_exact: int = EXACT_SPEARMAN_MAX_POINTS) -> SpearmanTest:
    """Spearman's rho of ``x`` and ``y`` (paired by position) and its permutation p-values.

    Up to ``max_exact`` points, the p-values are exact: the ranks of ``y`` (mid-ranks for ties)
    are paired with those of ``x`` in every one of the n! orders, and a p-value is the share of
    orders whose rho is as extreme as the observed one (within 1e-12, so equal rhos count).
    Beyond that, scipy's t approximation. With few points the exact distribution is coarse
    (n = 5: 120 orders), which is why it is used instead of the approximation there. A constant
    input has no ranking: rho and the p-values are nan.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"spearman_test needs two sequences of the same length, got {a.shape} and {b.shape}")
    n = len(a)
    if n < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        nan = float("nan")
        return SpearmanTest(nan, nan, nan, nan, n, "exact" if n <= max_exact else "asymptotic", nan)
    scipy_stats = _scipy_stats()
    if n > max_exact:
        rho = float(scipy_stats.spearmanr(a, b).statistic)
        p = {alternative: float(scipy_stats.spearmanr(a, b, alternative=alternative).pvalue)
             for alternative in ALTERNATIVES}
        return SpearmanTest(rho, p["less"], p["greater"], p["two-sided"], n, "asymptotic", float("nan"))
    # rho is Pearson's r of the ranks; centred, its denominator is the same for every pairing
    rank_x = scipy_stats.rankdata(a) - (n + 1) / 2
    rank_y = scipy_stats.rankdata(b) - (n + 1) / 2
    scale = np.sqrt((rank_x @ rank_x) * (rank_y @ rank_y))
    orders = np.array(list(permutations(range(n))), dtype=np.int64)
    rhos = (rank_y[orders] @ rank_x) / scale
    rho = float(rank_x @ rank_y / scale)
    tolerance = 1e-12
    return SpearmanTest(
        rho,
        float(np.mean(rhos <= rho + tolerance)),
        float(np.mean(rhos >= rho - tolerance)),
        float(np.mean(np.abs(rhos) >= abs(rho) - tolerance)),
        n,
        "exact",
        float(np.mean(rhos <= rhos.min() + tolerance)),
    )


__all__ = [
    "ALTERNATIVES",
    "EXACT_SPEARMAN_MAX_POINTS",
    "SpearmanTest",
    "CORRECTION_METHODS",
    "CVResult",
    "PAIRED_TESTS",
    "TestResult",
    "align",
    "apply_selection",
    "best_point",
    "bootstrap_ci",
    "correct_p_values",
    "cross_validated_selection",
    "paired_test",
    "paired_ttest",
    "randomization_test",
    "spearman",
    "spearman_test",
    "wilcoxon_test",
]
