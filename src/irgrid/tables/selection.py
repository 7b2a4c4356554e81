"""Choosing each model's point on every table row (best run, cross-validated, tuned on another query
set), and the summary of a table: means, paired tests against the baseline, ties, grid edges."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import pandas as pd

from ..evaluation.stats import apply_selection, best_point, correct_p_values, cross_validated_selection, paired_test
from ..evaluation.ties import FIRST_TIED_RELEVANT, is_tie_measure, tie_form
from .aggregates import CellAggregates
from .spec import QUERY_SUBSETS, GridPosition, TableSpec, grid_position


def grid_positions(evaluations: pd.DataFrame | CellAggregates, spec: TableSpec
                   ) -> dict[tuple[str, str, str], GridPosition]:
    """(collection, queryset, model) -> where the model's best point by ``select_by`` (the best run)
    sits in its grid on that row: the edge flags every table and finding shows, whatever its selection."""
    out = {}
    for (collection, queryset), models in _models_by_row(evaluations, spec.select_by).items():
        for model, values in models.items():
            if model not in spec.models:
                continue
            means = values.selection_means()
            if means.empty:
                continue
            out[(collection, queryset, model)] = grid_position(list(means.index), best_point(means),
                                                              spec.bounds.get(model))
    return out


class _ModelFrame:
    """One model's evaluations on one table row, rows of :func:`irgrid.tables.load_cells`' frame."""

    def __init__(self, values: pd.DataFrame, measure: str):
        self.values, self.measure = values, measure

    @cached_property
    def _selection(self) -> pd.DataFrame:
        return self.values[self.values["measure"] == self.measure]

    def selection_means(self) -> pd.Series:
        point_order = list(self._selection["params"].unique())  # first-appearance (grid) order
        return self._selection.groupby("params", sort=False)["value"].mean().reindex(point_order)

    def selection_values(self) -> pd.DataFrame:
        return self._selection[["qid", "params", "value"]]

    def measures(self) -> set[str]:
        return set(self.values["measure"].unique())

    def cells_at(self, points: Sequence[str]) -> list[int]:
        return []

    def at(self, points: Sequence[str]) -> pd.DataFrame:
        return self.values.loc[self.values["params"].isin(points)]


class _ModelCells:
    """One model's evaluations on one table row, its cells' aggregates (:class:`CellAggregates`); the rows
    of the cells :meth:`cells_at` names once the aggregates have loaded them."""

    def __init__(self, aggregates: CellAggregates, key: tuple[str, str, str], positions: list[int]):
        self.aggregates, self.key, self.positions = aggregates, key, positions
        self.params = aggregates.cells["params"].iloc[positions].astype(str).tolist()

    def selection_means(self) -> pd.Series:
        return self.aggregates.selection_means(self.positions)

    def selection_values(self) -> pd.DataFrame:
        return self.aggregates.selection_values(self.positions)

    def measures(self) -> set[str]:
        return set(self.aggregates.measures[self.key])

    def cells_at(self, points: Sequence[str]) -> list[int]:
        return [position for position, params in zip(self.positions, self.params) if params in points]

    def at(self, points: Sequence[str]) -> pd.DataFrame:
        positions = self.cells_at(points)
        if not positions:
            return pd.DataFrame(columns=["qid", "measure", "value", "params"])
        return self.aggregates.rows_of(positions)


_ModelValues = _ModelFrame | _ModelCells


def _models_by_row(evaluations: pd.DataFrame | CellAggregates, measure: str
                   ) -> dict[tuple[str, str], dict[str, _ModelValues]]:
    """(collection, queryset) -> model -> its evaluations there, rows and models in first-appearance order."""
    if isinstance(evaluations, CellAggregates):
        if evaluations.measure != measure:
            raise ValueError(f"the cells' aggregates are of {evaluations.measure!r}, not of {measure!r}")
        return {row: {model: _ModelCells(evaluations, (*row, model), positions)
                      for model, positions in models.items()}
                for row, models in evaluations.models_by_row().items()}
    return {(collection, queryset): {model: _ModelFrame(values, measure)
                                     for model, values in row_values.groupby("model", sort=False)}
            for (collection, queryset), row_values in evaluations.groupby(["collection", "queryset"], sort=False)}


@dataclass(frozen=True)
class _Choice:
    """A model's chosen point on a row: its label, the points whose rows give its values, and (cross-
    validation) the point of each query."""

    label: str
    points: tuple[str, ...]
    query_params: pd.Series | None = None


def _choose(values: _ModelValues, spec: TableSpec) -> _Choice:
    means = values.selection_means()
    if means.empty:
        raise ValueError(f"measure {spec.select_by!r} was not evaluated")
    if spec.selection == "best":
        params = best_point(means)
        return _Choice(params, (params,))
    if spec.selection == "cv":
        result = cross_validated_selection(values.selection_values(), k=spec.folds, seed=spec.seed)
        counts = Counter(result.chosen.values())
        label = ", ".join(
            f"{params} ({count}/{len(result.chosen)})" if len(counts) > 1 else params
            for params, count in counts.most_common()
        )
        return _Choice(label, tuple(dict.fromkeys(result.chosen.values())), result.query_params)
    raise ValueError(f"unknown selection {spec.selection!r}: expected 'best' or 'cv'")


def _chosen_values(values: _ModelValues, spec: TableSpec, choice: _Choice) -> pd.DataFrame:
    """The per-query values (qid, measure, value) of a choice: the rows of its points only, so the same
    whether ``values`` holds every point's rows or only the chosen ones'."""
    rows = values.at(choice.points)
    if choice.query_params is None:
        return rows[["qid", "measure", "value"]]
    measures = values.measures()  # of every point's rows: whether sparse rows exist is the model's
    if not _sparse_measures(measures, spec):
        return apply_selection(rows[["qid", "params", "measure", "value"]], choice.query_params)
    sparse = _sparse_tie_rows(rows, spec, measures)
    # rows only some queries of a run have (irgrid.evaluation.ties: where ties touch a relevant document) follow
    # the same choice, without apply_selection's check that every query has every measure
    dense, extra = rows[~sparse], rows[sparse]
    extra = extra.loc[extra["params"] == extra["qid"].map(choice.query_params), ["qid", "measure", "value"]]
    selected = apply_selection(dense[["qid", "params", "measure", "value"]], choice.query_params)
    return pd.concat([selected, extra], ignore_index=True)


def select_point(values: pd.DataFrame, spec: TableSpec) -> tuple[str, pd.DataFrame]:
    """One model's chosen parameters (a label) and its per-query values (qid, measure, value)."""
    model = _ModelFrame(values, spec.select_by)
    choice = _choose(model, spec)
    return choice.label, _chosen_values(model, spec, choice)


