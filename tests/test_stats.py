import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from irgrid.stats import best_point, paired_ttest


def test_paired_ttest_equals_scipy_on_aligned_queries():
    system = pd.Series({"1": 0.5, "2": 0.3, "3": 0.9, "4": 0.2})
    # Same queries, other order: the test must align by qid, not by position.
    baseline = pd.Series({"4": 0.1, "3": 0.7, "2": 0.35, "1": 0.4})
    result = paired_ttest(system, baseline)
    expected = scipy_stats.ttest_rel([0.5, 0.3, 0.9, 0.2], [0.4, 0.35, 0.7, 0.1])
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.statistic == pytest.approx(expected.statistic)
    assert result.mean_difference == pytest.approx(np.mean([0.1, -0.05, 0.2, 0.1]))


def test_paired_ttest_by_hand():
    # differences 1, 2, 3: mean 2, sd 1, t = 2 / (1 / sqrt 3) = 3.4641; two-sided p with 2 df = 0.0742
    result = paired_ttest(pd.Series({"a": 2.0, "b": 3.0, "c": 4.0}), pd.Series({"a": 1.0, "b": 1.0, "c": 1.0}))
    assert result.statistic == pytest.approx(2 * np.sqrt(3))
    assert result.p_value == pytest.approx(0.07418, abs=1e-4)


def test_identical_systems_have_p_one_and_different_queries_raise():
    values = pd.Series({"1": 0.1, "2": 0.2})
    assert paired_ttest(values, values).p_value == 1.0
    with pytest.raises(ValueError, match="different query sets"):
        paired_ttest(values, pd.Series({"1": 0.1, "3": 0.2}))


def test_best_point_takes_the_first_of_ties():
    assert best_point(pd.Series({"mu~500": 0.3, "mu~1000": 0.4, "mu~2000": 0.4})) == "mu~1000"
