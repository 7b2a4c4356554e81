"""The constraint-violation experiment: analyse each model's best run, tabulate, correlate.

:mod:`irgrid.axioms.counting` counts the violations of constraints C1-C4 in one run;
this module does what the paper does with those counts:

1. per collection, query set and analyzer, take each weighting function's best
   run (by the experiment's selection measure, as for the tables);
2. count violations over its top ``depth`` documents;
3. report violations per document per query for each constraint and function
   (the paper's Table 2) beside each function's mean of the selection measure,
   and Spearman's rho between total violations and that measure across the
   functions, with its p-value.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import pandas as pd

from ..grid import decode_point
from ..io import write_parquet, write_text
from ..stats import spearman
from ..tables import TableSpec, select_point
from .counting import CONSTRAINTS, analyse_runs, summarise_violations


def analyse_best_runs(cells: pd.DataFrame, spec: TableSpec, families: dict[str, str], depth: int = 1000) -> pd.DataFrame:
    """Violations per (query, document) of every model's best run on one collection.

    ``cells``: collection, queryset (row label), analyzer, model, params, path (evaluation),
    run, index, topics. Returns the per-document counts with the row's keys.
    """
    from ..index import IndexReader
    from ..retrieve import read_run, read_topics
    from ..tables import load_cells

    evaluations = load_cells(cells)
    best_spec = TableSpec(**{**spec.__dict__, "selection": "best"})
    frames = []
    for (collection, queryset), row in evaluations.groupby(["collection", "queryset"], sort=False):
        row_cells = cells[(cells["collection"] == collection) & (cells["queryset"] == queryset)]
        index_path = row_cells["index"].iloc[0]
        index = IndexReader(index_path)
        topics = read_topics(row_cells["topics"].iloc[0])
        best = []
        for model in spec.models:
            params, _ = select_point(row[row["model"] == model], best_spec)
            best.append((model, params, row_cells[(row_cells["model"] == model) & (row_cells["params"] == params)].iloc[0]))
        # all the row's runs at once: their top documents, mostly the same, are laid out once per query
        per_run = analyse_runs(index, [(read_run(cell["run"]), families[model], decode_point(params))
                                       for model, params, cell in best], topics, depth=depth)
        for (model, params, cell), per_doc in zip(best, per_run):
            frames.append(
                per_doc.assign(collection=collection, queryset=queryset, analyzer=cell["analyzer"], model=model, params=params)
            )
    return pd.concat(frames, ignore_index=True)


def write_violations(per_doc: pd.DataFrame, path: str | os.PathLike) -> None:
    import pyarrow as pa

    write_parquet(pa.Table.from_pandas(per_doc, preserve_index=False), path)


def violations_per_document(per_doc: pd.DataFrame) -> pd.DataFrame:
    """Violations per document per query (axioms.summarise_violations) of each analysed best run."""
    keys = ["collection", "queryset", "model", "params"]
    rows = []
    for key, run in per_doc.groupby(keys, sort=False):
        summary = summarise_violations(run).iloc[0]
        rows.append({**dict(zip(keys, key)), **{name: summary[name] for name in (*CONSTRAINTS, "total")}})
    return pd.DataFrame(rows)


def violation_summary(per_doc: pd.DataFrame, evaluations: pd.DataFrame, spec: TableSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-function table: violations and mean measure; per-row Spearman rho and p)."""
    violations = violations_per_document(per_doc)
    means = (
        evaluations[evaluations["measure"] == spec.select_by]
        .groupby(["collection", "queryset", "model", "params"], sort=False)["value"]
        .mean()
        .rename(spec.select_by)
        .reset_index()
    )
    table = violations.merge(means, on=["collection", "queryset", "model", "params"], how="left")
    # Each function's place within its row (1 = fewest violations / best measure), so a reader
    # sees directly whether removing stop words reorders the functions.
    by_row = table.groupby(["collection", "queryset"], sort=False)
    table["rank_violations"] = by_row["total"].rank(method="min").astype(int)
    table["rank_measure"] = by_row[spec.select_by].rank(method="min", ascending=False).astype(int)
    correlations = []
    for (collection, queryset), row in table.groupby(["collection", "queryset"], sort=False):
        rho, p_value = spearman(row["total"].to_numpy(), row[spec.select_by].to_numpy())
        correlations.append(
            {"collection": collection, "queryset": queryset, "functions": len(row), "rho": rho, "p_value": p_value}
        )
    return table, pd.DataFrame(correlations)


