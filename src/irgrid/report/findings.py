"""Each claim of an experiment (``claims:``) evaluated on every table row (collection, query set).

For a claim "``better`` > ``than`` on ``measure``" and a row, both models at the points the table
chose (best run, cross-validated or tuned), over the row's judged queries:

- ``difference``: mean of the per-query differences ``better - than``;
- ``ci_low``, ``ci_high``: its 95% paired bootstrap confidence interval (queries resampled with
  replacement, :func:`irgrid.stats.bootstrap_ci`, seeded with the experiment's ``seed``);
- ``p_value``: the experiment's paired test (``test``, ``alternative``) of ``better`` against
  ``than``; ``p_corrected``: corrected with the experiment's ``correction`` over the comparisons of
  every other model with ``than`` on that row and measure (for ``than`` = the baseline, the
  table's own family, so the numbers are the table's);
- ``verdict``: ``holds`` (corrected p < alpha, difference > 0), ``opposite`` (corrected p < alpha,
  difference < 0), ``no difference`` (otherwise), or ``no judged queries`` for a row whose query
  set has no judged query (the row is shown, with no numbers, rather than left out).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..stats import bootstrap_ci, correct_p_values, paired_test
from ..tables import TableSpec, chosen_points
from .claims import Claim

VERDICTS = ("holds", "opposite", "no difference", "no judged queries")
CONFIDENCE = 0.95
RESAMPLES = 10_000
COLUMNS = ["selection", "claim", "text", "collection", "queryset", "better", "than", "measure", "num_queries",
           "mean_better", "mean_than", "difference", "ci_low", "ci_high", "test", "alternative", "p_value",
           "correction", "p_corrected", "verdict"]


def _per_query(chosen: dict[str, tuple[str, pd.DataFrame]], model: str, measure: str) -> pd.Series:
    values = chosen[model][1]
    return values[values["measure"] == measure].set_index("qid")["value"]


def verdict(difference: float, p_corrected: float, alpha: float, num_queries: int) -> str:
    if num_queries == 0:
        return "no judged queries"
    if not math.isnan(p_corrected) and p_corrected < alpha and difference != 0:
        return "holds" if difference > 0 else "opposite"
    return "no difference"


def evaluate_claims(evaluations: pd.DataFrame, spec: TableSpec, claims: Sequence[Claim],
                    rows: Sequence[tuple[str, str]] = (), confidence: float = CONFIDENCE,
                    resamples: int = RESAMPLES, method: str = "BCa",
                    chosen_by_row: Mapping[tuple[str, str], Mapping[str, tuple[str, pd.DataFrame]]] | None = None
                    ) -> pd.DataFrame:
    """One line per claim and row (``COLUMNS``). ``rows``: every (collection, queryset) the experiment
    runs, so a row without judged queries (absent from ``evaluations``) still gets its line.
    ``chosen_by_row``: :func:`irgrid.tables.chosen_points` of ``evaluations`` under ``spec``, when the
    caller has it already (``irgrid findings`` reuses it for the per-query evidence)."""
    if chosen_by_row is None:
        chosen_by_row = chosen_points(evaluations, spec) if not evaluations.empty else {}
    all_rows = list(dict.fromkeys([*rows, *chosen_by_row]))
    if spec.selection == "tuned":
        all_rows = [row for row in all_rows if row[1] in spec.tune_on]
    # Claims share models and baselines: each model's values and each family's tests once per row.
    per_query_cache: dict[tuple, pd.Series] = {}
    family_cache: dict[tuple, tuple[list[str], list[float], np.ndarray]] = {}

    def per_query(row: tuple[str, str], model: str, measure: str) -> pd.Series:
        key = (row, model, measure)
        if key not in per_query_cache:
            per_query_cache[key] = _per_query(chosen_by_row[row], model, measure)
        return per_query_cache[key]

    def family_tests(row: tuple[str, str], than: str, measure: str) -> tuple[list[str], list[float], np.ndarray]:
        key = (row, than, measure)
        if key not in family_cache:
            family = [model for model in spec.models if model != than]
            p_values = []
            for model in family:
                try:
                    result = paired_test(spec.test, per_query(row, model, measure), per_query(row, than, measure),
                                         alternative=spec.alternative)
                    p_values.append(result.p_value)
                except ValueError:  # e.g. a test undefined on these values: untested, not in the family
                    p_values.append(math.nan)
            family_cache[key] = (family, p_values, correct_p_values(p_values, spec.correction))
        return family_cache[key]

    lines = []
    for claim in claims:
        for collection, queryset in all_rows:
            line = {"selection": spec.selection, "claim": claim.describe(spec.model_labels), "text": claim.text,
                    "collection": collection, "queryset": queryset, "better": claim.better, "than": claim.than,
                    "measure": claim.measure, "test": spec.test, "alternative": spec.alternative,
                    "correction": spec.correction}
            row = (collection, queryset)
            than = per_query(row, claim.than, claim.measure) if chosen_by_row.get(row) else pd.Series(dtype=float)
            if than.empty:
                lines.append({**line, "num_queries": 0, "verdict": verdict(0.0, math.nan, spec.alpha, 0)})
                continue
            family, p_values, corrected = family_tests(row, claim.than, claim.measure)
            better = per_query(row, claim.better, claim.measure)
            difference = float((better - than.reindex(better.index)).mean())
            low, high = bootstrap_ci(better, than, confidence=confidence, num_resamples=resamples, seed=spec.seed,
                                     method=method)
            index = family.index(claim.better)
            p_corrected = float(corrected[index])
            lines.append({**line, "num_queries": int(than.size), "mean_better": float(better.mean()),
                          "mean_than": float(than.mean()), "difference": difference, "ci_low": low, "ci_high": high,
                          "p_value": float(p_values[index]), "p_corrected": p_corrected,
                          "verdict": verdict(difference, p_corrected, spec.alpha, int(than.size))})
    return pd.DataFrame(lines, columns=COLUMNS)


def claim_summary(findings: pd.DataFrame) -> pd.DataFrame:
    """Per selection and claim: on how many rows each verdict came out."""
    counts = findings.groupby(["selection", "claim"], sort=False)["verdict"].value_counts().unstack(fill_value=0)
    return counts.reindex(columns=[v for v in VERDICTS if v in counts.columns]).reset_index()


def _number(value, digits: int = 4) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:+.{digits}f}"


def _p(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def _row_label(collection: str, queryset: str) -> str:
    return f"{collection} ({queryset})"


def findings_markdown(findings: pd.DataFrame, title: str, alpha: float) -> str:
    lines = [f"# Findings: {title}", ""]
    if findings.empty:
        return "\n".join(lines + ["The experiment states no claims (`claims:` in its file).", ""])
    lines += [f"Difference = mean per-query difference, 95% paired bootstrap CI; p raw / corrected; verdict at "
              f"alpha = {alpha}.", ""]
    for (selection, claim), group in findings.groupby(["selection", "claim"], sort=False):
        text = group["text"].iloc[0]
        lines += [f"## {claim} ({selection}){': ' + text if text else ''}", "",
                  "| row | queries | difference | 95% CI | p (raw / corrected) | verdict |",
                  "|---|---:|---:|---|---|---|"]
        for line in group.itertuples(index=False):
            ci = f"[{_number(line.ci_low)}, {_number(line.ci_high)}]" if line.num_queries else ""
            p = f"{_p(line.p_value)} / {_p(line.p_corrected)}" if line.num_queries else ""
            lines.append(f"| {_row_label(line.collection, line.queryset)} | {line.num_queries} | "
                         f"{_number(line.difference)} | {ci} | {p} | {line.verdict} |")
        lines.append("")
    return "\n".join(lines)


def findings_html(findings: pd.DataFrame, alpha: float) -> str:
    """An HTML fragment: one table per claim and selection, the verdict coloured and spelled out."""
    if findings.empty:
        return "<p>The experiment states no claims (<code>claims:</code> in its file).</p>\n"
    out = []
    for (selection, claim), group in findings.groupby(["selection", "claim"], sort=False):
        text = group["text"].iloc[0]
        verdicts = group["verdict"].value_counts()
        tally = ", ".join(f"{verdicts[v]} {v}" for v in VERDICTS if v in verdicts)
        out.append(f"<h4>{html.escape(claim)} <small>({html.escape(selection)})</small></h4>")
        if text:
            out.append(f"<p class='claim'>The paper: “{html.escape(text)}”. On {len(group)} rows: {html.escape(tally)}.</p>")
        out.append("<div class='scroll'><table class='findings'><thead><tr><th>row</th><th>queries</th>"
                   "<th>mean better / than</th><th>difference</th><th>95% CI</th><th>p raw</th>"
                   "<th>p corrected</th><th>verdict</th></tr></thead><tbody>")
        for line in group.itertuples(index=False):
            css = "verdict-" + line.verdict.replace(" ", "-")
            if line.num_queries:
                means = f"{line.mean_better:.4f} / {line.mean_than:.4f}"
                cells = [str(line.num_queries), means, _number(line.difference),
                         f"[{_number(line.ci_low)}, {_number(line.ci_high)}]", _p(line.p_value), _p(line.p_corrected)]
            else:
                cells = ["0", "", "", "", "", ""]
            out.append(f"<tr><td>{html.escape(_row_label(line.collection, line.queryset))}</td>"
                       + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells)
                       + f"<td class='{css}'>{html.escape(line.verdict)}</td></tr>")
        out.append("</tbody></table></div>")
    first = findings.iloc[0]
    out.append(f"<p class='legend'>Difference: mean per-query difference (better − than) at the table's chosen "
               f"points, with a 95% paired bootstrap CI ({RESAMPLES:,} resamples, BCa). p: {html.escape(first['test'])} "
               f"({html.escape(first['alternative'])}), corrected ({html.escape(first['correction'])}) over the "
               f"comparisons with the same model; verdict at alpha = {alpha}.</p>")
    return "\n".join(out) + "\n"




def write_findings(findings: pd.DataFrame, title: str, alpha: float, out_dir) -> dict[str, str]:
    """findings.{md,html,csv} in ``out_dir`` (the experiment's table directory)."""
    from pathlib import Path

    from ..io import write_text

    out_dir = Path(out_dir)
    paths = {suffix: out_dir / f"findings.{suffix}" for suffix in ("md", "html", "csv")}
    write_text(findings_markdown(findings, title, alpha), paths["md"])
    write_text(findings_html(findings, alpha), paths["html"])
    write_text(findings.to_csv(index=False), paths["csv"])
    return {suffix: str(path) for suffix, path in paths.items()}
