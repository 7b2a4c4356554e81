"""Paired significance tests on per-query values, and best-run parameter selection.

Every test aligns the two systems' values by query id over the judged queries
(both systems must have a value for the same queries: evaluation gives every
judged query a value, so a mismatch is a bug upstream and raises).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float
    mean_difference: float
    num_queries: int


def align(system: pd.Series, baseline: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values of two systems (Series indexed by qid) on the same queries, same order."""
    if set(system.index) != set(baseline.index):
        only_system = sorted(set(system.index) - set(baseline.index))[:5]
        only_baseline = sorted(set(baseline.index) - set(system.index))[:5]
        raise ValueError(
            "paired test on different query sets: "
            f"only in system {only_system}, only in baseline {only_baseline}"
        )
    qids = sorted(system.index)
    return system.loc[qids].to_numpy(dtype=float), baseline.loc[qids].to_numpy(dtype=float)


def paired_ttest(system: pd.Series, baseline: pd.Series, alternative: str = "two-sided") -> TestResult:
    """Student's paired t-test of system against baseline (scipy.stats.ttest_rel).

    Identical per-query values give p = 1 (scipy returns nan: no evidence of a
    difference is the honest reading).
    """
    a, b = align(system, baseline)
    difference = a - b
    if len(a) < 2 or np.allclose(difference, difference[0] if len(difference) else 0.0):
        statistic, p_value = 0.0, 1.0
        if len(a) >= 2 and not np.isclose(difference[0], 0.0):
            # A constant non-zero difference: the t statistic is infinite.
            statistic, p_value = float(np.sign(difference[0]) * np.inf), 0.0
    else:
        result = scipy_stats.ttest_rel(a, b, alternative=alternative)
        statistic, p_value = float(result.statistic), float(result.pvalue)
    return TestResult(statistic, p_value, float(difference.mean()) if len(a) else 0.0, len(a))


def best_point(means: pd.Series) -> str:
    """The parameter point with the highest mean; ties go to the first listed (grid order)."""
    if means.empty:
        raise ValueError("no parameter point to choose from")
    return str(means.idxmax())