def _rows(table: pd.DataFrame, spec: TableSpec) -> list[list[str]]:
    rows = []
    for _, entry in table.iterrows():
        rows.append(
            [f"{entry['collection']} ({entry['queryset']})", spec.model_labels.get(entry["model"], entry["model"]),
             entry["params"]]
            + [f"{entry[c]:.2f}" for c in (*CONSTRAINTS, "total")]
            + [f"{entry[spec.select_by]:.4f}", f"{entry['rank_violations']} / {entry['rank_measure']}"]
        )
    return rows


def _correlation_rows(correlations: pd.DataFrame) -> list[list[str]]:
    return [
        [f"{entry['collection']} ({entry['queryset']})", str(entry["functions"]), f"{entry['rho']:.3f}",
         f"{entry['p_value']:.4g}"]
        for _, entry in correlations.iterrows()
    ]


def violation_tables(table: pd.DataFrame, correlations: pd.DataFrame, spec: TableSpec) -> dict[str, str]:
    """The violation table and the correlations as Markdown, LaTeX, HTML and CSV texts."""
    header = ["collection", "function", "parameters", *CONSTRAINTS, "total", spec.select_by,
              f"rank: violations / {spec.select_by}"]
    corr_header = ["collection", "functions", "Spearman ρ (total violations, " + spec.select_by + ")", "p"]
    rows, corr_rows = _rows(table, spec), _correlation_rows(correlations)
    legend = (
        f"Violations per document per query over the top documents of each function's best run (by {spec.select_by}); "
        f"ρ: Spearman's correlation between total violations and {spec.select_by} across the functions of a row. "
        "C1-C4 are defined in docs/axioms.md."
    )

    def markdown(head, body):
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        return out + ["| " + " | ".join(row) + " |" for row in body]

    md = [f"# {spec.title or spec.experiment}: constraint violations", "", legend, ""]
    md += markdown(header, rows) + ["", "## Violations against effectiveness", ""] + markdown(corr_header, corr_rows)

    def latex(head, body):
        def escape(text):
            return text.replace("_", r"\_").replace("%", r"\%").replace("&", r"\&").replace("ρ", r"$\rho$")

        out = [r"\begin{tabular}{" + "l" * 3 + "r" * (len(head) - 3) + "}", r"\toprule",
               " & ".join(map(escape, head)) + r" \\", r"\midrule"]
        out += [" & ".join(map(escape, row)) + r" \\" for row in body]
        return out + [r"\bottomrule", r"\end{tabular}"]

    tex = ([r"\begin{table}", r"\centering"] + latex(header, rows) + [r"\medskip"]
           + latex(corr_header + [""], [r + [""] for r in corr_rows]))
    tex += [r"\caption{" + legend.replace("ρ", r"$\rho$") + "}", r"\end{table}"]

    def html_table(head, body):
        out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body]
        return out + ["</table>"]

    page = [f"<h2>{html.escape(spec.title or spec.experiment)}: constraint violations</h2>"]
    page += html_table(header, rows) + html_table(corr_header, corr_rows) + [f"<p>{html.escape(legend)}</p>"]
    merged = table.merge(correlations, on=["collection", "queryset"], how="left")
    return {
        "md": "\n".join(md) + "\n",
        "tex": "\n".join(tex) + "\n",
        "html": "\n".join(page) + "\n",
        "csv": merged.to_csv(index=False),
    }


def write_violation_tables(table: pd.DataFrame, correlations: pd.DataFrame, spec: TableSpec, out_dir: str | os.PathLike) -> None:
    for suffix, text in violation_tables(table, correlations, spec).items():
        write_text(text, Path(out_dir) / f"violations.{suffix}")
