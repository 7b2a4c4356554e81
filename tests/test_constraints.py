"""The experiment-level summary of constraint violations (the counting itself: test_axioms.py)."""

import pandas as pd
import pytest
from scipy import stats as scipy_stats

from irgrid.axioms.experiment import violation_summary, violation_tables, violations_per_document
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
