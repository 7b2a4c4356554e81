"""Equal tuning budgets in the default experiments: a verdict is only as fair as the grids behind it.

- every parameter a model shares with its experiment's baseline (the Dirichlet mu of UG and ADM)
  is swept over the same values for both;
- every baseline is tuned over at least the range that its family (or a family ranking as it,
  e.g. KL divergence as Dirichlet query likelihood) gets anywhere in the project.

The rules are read from the experiment files as a reviewer would check them by hand.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from irgrid.models import get_model


@pytest.fixture
def experiments(default_experiments) -> dict:
    return default_experiments


def values(model: dict, parameter: str) -> list[float] | None:
    grid = model.get("grid", {})
    if parameter not in grid:
        return None
    listed = grid[parameter]
    return sorted({float(value) for value in (listed if isinstance(listed, list) else [listed])})


def ranking_family(family: str) -> str:
    return get_model(family).ranks_as or family


#: (family, parameter) whose name another family uses for something else: ES's c weighs its length
#: term, DFR's c is Normalisation 2's; they are not one parameter to sweep alike
OTHER_MEANING = {("es", "c")}


def unequal_shared_values(experiments: dict) -> list[str]:
    unequal = []
    for name, experiment in experiments.items():
        baseline = experiment["models"][experiment["baseline"]]
        for parameter in baseline.get("grid", {}):
            expected = values(baseline, parameter)
            for model_name, model in experiment["models"].items():
                if (model["family"], parameter) in OTHER_MEANING:
                    continue
                found = values(model, parameter)
                if found is not None and len(expected) > 1 and found != expected:
                    unequal.append(f"{name}: {model_name}.{parameter} {found} != baseline {expected}")
    return unequal


def short_baselines(experiments: dict) -> list[str]:
    ranges: dict[tuple[str, str], list[float]] = defaultdict(list)
    for experiment in experiments.values():
        for model in experiment["models"].values():
            for parameter in model.get("grid", {}):
                ranges[(ranking_family(model["family"]), parameter)].extend(values(model, parameter))
    short = []
    for name, experiment in experiments.items():
        baseline = experiment["models"][experiment["baseline"]]
        family = ranking_family(baseline["family"])
        for parameter in baseline.get("grid", {}):
            own = values(baseline, parameter)
            if len(own) < 2:
                continue  # a fixed setting (Anserini's), not a tuned one
            wanted = ranges[(family, parameter)]
            if own[0] > min(wanted) or own[-1] < max(wanted):
                short.append(f"{name}: baseline {experiment['baseline']}.{parameter} spans {own[0]:g}-{own[-1]:g}, "
                             f"its family gets {min(wanted):g}-{max(wanted):g} elsewhere")
    return short


def test_shared_parameters_take_the_baselines_values(experiments):
    assert unequal_shared_values(experiments) == []


def test_every_baseline_covers_its_familys_range_anywhere_in_the_project(experiments):
    assert short_baselines(experiments) == []


def test_the_rules_catch_the_unequal_budgets_they_are_for():
    """The ADM and GJM experiments as they were: UG on 5 values of mu in [250, 3000], ADM on 3 others,
    while GJM's Dirichlet (the same ranking) searched 20-50,000."""
    before = {"adm": {"baseline": "ug", "models": {
                  "ug": {"family": "kl_ml", "grid": {"mu": [250, 500, 1000, 2000, 3000]}},
                  "adm": {"family": "adm", "grid": {"mu": [500, 1000, 2000], "window": [2, 4]}}}},
              "gjm": {"baseline": "dirichlet", "models": {
                  "dirichlet": {"family": "ql_dirichlet", "grid": {"mu": [20, 1000, 50000]}}}}}
    assert unequal_shared_values(before) == ["adm: adm.mu [500.0, 1000.0, 2000.0] != baseline "
                                             "[250.0, 500.0, 1000.0, 2000.0, 3000.0]"]
    assert short_baselines(before) == ["adm: baseline ug.mu spans 250-3000, its family gets 20-50000 elsewhere"]
