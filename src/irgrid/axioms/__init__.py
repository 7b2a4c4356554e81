"""The constraint-violation analysis of the axiomatic papers, apart from the engine.

:mod:`~irgrid.axioms.counting` counts violations of C1-C4 in one run (prefix scores of each
top document, docs/axioms.md); :mod:`~irgrid.axioms.experiment` runs it over an experiment's best
runs and writes the violation tables and Spearman's rho against effectiveness.
"""

from .counting import (
    CONSTRAINTS,
    analyse_run,
    analyse_runs,
    batch_count_violations,
    batch_prefix_scores,
    count_violations,
    prefix_layout,
    prefix_scores,
    summarise_violations,
    violations_from_scores,
)

__all__ = [
    "CONSTRAINTS",
    "analyse_run",
    "analyse_runs",
    "batch_count_violations",
    "batch_prefix_scores",
    "count_violations",
    "prefix_layout",
    "prefix_scores",
    "summarise_violations",
    "violations_from_scores",
]
