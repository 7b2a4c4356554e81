"""Significance-marked result tables, generated from per-query evaluation files.

One table per experiment: a row per collection (and query set, when a collection
has several), a column per model. Each model is represented by its best
parameter point on that row (highest mean of ``select_by``), each cell shows the
mean of the table's measures, and a dagger marks a difference from the named
baseline with paired t-test p < alpha. Nothing is typed in by hand: every
number comes from the per-query files.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from .evaluate import read_evaluation
from .io import write_text
from .stats import best_point, paired_ttest

SIGNIFICANT_MARK = "†"


@dataclass
class TableSpec:
    """What an experiment's table shows (from config/experiments/*.yaml)."""

    experiment: str
    models: Sequence[str]
    baseline: str
    measures: Sequence[str] = ("AP", "P@10")
    select_by: str = "AP"
    alpha: float = 0.05
    title: str = ""
    model_labels: dict[str, str] = field(default_factory=dict)


def load_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """Read every evaluation file listed in ``cells`` (collection, queryset, model, params, path).

    Returns one long frame: collection, queryset, model, params, qid, measure, value.
    """
    frames = []
    for cell in cells.itertuples(index=False):
        per_query = read_evaluation(cell.path)
        per_query = per_query.assign(
            collection=cell.collection, queryset=cell.queryset, model=cell.model, params=cell.params
        )
        frames.append(per_query)
    if not frames:
        raise ValueError("no evaluation files for the table")
    return pd.concat(frames, ignore_index=True)


