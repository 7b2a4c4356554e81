"""Figures of an experiment, drawn from the same per-query files as its tables.

- ``by_method``: the selection measure of each model (at its best point) per
  collection, as grouped bars (the GJM paper's Fig. 1).
- ``sensitivity``: the selection measure against each parameter's value, one
  panel per collection (row) and model (column). For a model with several
  parameters, each curve is the best mean over the other parameters at that
  value (the profile), so the curve's peak is the best run.
- ``parameter-{name}``: the selection measure against one parameter (e.g. the
  window size N of the dependence models), one panel per collection and query
  set, one profile curve per model that has the parameter (an experiment's
  ``parameter_figures``).

Both are written as SVG and PNG. SVGs carry no date, so the same data give the
same file.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display on clusters or CI
# SVG element ids are random unless salted: a fixed salt gives the same file for the same data.
matplotlib.rcParams["svg.hashsalt"] = "irgrid"
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.layout_engine import PlaceHolderLayoutEngine  # noqa: E402

from ..grid import decode_point  # noqa: E402
from ..io import atomic_path  # noqa: E402
from .aggregates import point_means  # noqa: E402

FORMATS = ("svg", "png")
DPI = 150  # of the PNG


def _save(figure, stem: Path) -> list[Path]:
    # The tight box (bbox_inches="tight") measured once for both formats: savefig measures it by
    # drawing the whole figure before drawing it into the file, so each format drew it twice, and a
    # figure of dozens of panels spent most of its job drawing (the same box: inches, at the same dpi).
    # tight_layout() leaves a placeholder layout engine, which lays nothing out but makes savefig
    # draw once more before it draws: dropped, as matplotlib drops it for a figure never laid out.
    if isinstance(figure.get_layout_engine(), PlaceHolderLayoutEngine):
        figure.set_layout_engine(None)
    figure.set_dpi(DPI)
    figure.draw_without_rendering()
    box = figure.get_tightbbox().padded(matplotlib.rcParams["savefig.pad_inches"])
    paths = []
    for fmt in FORMATS:
        path = stem.with_suffix(f".{fmt}")
        with atomic_path(path) as tmp:
            metadata = {"Date": None} if fmt == "svg" else {}
            figure.savefig(tmp, format=fmt, metadata=metadata, bbox_inches=box, dpi=DPI)
        paths.append(path)
    plt.close(figure)
    return paths


def _row_labels(frame: pd.DataFrame) -> pd.Series:
    several = frame.groupby("collection")["queryset"].nunique().max() > 1
    if several:
        return frame["collection"] + " (" + frame["queryset"] + ")"
    return frame["collection"]


def table_rows(evaluations: pd.DataFrame) -> list[tuple[str, str]]:
    """The (collection, queryset) rows of ``evaluations`` in the order they first appear.

    From the distinct pairs (drop_duplicates), not a walk over every row: an experiment's
    evaluations have a million rows, and zipping two Arrow-backed columns element by element
    took seconds."""
    if not isinstance(evaluations, pd.DataFrame):  # cells' aggregates (irgrid.tables.CellAggregates)
        return list(evaluations.models_by_row())
    pairs = evaluations[["collection", "queryset"]].drop_duplicates()
    return list(zip(pairs["collection"], pairs["queryset"]))


def plot_method_bars(summary: pd.DataFrame, measure: str, models: list[str], labels: dict[str, str], stem: Path) -> list[Path]:
    """Grouped bars: ``measure`` of each model (chosen point) per collection row."""
    data = summary[summary["measure"] == measure].copy()
    data["row"] = _row_labels(data)
    table = data.pivot_table(index="row", columns="model", values="mean", sort=False)[models]
    figure, axis = plt.subplots(figsize=(max(6.0, 1.2 * len(table)), 4.0))
    width = 0.8 / len(models)
    for i, model in enumerate(models):
        positions = [x + (i - (len(models) - 1) / 2) * width for x in range(len(table))]
        axis.bar(positions, table[model], width=width, label=labels.get(model, model))
    axis.set_xticks(range(len(table)), table.index, rotation=30, ha="right")
    axis.set_ylabel(measure)
    axis.legend(fontsize="small", ncols=min(len(models), 4))
    axis.grid(axis="y", alpha=0.3)
    return _save(figure, stem)


def sensitivity_curves(evaluations: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Mean ``measure`` per grid point, expanded to one row per (point, parameter, value)."""
    means = point_means(evaluations, measure)
    rows = []
    for entry in means.itertuples(index=False):
        for parameter, value in decode_point(entry.params).items():
            rows.append(
                {
                    "collection": entry.collection,
                    "queryset": entry.queryset,
                    "model": entry.model,
                    "parameter": parameter,
                    "value": value,
                    "mean": entry.value,
                }
            )
    curves = pd.DataFrame(rows)
    if curves.empty:
        return curves
    # Profile over the other parameters: the best mean at each value of this one.
    return (
        curves.groupby(["collection", "queryset", "model", "parameter", "value"], sort=False)["mean"]
        .max()
        .reset_index()
        .sort_values(["collection", "queryset", "model", "parameter", "value"], kind="stable")
    )