def _sparse_measures(measures, spec: TableSpec) -> set[str]:
    return {measure for measure in measures
            if measure == FIRST_TIED_RELEVANT or (is_tie_measure(measure) and measure not in spec.measures)}


def _sparse_tie_rows(values: pd.DataFrame, spec: TableSpec, measures=None) -> np.ndarray:
    """Which rows hold what every evaluation adds on ties (irgrid.evaluation.ties.TiedRelevantScan): the first
    tied rank and E[m] of the queries a tie touches, not of every query (E[m] of a ``tie_aware``
    experiment's table measures are of every query, and stay with the table's measures). ``measures``:
    the measures of the model's cells (default: those of ``values``)."""
    sparse = _sparse_measures(values["measure"].unique() if measures is None else measures, spec)
    return values["measure"].isin(sparse).to_numpy() if sparse else np.zeros(len(values), dtype=bool)


def _tie_columns(values: pd.DataFrame, firsts: pd.Series, measure: str, per_query: pd.Series,
                 spec: TableSpec) -> dict:
    """``tied_queries`` (queries whose ties touch a relevant document within ``measure``'s cutoff, anywhere
    for AP, RR, R-precision) and ``expected`` (the mean of E[measure]: a query without its row has the
    trec_eval-style value, which equals it), for a model's chosen values; {} where no tie touches one."""
    tie = tie_form(measure)
    if tie is None or firsts.empty or str(tie) in spec.measures:
        return {}
    count = int(len(firsts) if tie.cutoff is None else (firsts <= tie.cutoff).sum())
    if not count:
        return {}
    expected = values.loc[values["measure"] == str(tie)].set_index("qid")["value"]
    expected = expected[expected.index.isin(per_query.index)]
    mean = float(pd.concat([per_query.drop(expected.index), expected]).mean())
    return {"tied_queries": count, "expected": mean}