def summarise(evaluations: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """Best point per (collection, queryset, model), its means and p-values against the baseline.

    Long format, one row per (collection, queryset, model, measure).
    """
    rows = []
    for (collection, queryset), row_values in evaluations.groupby(["collection", "queryset"], sort=False):
        chosen: dict[str, tuple[str, pd.DataFrame]] = {}
        for model in spec.models:
            values = row_values[row_values["model"] == model]
            if values.empty:
                raise ValueError(f"no evaluations of model {model!r} on {collection}/{queryset}")
            selection = values[values["measure"] == spec.select_by]
            if selection.empty:
                raise ValueError(f"measure {spec.select_by!r} was not evaluated for {model!r}")
            point_order = list(dict.fromkeys(selection["params"]))
            means = selection.groupby("params", sort=False)["value"].mean().reindex(point_order)
            params = best_point(means)
            chosen[model] = (params, values[values["params"] == params])
        baseline_values = chosen[spec.baseline][1]
        for model in spec.models:
            params, values = chosen[model]
            for measure in spec.measures:
                per_query = values[values["measure"] == measure].set_index("qid")["value"]
                baseline_query = baseline_values[baseline_values["measure"] == measure].set_index("qid")["value"]
                if model == spec.baseline:
                    p_value, difference = float("nan"), 0.0
                else:
                    result = paired_ttest(per_query, baseline_query)
                    p_value, difference = result.p_value, result.mean_difference
                rows.append(
                    {
                        "collection": collection,
                        "queryset": queryset,
                        "model": model,
                        "params": params,
                        "measure": measure,
                        "mean": float(per_query.mean()),
                        "num_queries": int(per_query.size),
                        "baseline": spec.baseline,
                        "difference": difference,
                        "p_value": p_value,
                        "significant": bool(p_value < spec.alpha) if model != spec.baseline else False,
                    }
                )
    return pd.DataFrame(rows)


def _row_label(collection: str, queryset: str, several_querysets: bool) -> str:
    return f"{collection} ({queryset})" if several_querysets else collection


def _grid(summary: pd.DataFrame, spec: TableSpec, cell_format) -> tuple[list[str], list[list[str]]]:
    several = summary.groupby("collection")["queryset"].nunique().max() > 1
    header = ["collection"] + [spec.model_labels.get(model, model) for model in spec.models]
    body = []
    for (collection, queryset), row in summary.groupby(["collection", "queryset"], sort=False):
        cells = [_row_label(collection, queryset, several)]
        for model in spec.models:
            model_rows = row[row["model"] == model].set_index("measure")
            cells.append(cell_format(model_rows, model))
        body.append(cells)
    return header, body


def _plain_cell(model_rows: pd.DataFrame, spec: TableSpec, mark: str) -> str:
    parts = []
    for measure in spec.measures:
        entry = model_rows.loc[measure]
        parts.append(f"{entry['mean']:.4f}{mark if entry['significant'] else ''}")
    return " / ".join(parts)


def to_markdown(summary: pd.DataFrame, spec: TableSpec) -> str:
    header, body = _grid(summary, spec, lambda rows, model: _plain_cell(rows, spec, SIGNIFICANT_MARK))
    lines = [f"# {spec.title or spec.experiment}", ""]
    lines.append(
        f"Cells: {' / '.join(spec.measures)} of each model's best parameter point by {spec.select_by}. "
        f"{SIGNIFICANT_MARK}: paired t-test against {spec.baseline}, p < {spec.alpha}."
    )
    lines.append("")
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    lines.extend("| " + " | ".join(row) + " |" for row in body)
    lines += ["", "## Chosen parameters and p-values", ""]
    lines.append("| collection | query set | model | parameters | " + " | ".join(f"p ({m})" for m in spec.measures) + " |")
    lines.append("|---|---|---|---|" + "---:|" * len(spec.measures))
    for (collection, queryset, model), rows in summary.groupby(["collection", "queryset", "model"], sort=False):
        rows = rows.set_index("measure")
        p_values = [
            "baseline" if model == spec.baseline else f"{rows.loc[m, 'p_value']:.4g}" for m in spec.measures
        ]
        lines.append(f"| {collection} | {queryset} | {model} | {rows['params'].iloc[0]} | " + " | ".join(p_values) + " |")
    return "\n".join(lines) + "\n"


def to_latex(summary: pd.DataFrame, spec: TableSpec) -> str:
    def escape(text: str) -> str:
        for char, replacement in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"), ("#", r"\#")):
            text = text.replace(char, replacement)
        return text

    header, body = _grid(summary, spec, lambda rows, model: _plain_cell(rows, spec, r"$^\dagger$"))
    lines = [
        r"\begin{table}",
        r"\centering",
        r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        r"\toprule",
        " & ".join(escape(cell) for cell in header) + r" \\",
        r"\midrule",
    ]
    lines.extend(" & ".join(escape(row[0]) if i == 0 else cell for i, cell in enumerate(row)) + r" \\" for row in body)
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{escape(spec.title or spec.experiment)}: {' / '.join(escape(m) for m in spec.measures)}; "
        rf"$\dagger$: paired t-test against {escape(spec.baseline)}, $p < {spec.alpha}$.}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def to_html(summary: pd.DataFrame, spec: TableSpec) -> str:
    def cell(rows: pd.DataFrame, model: str) -> str:
        parts = []
        for measure in spec.measures:
            entry = rows.loc[measure]
            title = "baseline" if model == spec.baseline else f"p = {entry['p_value']:.4g}"
            mark = SIGNIFICANT_MARK if entry["significant"] else ""
            parts.append(f'<span title="{html.escape(title)}">{entry["mean"]:.4f}{mark}</span>')
        return " / ".join(parts)

    header, body = _grid(summary, spec, cell)
    out = [f"<h2>{html.escape(spec.title or spec.experiment)}</h2>", "<table>"]
    out.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
    for row in body:
        out.append("<tr>" + f"<td>{html.escape(row[0])}</td>" + "".join(f"<td>{c}</td>" for c in row[1:]) + "</tr>")
    out.append("</table>")
    out.append(
        f"<p>{html.escape(' / '.join(spec.measures))} of each model's best parameter point by "
        f"{html.escape(spec.select_by)}; {SIGNIFICANT_MARK}: paired t-test against "
        f"{html.escape(spec.baseline)}, p &lt; {spec.alpha}. Hover a value for its p-value.</p>"
    )
    return "\n".join(out) + "\n"


def write_tables(summary: pd.DataFrame, spec: TableSpec, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write table.{md,tex,html,csv} into ``out_dir``; the CSV is the long summary with p-values."""
    out_dir = Path(out_dir)
    paths = {suffix: out_dir / f"table.{suffix}" for suffix in ("md", "tex", "html", "csv")}
    write_text(to_markdown(summary, spec), paths["md"])
    write_text(to_latex(summary, spec), paths["tex"])
    write_text(to_html(summary, spec), paths["html"])
    write_text(summary.to_csv(index=False), paths["csv"])
    return paths