def plot_sensitivity(evaluations: pd.DataFrame, measure: str, models: list[str], labels: dict[str, str],
                     stem: Path) -> list[Path]:
    curves = sensitivity_curves(evaluations, measure)
    if not curves.empty:  # a parameter held at one value is not swept: no curve, no panel
        values = curves.groupby(["collection", "queryset", "model", "parameter"])["value"].transform("nunique")
        curves = curves[values > 1]
    rows = table_rows(evaluations)
    several = len({queryset for _, queryset in rows}) > 1
    swept = [m for m in models if not curves.empty and (curves["model"] == m).any()]
    if not swept:
        figure, axis = plt.subplots(figsize=(4, 2))
        axis.text(0.5, 0.5, "no parameters swept", ha="center", va="center")
        axis.axis("off")
        return _save(figure, stem)
    figure, axes = plt.subplots(
        len(rows), len(swept), figsize=(3.2 * len(swept), 2.4 * len(rows)), squeeze=False, sharey="row"
    )
    for r, (collection, queryset) in enumerate(rows):
        for c, model in enumerate(swept):
            axis = axes[r][c]
            panel = curves[(curves["collection"] == collection) & (curves["queryset"] == queryset) & (curves["model"] == model)]
            for parameter, curve in panel.groupby("parameter", sort=False):
                (line,) = axis.plot(curve["value"], curve["mean"], marker="o", markersize=3, label=parameter)
                # the best run's point: the profile's peak (first of equal peaks, as best_point chooses)
                peak = curve.loc[curve["mean"].idxmax()]
                axis.plot([peak["value"]], [peak["mean"]], marker="*", markersize=11, color=line.get_color(),
                          markeredgecolor="black", markeredgewidth=0.5, linestyle="none")
                if curve["value"].min() > 0 and curve["value"].max() / curve["value"].min() >= 100:
                    axis.set_xscale("log")
            if r == 0:
                axis.set_title(labels.get(model, model), fontsize="small")
            if c == 0:
                label = f"{collection} ({queryset})\n{measure}" if several else f"{collection}\n{measure}"
                axis.set_ylabel(label, fontsize="small")
            if panel["parameter"].nunique() > 1:
                axis.legend(fontsize="x-small")
                axis.set_xlabel("parameter value", fontsize="small")
            elif not panel.empty:
                axis.set_xlabel(panel["parameter"].iloc[0], fontsize="small")
            axis.grid(alpha=0.3)
            axis.tick_params(labelsize="x-small")
    figure.suptitle("stars: the chosen (best-run) points", fontsize="x-small", y=1.0)
    figure.tight_layout()
    return _save(figure, stem)


