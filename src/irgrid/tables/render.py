"""A table's text: markdown, LaTeX and HTML renderings of a summary (:func:`irgrid.tables.summarise`)."""

from __future__ import annotations

import html
import os
from pathlib import Path

import pandas as pd

from ..io import write_text
from .spec import EDGE_MARK, TableSpec

SIGNIFICANT_MARK = "†"


def _row_label(collection: str, queryset: str, several_querysets: bool, num_queries: int | None = None) -> str:
    if num_queries is not None:
        queryset = f"{queryset}; {num_queries} queries"
        several_querysets = True
    return f"{collection} ({queryset})" if several_querysets else collection


def _grid(summary: pd.DataFrame, spec: TableSpec, cell_format) -> tuple[list[str], list[list[str]]]:
    several = summary.groupby("collection")["queryset"].nunique().max() > 1
    header = ["collection"] + [spec.model_labels.get(model, model) for model in spec.models]
    body = []
    for (collection, queryset), row in summary.groupby(["collection", "queryset"], sort=False):
        counts = row.loc[row["model"] == spec.baseline, "num_queries"]
        shown = int(counts.max()) if spec.query_counts and len(counts) else None
        cells = [_row_label(collection, queryset, several, shown)]
        for model in spec.models:
            model_rows = row[row["model"] == model].set_index("measure")
            cells.append(cell_format(model_rows, model))
        body.append(cells)
    return header, body


def _plain_cell(model_rows: pd.DataFrame, spec: TableSpec, mark: str, edge_mark: str = EDGE_MARK) -> str:
    parts = []
    for measure in spec.measures:
        entry = model_rows.loc[measure]
        parts.append(f"{entry['mean']:.4f}{mark if entry['significant'] else ''}{_expected_text(entry)}")
    return " / ".join(parts) + (edge_mark if _on_edge(model_rows) else "")


def _expected_text(entry: pd.Series) -> str:
    """`` (E 0.3175)`` beside a mean whose run has ties touching a relevant document (``tied_queries``) and
    whose expected value reads otherwise at the table's four decimals (where it reads the same, the
    ties line and the CSV's ``tied_queries`` and ``expected`` say so without crowding the cell)."""
    if entry.get("tied_queries", 0) > 0 and f"{entry['expected']:.4f}" != f"{entry['mean']:.4f}":
        return f" (E {entry['expected']:.4f})"
    return ""


def _ties_line(summary: pd.DataFrame, spec: TableSpec) -> str:
    """Which cells' runs tie a relevant document with one of another grade, on how many queries: what
    the ``(E ...)`` beside a value stands for. Empty when no run of the table has such a tie."""
    if "tied_queries" not in summary.columns or not (summary["tied_queries"] > 0).any():
        return ""
    tied = summary[summary["tied_queries"] > 0]
    parts = []
    for (collection, queryset, model), rows in tied.groupby(["collection", "queryset", "model"], sort=False):
        counts = ", ".join(f"{row.measure} {row.tied_queries}" for row in rows.itertuples())
        parts.append(f"{collection} ({queryset}) {spec.model_labels.get(model, model)}: {counts} "
                     f"of {int(rows['num_queries'].max())}")
    return ("Ties: queries whose run ranks a relevant document and one of another grade at equal score within "
            "the measure's cutoff (anywhere for AP, RR, R-precision): " + "; ".join(parts) + ". (E x) beside a "
            "value: its expected value over every ordering of the tied documents (McSherry & Najork, ECIR 2008), "
            "where it differs at four decimals.")


def _on_edge(model_rows: pd.DataFrame) -> bool:
    return "on_edge" in model_rows.columns and bool(model_rows["on_edge"].any())


def _points_line(summary: pd.DataFrame, spec: TableSpec) -> str:
    """How many grid points each model was tuned over (a range where rows differ)."""
    if "points" not in summary.columns:
        return ""
    parts = []
    for model in spec.models:
        counts = summary.loc[summary["model"] == model, "points"]
        low, high = int(counts.min()), int(counts.max())
        parts.append(f"{spec.model_labels.get(model, model)} {low if low == high else f'{low}-{high}'}")
    return "Grid points per model: " + ", ".join(parts) + "."


def _p_text(entry: pd.Series, spec: TableSpec) -> str:
    if spec.correction == "none":
        return f"{entry['p_value']:.4g}"
    return f"{entry['p_value']:.4g} / {entry['p_corrected']:.4g}"


