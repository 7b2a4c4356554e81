"""Per-query evidence: which queries make a model differ from the baseline.

For each model against the experiment's baseline, on each table row, at the table's chosen points:
the per-query differences of the selection measure sorted from the largest gain to the largest loss
(the bar plot IR papers show, one bar per query), and the queries with the largest gains and losses
with their text. An experiment of one model has nothing to compare: its figure says so.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import write_text
from ..tables import TableSpec, read_topics_file

#: queries listed per model and row, for the gains and for the losses
TOP_QUERIES = 5
#: above this many queries a panel draws the sorted differences as a filled step curve, not bars
MAX_BARS = 300
COLUMNS = ["collection", "queryset", "model", "baseline", "measure", "kind", "rank", "qid", "text",
           "value", "baseline_value", "difference"]


def per_query_differences(chosen: Mapping[str, tuple[str, pd.DataFrame]], model: str, baseline: str,
                          measure: str) -> pd.DataFrame:
    """qid, value, baseline_value, difference: sorted by difference (largest gain first), ties by qid."""
    def values(name: str) -> pd.Series:
        frame = chosen[name][1]
        return frame[frame["measure"] == measure].set_index("qid")["value"]

    frame = pd.DataFrame({"value": values(model), "baseline_value": values(baseline)}).dropna()
    frame["difference"] = frame["value"] - frame["baseline_value"]
    frame.index.name = "qid"
    frame = frame.reset_index()
    frame["qid"] = frame["qid"].astype(str)
    return frame.sort_values(["difference", "qid"], ascending=[False, True], kind="stable").reset_index(drop=True)


def differences_by_panel(chosen_by_row: Mapping[tuple[str, str], Mapping[str, tuple[str, pd.DataFrame]]],
                         spec: TableSpec) -> dict[tuple[tuple[str, str], str], pd.DataFrame]:
    """(row, model) -> :func:`per_query_differences` of the model against the baseline on the selection
    measure, for every row and every model but the baseline: once for the table and the figure."""
    return {(row, model): per_query_differences(chosen, model, spec.baseline, spec.select_by)
            for row, chosen in chosen_by_row.items() for model in spec.models if model != spec.baseline}


def gains_and_losses(chosen_by_row: Mapping[tuple[str, str], Mapping[str, tuple[str, pd.DataFrame]]],
                     spec: TableSpec, texts: Mapping[tuple[str, str], Mapping[str, str]],
                     top: int = TOP_QUERIES,
                     differences: Mapping[tuple[tuple[str, str], str], pd.DataFrame] | None = None) -> pd.DataFrame:
    """The ``top`` largest gains (difference > 0) and losses (< 0) of every model against the baseline
    per row, with each query's text (``texts``: row -> qid -> text). ``differences``: the
    :func:`differences_by_panel` of ``chosen_by_row``, when the caller has them."""
    if differences is None:
        differences = differences_by_panel(chosen_by_row, spec)
    lines = []
    for collection, queryset in chosen_by_row:
        for model in spec.models:
            if model == spec.baseline:
                continue
            panel = differences[((collection, queryset), model)]
            gains = panel[panel["difference"] > 0].head(top)
            losses = panel[panel["difference"] < 0].iloc[::-1].head(top)
            for kind, part in (("gain", gains), ("loss", losses)):
                for rank, entry in enumerate(part.itertuples(index=False), start=1):
                    lines.append({"collection": collection, "queryset": queryset, "model": model,
                                  "baseline": spec.baseline, "measure": spec.select_by, "kind": kind, "rank": rank,
                                  "qid": entry.qid, "text": texts.get((collection, queryset), {}).get(entry.qid, ""),
                                  "value": entry.value, "baseline_value": entry.baseline_value,
                                  "difference": entry.difference})
    return pd.DataFrame(lines, columns=COLUMNS)


def plot_per_query(chosen_by_row: Mapping[tuple[str, str], Mapping[str, tuple[str, pd.DataFrame]]],
                   spec: TableSpec, stem: Path,
                   differences: Mapping[tuple[tuple[str, str], str], pd.DataFrame] | None = None) -> list[Path]:
    """A panel per row (down) and model against the baseline (across): sorted per-query differences
    (``differences``: the :func:`differences_by_panel` of ``chosen_by_row``, when the caller has them)."""
    # deferred: matplotlib is imported only when a figure is drawn
    from ..tables.figures import _save, plt

    if differences is None:
        differences = differences_by_panel(chosen_by_row, spec)

    models = [model for model in spec.models if model != spec.baseline]
    rows = list(chosen_by_row)
    label = spec.model_labels.get
    if not models or not rows:
        figure, axis = plt.subplots(figsize=(5, 1.5))
        reason = "one model only: nothing to compare with the baseline" if not models else "no judged queries"
        axis.text(0.5, 0.5, reason, ha="center", va="center")
        axis.axis("off")
        return _save(figure, stem)
    figure, axes = plt.subplots(len(rows), len(models), figsize=(3.3 * len(models), 2.5 * len(rows)),
                                squeeze=False, sharey="row")
    for r, row in enumerate(rows):
        for c, model in enumerate(models):
            axis = axes[r][c]
            panel = differences[(row, model)]["difference"]
            positions = range(1, len(panel) + 1)
            if len(panel) <= MAX_BARS:
                _bars(axis, panel.to_numpy(dtype=float))
            else:
                axis.fill_between(positions, 0, panel, step="mid", color="#555555", linewidth=0)
            axis.axhline(0, color="black", linewidth=0.6)
            wins, losses = int((panel > 0).sum()), int((panel < 0).sum())
            axis.set_title(f"{label(model, model)} − {label(spec.baseline, spec.baseline)}\n"
                           f"{row[0]} ({row[1]}): +{wins} / −{losses} / ={len(panel) - wins - losses}",
                           fontsize="x-small")
            axis.set_xlabel("queries, sorted by difference", fontsize="x-small")
            if c == 0:
                axis.set_ylabel(f"Δ {spec.select_by}", fontsize="small")
            axis.tick_params(labelsize="x-small")
            axis.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    return _save(figure, stem)


def _bars(axis, heights: np.ndarray) -> None:
    """``axis.bar(1..n, heights, width=1.0)``, gains green and losses red, as one collection.

    A bar a patch made the drawing the job's time: an experiment's figure has dozens of panels of
    up to MAX_BARS bars, drawn four times over (layout, the tight box and the file, in two formats).
    One collection of rectangles is one draw call; the limits are set as ``bar`` sets them.
    """
    # deferred: matplotlib is imported only when a figure is drawn
    from matplotlib.collections import PolyCollection

    left = np.arange(len(heights), dtype=float) + 0.5
    corners = np.stack([np.column_stack([left, np.zeros_like(heights)]), np.column_stack([left, heights]),
                        np.column_stack([left + 1.0, heights]), np.column_stack([left + 1.0, np.zeros_like(heights)])],
                       axis=1)
    colors = np.where(heights > 0, "#2a7f3f", "#b2302e")
    bars = PolyCollection(corners, facecolors=colors, linewidths=0, closed=True)
    bars.sticky_edges.y.append(0.0)  # as bar(): no margin past the bars' feet at 0
    axis.add_collection(bars, autolim=True)
    axis.autoscale_view()


def gains_and_losses_html(table: pd.DataFrame, labels: Mapping[str, str]) -> str:
    """One table per model and row: its largest gains and losses against the baseline, with the queries' text."""
    if table.empty:
        return "<p>No per-query differences: one model only, or no query where a model and the baseline differ.</p>\n"
    out = []
    for (collection, queryset, model), group in table.groupby(["collection", "queryset", "model"], sort=False):
        baseline = group["baseline"].iloc[0]
        measure = group["measure"].iloc[0]
        out.append(f"<h4>{html.escape(labels.get(model, model))} against {html.escape(labels.get(baseline, baseline))}"
                   f", {html.escape(collection)} ({html.escape(queryset)})</h4>")
        out.append(f"<div class='scroll'><table class='queries'><thead><tr><th></th><th>qid</th><th class='left'>query</th>"
                   f"<th>{html.escape(measure)}</th><th>baseline</th><th>Δ</th></tr></thead><tbody>")
        for entry in group.itertuples(index=False):
            text = entry.text if len(entry.text) <= 160 else entry.text[:157] + "..."
            out.append(f"<tr><td>{entry.kind} {entry.rank}</td><td>{html.escape(entry.qid)}</td>"
                       f"<td class='text'>{html.escape(text)}</td><td>{entry.value:.4f}</td>"
                       f"<td>{entry.baseline_value:.4f}</td><td>{entry.difference:+.4f}</td></tr>")
        out.append("</tbody></table></div>")
    return "\n".join(out) + "\n"




def query_texts(cells: pd.DataFrame) -> dict[tuple[str, str], dict[str, str]]:
    """Row (collection, queryset label) -> qid -> query text, from the cells' topics files."""
    texts = {}
    for (collection, queryset), rows in cells.groupby(["collection", "queryset"], sort=False):
        topics = read_topics_file(rows["topics"].iloc[0])
        texts[(collection, queryset)] = dict(zip(topics["qid"].astype(str), topics["text"].astype(str)))
    return texts


def write_evidence(chosen_by_row, spec: TableSpec, texts, table_dir, figure_dir) -> list[Path]:
    """per_query.{csv,html} (largest gains and losses) and the figure per_query.{svg,png}."""
    differences = differences_by_panel(chosen_by_row, spec)
    table = gains_and_losses(chosen_by_row, spec, texts, differences=differences)
    table_dir = Path(table_dir)
    write_text(table.to_csv(index=False), table_dir / "per_query.csv")
    write_text(gains_and_losses_html(table, spec.model_labels), table_dir / "per_query.html")
    return [table_dir / "per_query.csv", table_dir / "per_query.html",
            *plot_per_query(chosen_by_row, spec, Path(figure_dir) / "per_query", differences=differences)]