def summarise(evaluations: pd.DataFrame | CellAggregates, spec: TableSpec,
              subsets: dict[tuple[str, str], dict[str, set[str]]] | None = None) -> pd.DataFrame:
    """Chosen point per (collection, queryset, model), its means and p-values against the baseline.

    Long format, one row per (collection, queryset, model, measure); ``p_value``
    is the raw paired-test p-value, ``p_corrected`` the one adjusted for the
    number of models compared with the baseline on that row and measure, and
    ``significant`` uses the corrected one.  ``subsets`` (:func:`query_subsets`) adds,
    after each row, a row per subset of its queries ("text, queries with a phrase"):
    the same runs at the same chosen points (as a paper reports a subset of its
    queries), means and tests over the subset's queries only.
    """
    rows = []
    positions = grid_positions(evaluations, spec)
    for (collection, queryset), chosen in chosen_points(evaluations, spec).items():
        row_positions = {model: positions[(collection, queryset, model)] for model in spec.models
                         if (collection, queryset, model) in positions}
        rows.extend(_measure_rows(chosen, spec, collection, queryset, None, row_positions))
        for subset, qids in (subsets or {}).get((collection, queryset), {}).items():
            if qids:
                rows.extend(_measure_rows(chosen, spec, collection, f"{queryset}, {QUERY_SUBSETS[subset]}", qids,
                                          row_positions))
    summary = pd.DataFrame(rows)
    if "tied_queries" in summary.columns:  # some run's ties touch a relevant document: every row says so
        summary["tied_queries"] = summary["tied_queries"].fillna(0).astype(int)
    return summary


def chosen_means(evaluations: pd.DataFrame | CellAggregates, spec: TableSpec, measure: str) -> pd.DataFrame:
    """Each model's mean of ``measure`` at its chosen point per row: the collection, queryset, model,
    params, measure and mean of :func:`summarise` without its paired tests (what the figures draw;
    the tests, and scipy.stats for them, were most of a figure job's table work)."""
    rows = []
    for (collection, queryset), chosen in chosen_points(evaluations, spec).items():
        for model in spec.models:
            params, values = chosen[model]
            per_query = values.loc[values["measure"] == measure, "value"]
            if per_query.empty:
                raise ValueError(f"{collection}/{queryset}, model {model!r}: measure {measure!r} was not evaluated")
            rows.append({"collection": collection, "queryset": queryset, "model": model, "params": params,
                         "measure": measure, "mean": float(per_query.mean())})
    return pd.DataFrame(rows)


def chosen_points(evaluations: pd.DataFrame | CellAggregates, spec: TableSpec
                  ) -> dict[tuple[str, str], dict[str, tuple[str, pd.DataFrame]]]:
    """Per table row (collection, queryset): each model's chosen parameters and its per-query values
    there (qid, measure, value), under the spec's selection (best, cv, tuned: rows the tune_on keys).

    The points are chosen first, then the rows of the chosen points read (from cells' aggregates: the
    chosen cells' rows only, every file once)."""
    by_row = _models_by_row(evaluations, spec.select_by)
    choices: dict[tuple[str, str], dict[str, tuple[_ModelValues | None, _Choice]]] = {}
    for (collection, queryset), models in by_row.items():
        if spec.selection == "tuned":
            if queryset not in spec.tune_on:
                continue
            tuning = by_row.get((collection, spec.tune_on[queryset]))
            if tuning is None:
                raise ValueError(f"{collection}/{queryset}: parameters are chosen on query set "
                                 f"{spec.tune_on[queryset]!r}, which has no evaluations")
            best = replace(spec, selection="best")
            tuned = _choices(tuning, best, collection, spec.tune_on[queryset])
            choices[(collection, queryset)] = {model: (models.get(model), tuned[model]) for model in spec.models}
        else:
            choices[(collection, queryset)] = {model: (models[model], choice) for model, choice in
                                               _choices(models, spec, collection, queryset).items()}
    if isinstance(evaluations, CellAggregates):
        evaluations.load(position for row in choices.values() for values, choice in row.values()
                         if values is not None for position in values.cells_at(choice.points))
    out = {}
    for (collection, queryset), row in choices.items():
        out[(collection, queryset)] = {}
        for model, (values, choice) in row.items():
            if spec.selection == "tuned":
                chosen = values.at(choice.points) if values is not None else None
                if chosen is None or chosen.empty:
                    raise ValueError(f"{collection}/{queryset}, model {model!r}: no evaluation at {choice.label}, "
                                     f"the point chosen on {spec.tune_on[queryset]!r}")
                out[(collection, queryset)][model] = (choice.label, chosen[["qid", "measure", "value"]])
                continue
            try:
                out[(collection, queryset)][model] = (choice.label, _chosen_values(values, spec, choice))
            except ValueError as error:
                raise ValueError(f"{collection}/{queryset}, model {model!r}: {error}") from None
    return out