def plot_parameter(evaluations: pd.DataFrame, measure: str, parameter: str, models: list[str],
                   labels: dict[str, str], stem: Path, baseline: str | None = None) -> list[Path]:
    """``measure`` against ``parameter``: a panel per (collection, query set), a profile curve per model.

    The baseline, when it does not have the parameter, is a dashed line at its best mean.
    """
    curves = sensitivity_curves(evaluations, measure)
    if not curves.empty:
        curves = curves[curves["parameter"] == parameter]
    rows = table_rows(evaluations)
    if curves.empty or not rows:
        figure, axis = plt.subplots(figsize=(4, 2))
        axis.text(0.5, 0.5, f"no model sweeps {parameter}", ha="center", va="center")
        axis.axis("off")
        return _save(figure, stem)
    columns = min(3, len(rows))
    lines = (len(rows) + columns - 1) // columns
    figure, axes = plt.subplots(lines, columns, figsize=(3.4 * columns, 2.6 * lines), squeeze=False)
    for i, (collection, queryset) in enumerate(rows):
        axis = axes[i // columns][i % columns]
        panel = curves[(curves["collection"] == collection) & (curves["queryset"] == queryset)]
        for model in models:
            curve = panel[panel["model"] == model]
            if not curve.empty:
                axis.plot(curve["value"], curve["mean"], marker="o", markersize=3, label=labels.get(model, model))
        if baseline is not None and not (panel["model"] == baseline).any():
            best = means_of(evaluations, measure, collection, queryset, baseline)
            if best is not None:
                axis.axhline(best, color="grey", linestyle="--", linewidth=1, label=f"{labels.get(baseline, baseline)} (best)")
        axis.set_title(f"{collection} ({queryset})", fontsize="small")
        axis.set_xlabel(parameter, fontsize="small")
        axis.set_ylabel(measure, fontsize="small")
        if not panel.empty and panel["value"].min() > 0 and panel["value"].max() / panel["value"].min() >= 16:
            axis.set_xscale("log", base=2)
        axis.grid(alpha=0.3)
        axis.tick_params(labelsize="x-small")
    for j in range(len(rows), lines * columns):
        axes[j // columns][j % columns].axis("off")
    axes[0][0].legend(fontsize="x-small")
    figure.tight_layout()
    return _save(figure, stem)


def means_of(evaluations: pd.DataFrame, measure: str, collection: str, queryset: str, model: str) -> float | None:
    """The best mean of ``measure`` over a model's grid points on one row (None: no such model there)."""
    if not isinstance(evaluations, pd.DataFrame):  # cells' aggregates (irgrid.tables.CellAggregates)
        if evaluations.measure != measure:
            raise ValueError(f"the cells' aggregates are of {evaluations.measure!r}, not of {measure!r}")
        return evaluations.best_mean(collection, queryset, model)
    rows = evaluations[(evaluations["measure"] == measure) & (evaluations["collection"] == collection)
                       & (evaluations["queryset"] == queryset) & (evaluations["model"] == model)]
    return None if rows.empty else float(rows.groupby("params")["value"].mean().max())


def write_figures(evaluations: pd.DataFrame, summary: pd.DataFrame, measure: str, models: list[str],
                  labels: dict[str, str], out_dir: str | os.PathLike) -> list[Path]:
    out_dir = Path(out_dir)
    paths = plot_method_bars(summary, measure, models, labels, out_dir / "by_method")
    paths += plot_sensitivity(evaluations, measure, models, labels, out_dir / "sensitivity")
    return paths


def plot_violations(table: pd.DataFrame, measure: str, labels: dict[str, str], stem: Path) -> list[Path]:
    """Total violations per document per query (x) against ``measure`` (y): a point per function and row."""
    figure, axis = plt.subplots(figsize=(6.0, 4.5))
    rows = list(dict.fromkeys(zip(table["collection"], table["queryset"])))
    markers = "osD^v<>pXh*"
    for i, model in enumerate(dict.fromkeys(table["model"])):
        points = table[table["model"] == model]
        axis.scatter(points["total"], points[measure], marker=markers[i % len(markers)], label=labels.get(model, model))
    if len(rows) <= 12:
        for _, entry in table.iterrows():
            axis.annotate(entry["collection"], (entry["total"], entry[measure]), fontsize="xx-small", alpha=0.6)
    axis.set_xscale("symlog")
    axis.set_xlabel("constraint violations per document per query (C1-C4)")
    axis.set_ylabel(measure)
    axis.grid(alpha=0.3)
    axis.legend(fontsize="small")
    return _save(figure, stem)