_TEST_NAMES = {"ttest": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test", "randomization": "paired randomisation test"}


def _legend(spec: TableSpec, mark: str, edge_mark: str = EDGE_MARK) -> str:
    """What the numbers are and what the mark means, in words."""
    if spec.selection == "cv":
        chosen = f"each model at the parameters chosen by {spec.folds}-fold cross-validation over queries (by {spec.select_by})"
    elif spec.selection == "tuned":
        tuned = ", ".join(f"{queryset} on {other}" for queryset, other in spec.tune_on.items())
        chosen = f"each model at its best parameter point by {spec.select_by} on another query set ({tuned})"
    else:
        chosen = f"each model at its best parameter point by {spec.select_by} (best run: an oracle choice)"
    correction = "" if spec.correction == "none" else f", {spec.correction.capitalize()}-corrected over the models"
    test = _TEST_NAMES.get(spec.test, spec.test)
    if spec.alternative != "two-sided":
        direction = "better" if spec.alternative == "greater" else "worse"
        test = f"one-sided {test} (is the model {direction} than the baseline?)"
    return (f"{chosen}. {mark}: {test} against {spec.baseline}{correction}, p < {spec.alpha}. {edge_mark}: the "
            f"model's best point by {spec.select_by} is on an edge of its grid (extend the grid).")


def to_markdown(summary: pd.DataFrame, spec: TableSpec) -> str:
    header, body = _grid(summary, spec, lambda rows, model: _plain_cell(rows, spec, SIGNIFICANT_MARK))
    lines = [f"# {spec.title or spec.experiment}", ""]
    lines.append(f"Cells: {' / '.join(spec.measures)}; {_legend(spec, SIGNIFICANT_MARK)}")
    lines += ["", _points_line(summary, spec), ""]
    if _ties_line(summary, spec):
        lines += [_ties_line(summary, spec), ""]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    lines.extend("| " + " | ".join(row) + " |" for row in body)
    lines += ["", "## Chosen parameters and p-values", ""]
    p_heading = "p (raw / corrected)" if spec.correction != "none" else "p"
    lines.append(
        "| collection | query set | model | parameters | points | best point's grid edge | "
        + " | ".join(f"{p_heading} {m}" for m in spec.measures) + " |"
    )
    lines.append("|---|---|---|---|---:|---|" + "---:|" * len(spec.measures))
    for (collection, queryset, model), rows in summary.groupby(["collection", "queryset", "model"], sort=False):
        rows = rows.set_index("measure")
        p_values = ["baseline" if model == spec.baseline else _p_text(rows.loc[m], spec) for m in spec.measures]
        points = int(rows["points"].iloc[0]) if "points" in rows.columns else ""
        edge = rows["edge"].iloc[0] if "edge" in rows.columns else ""
        lines.append(f"| {collection} | {queryset} | {model} | {rows['params'].iloc[0]} | {points} | {edge} | "
                     + " | ".join(p_values) + " |")
    return "\n".join(lines) + "\n"


def to_latex(summary: pd.DataFrame, spec: TableSpec) -> str:
    def escape(text: str) -> str:
        for char, replacement in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"), ("&", r"\&"), ("#", r"\#")):
            text = text.replace(char, replacement)
        return text

    header, body = _grid(summary, spec, lambda rows, model: _plain_cell(rows, spec, r"$^\dagger$", r"$^\ddagger$"))
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
        + escape(_legend(spec, "MARK", "EDGEMARK")).replace("EDGEMARK", r"$^\ddagger$", 1)
        .replace("MARK", r"$^\dagger$", 1) + " " + escape(_points_line(summary, spec))
        + (" " + escape(_ties_line(summary, spec)) if _ties_line(summary, spec) else "")
        + "}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def to_html(summary: pd.DataFrame, spec: TableSpec) -> str:
    def cell(rows: pd.DataFrame, model: str) -> str:
        parts = []
        for measure in spec.measures:
            entry = rows.loc[measure]
            title = "baseline" if model == spec.baseline else f"p = {_p_text(entry, spec)}"
            mark = SIGNIFICANT_MARK if entry["significant"] else ""
            expected = _expected_text(entry)
            if expected:
                expected = (f'<span title="{int(entry["tied_queries"])} queries with ties touching a relevant '
                            f'document">{html.escape(expected)}</span>')
            parts.append(f'<span title="{html.escape(title)}">{entry["mean"]:.4f}{mark}</span>{expected}')
        edge = ""
        if _on_edge(rows):
            edge = f'<span title="{html.escape(rows["edge"].iloc[0])}">{EDGE_MARK}</span>'
        return " / ".join(parts) + edge

    header, body = _grid(summary, spec, cell)
    out = [f"<h2>{html.escape(spec.title or spec.experiment)}</h2>", "<table>"]
    out.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
    for row in body:
        out.append("<tr>" + f"<td>{html.escape(row[0])}</td>" + "".join(f"<td>{c}</td>" for c in row[1:]) + "</tr>")
    out.append("</table>")
    out.append(
        f"<p>{html.escape(' / '.join(spec.measures))}; {html.escape(_legend(spec, SIGNIFICANT_MARK))} "
        f"{html.escape(_points_line(summary, spec))} Hover a value for its p-value, {EDGE_MARK} for the edge.</p>"
    )
    if _ties_line(summary, spec):
        out.append(f"<p>{html.escape(_ties_line(summary, spec))}</p>")
    return "\n".join(out) + "\n"


def write_tables(summary: pd.DataFrame, spec: TableSpec, out_dir: str | os.PathLike, stem: str = "table") -> dict[str, Path]:
    """Write {stem}.{md,tex,html,csv} into ``out_dir``; the CSV is the long summary with p-values."""
    out_dir = Path(out_dir)
    paths = {suffix: out_dir / f"{stem}.{suffix}" for suffix in ("md", "tex", "html", "csv")}
    write_text(to_markdown(summary, spec), paths["md"])
    write_text(to_latex(summary, spec), paths["tex"])
    write_text(to_html(summary, spec), paths["html"])
    write_text(summary.to_csv(index=False), paths["csv"])
    return paths