def best_points(evaluations: pd.DataFrame | CellAggregates, spec: TableSpec) -> dict[tuple[str, str], dict[str, str]]:
    """Per table row (collection, queryset): each model's best point by ``select_by`` (the best run),
    chosen without reading any cell's rows again."""
    best = replace(spec, selection="best")
    return {row: {model: choice.label for model, choice in _choices(models, best, *row).items()}
            for row, models in _models_by_row(evaluations, spec.select_by).items()}


def _choices(models: dict[str, _ModelValues], spec: TableSpec, collection: str, queryset: str
             ) -> dict[str, _Choice]:
    chosen: dict[str, _Choice] = {}
    for model in spec.models:
        if model not in models:
            raise ValueError(f"no evaluations of model {model!r} on {collection}/{queryset}")
        try:
            chosen[model] = _choose(models[model], spec)
        except ValueError as error:
            raise ValueError(f"{collection}/{queryset}, model {model!r}: {error}") from None
    return chosen


def _measure_rows(chosen: dict[str, tuple[str, pd.DataFrame]], spec: TableSpec, collection: str, queryset: str,
                  qids: set[str] | None, positions: dict[str, GridPosition] | None = None) -> list[dict]:
    """The summary rows of one table row: every model's mean of every measure, tested against the baseline."""
    if qids is not None:
        chosen = {model: (params, values[values["qid"].astype(str).isin(qids)])
                  for model, (params, values) in chosen.items()}

    rows = []
    baseline_values = chosen[spec.baseline][1]
    # per model, where each query's first tie touching a relevant document starts (most runs: nowhere)
    firsts = {model: values.loc[values["measure"] == FIRST_TIED_RELEVANT, "value"]
              for model, (_, values) in chosen.items()}
    for measure in spec.measures:
        baseline_query = baseline_values[baseline_values["measure"] == measure].set_index("qid")["value"]
        measure_rows = []
        for model in spec.models:
            params, values = chosen[model]
            per_query = values[values["measure"] == measure].set_index("qid")["value"]
            if per_query.empty:
                raise ValueError(
                    f"{collection}/{queryset}, model {model!r}: measure {measure!r} was not evaluated; "
                    f"the evaluations hold {sorted(values['measure'].unique())}"
                )
            if model == spec.baseline or measure.startswith("tied_relevant"):
                # a count of tied queries describes the run; it is no effectiveness to test
                p_value, difference = float("nan"), 0.0
            else:
                try:
                    result = paired_test(spec.test, per_query, baseline_query, alternative=spec.alternative)
                except ValueError as error:
                    raise ValueError(
                        f"{collection}/{queryset}, {model!r} against {spec.baseline!r}, {measure}: {error}"
                    ) from None
                p_value, difference = result.p_value, result.mean_difference
            measure_rows.append(
                {
                    "collection": collection,
                    "queryset": queryset,
                    "model": model,
                    "params": params,
                    "selection": spec.selection,
                    "measure": measure,
                    "mean": float(per_query.mean()),
                    "num_queries": int(per_query.size),
                    "baseline": spec.baseline,
                    "difference": difference,
                    "test": spec.test,
                    "alternative": spec.alternative,
                    "p_value": p_value,
                    **_position_columns((positions or {}).get(model)),
                }
            )
            measure_rows[-1]["ties"] = _tie_columns(values, firsts[model], measure, per_query, spec)
        corrected = correct_p_values([row["p_value"] for row in measure_rows], spec.correction)
        for row, p_corrected in zip(measure_rows, corrected):
            row["correction"] = spec.correction
            row["p_corrected"] = float(p_corrected)
            row["significant"] = bool(row["model"] != spec.baseline and p_corrected < spec.alpha)
            row.update(row.pop("ties"))  # last: a table without ties keeps today's columns
        rows.extend(measure_rows)
    return rows


def _position_columns(position: GridPosition | None) -> dict:
    if position is None:
        return {"points": 0, "best_params": "", "on_edge": False, "edge": ""}
    return {"points": position.points, "best_params": position.best, "on_edge": position.on_edge,
            "edge": position.describe()}


