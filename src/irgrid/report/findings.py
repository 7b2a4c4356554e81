"""Each claim of an experiment (``claims:``) evaluated on every table row (collection, query set).

A verdict is decided at the points of a selection that cannot reward a model for having more grid
points: cross-validation over queries or parameters tuned on another query set (the experiment's
``verdict_selection``). The best run, an oracle that does reward them, is shown beside it and
labelled as such. For a claim "``better`` > ``than`` on ``measure``" and a row, over the row's
judged queries:

- ``difference``: mean of the per-query differences ``better - than``, with its 95% paired
  bootstrap confidence interval ``ci_low``, ``ci_high`` (:func:`irgrid.evaluation.stats.bootstrap_ci`,
  seeded with the experiment's ``seed``); ``direction``: ``higher``, ``lower`` or ``tie``;
- ``p_value``, ``p_corrected``, ``significant``: the experiment's own test (``test``,
  ``alternative``) corrected with its ``correction`` over the comparisons of every other model
  with ``than`` on that row and measure (for ``than`` = the baseline, the table's own family);
- ``paper_p``, ``paper_significant``: the paper's own test (``paper_test``), as the paper ran it
  (uncorrected unless it says otherwise, its sidedness and alpha); empty where it reports none;
- ``points_*``, ``edge_*``: how many grid points each model was tuned over on the row, and where
  its best point sits (``edge: extend the grid`` when it is on an edge that could move);
- ``verdict``: for a claim of a significant difference (``kind: significant``), ``holds``
  (corrected test rejects, difference > 0), ``opposite`` (the test in the other direction rejects,
  difference < 0; a one-sided test is run the other way for it) or ``no difference``; for a claim
  of a direction only (``kind: direction``), ``direction holds``, ``direction reversed`` or
  ``tie``, with significance in its own column. ``no judged queries`` for a row whose query set has
  none; ``no rows`` for a claim about query sets this run does not have;
- ``note``: where the bootstrap CI and the corrected test disagree, or the paper's test and the
  corrected one: the verdict is the corrected test's, and the note says so;
- ``oracle_*``: the same difference, corrected p and verdict at each model's best run.

A ``larger_on`` claim compares gains: ``mean_better`` is the mean gain (better − than) on the
subset's queries, ``mean_than`` the mean gain over all the row's queries, ``difference`` their
difference; its test is Welch's t-test of the subset's per-query gains against the other queries'.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..evaluation.stats import bootstrap_ci, correct_p_values, paired_test
from ..io import write_text
from ..tables import QUERY_SUBSETS, GridPosition, TableSpec, chosen_points, grid_positions
from .claims import Claim, PaperTest

SIGNIFICANCE_VERDICTS = ("holds", "opposite", "no difference")
DIRECTION_VERDICTS = ("direction holds", "direction reversed", "tie")
VERDICTS = (*SIGNIFICANCE_VERDICTS, *DIRECTION_VERDICTS, "untestable", "no judged queries", "no rows")
CONFIDENCE = 0.95
RESAMPLES = 10_000
COLUMNS = ["claim", "text", "kind", "collection", "queryset", "better", "than", "measure", "selection",
           "num_queries", "points_better", "points_than", "edge_better", "edge_than",
           "mean_better", "mean_than", "difference", "ci_low", "ci_high", "direction",
           "test", "alternative", "correction", "p_value", "p_corrected", "significant",
           "paper_test", "paper_p", "paper_significant",
           "verdict", "decided_by", "note", "oracle_difference", "oracle_p_corrected", "oracle_verdict"]
_OPPOSITE = {"greater": "less", "less": "greater", "two-sided": "two-sided"}
_TEST_NAMES = {"ttest": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
               "randomization": "paired randomisation test"}
_SELECTION_NAMES = {"cv": "cross-validated points", "tuned": "points tuned on another query set",
                    "best": "best run (oracle)"}


def _per_query(chosen: dict[str, tuple[str, pd.DataFrame]], model: str, measure: str) -> pd.Series:
    values = chosen[model][1]
    return values[values["measure"] == measure].set_index("qid")["value"]


def _nan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def direction_of(difference: float) -> str:
    return "higher" if difference > 0 else "lower" if difference < 0 else "tie"


def verdict(difference: float, p_corrected: float, alpha: float, num_queries: int, kind: str = "significant",
            p_opposite: float | None = None) -> str:
    """The claim's verdict on one row. ``p_opposite``: the corrected p of the test in the other
    direction (a one-sided test's ``opposite`` needs its own test; None: ``p_corrected``, two-sided)."""
    if num_queries == 0:
        return "no judged queries"
    if kind == "direction":
        return {"higher": "direction holds", "lower": "direction reversed", "tie": "tie"}[direction_of(difference)]
    p_against = p_corrected if p_opposite is None else p_opposite
    if difference > 0 and not _nan(p_corrected) and p_corrected < alpha:
        return "holds"
    if difference < 0 and not _nan(p_against) and p_against < alpha:
        return "opposite"
    return "no difference"


class _Row:
    """The per-query values and family tests of one row at one selection's chosen points."""

    def __init__(self, chosen: Mapping[str, tuple[str, pd.DataFrame]], spec: TableSpec):
        self.chosen, self.spec = chosen, spec
        self._values: dict[tuple[str, str], pd.Series] = {}
        self._families: dict[tuple[str, str, str, str, str], tuple[list[str], list[float], np.ndarray]] = {}

    def values(self, model: str, measure: str) -> pd.Series:
        key = (model, measure)
        if key not in self._values:
            self._values[key] = _per_query(self.chosen, model, measure)
        return self._values[key]

    def family_p(self, claim: Claim, test: str, alternative: str, correction: str) -> tuple[float, float]:
        """(raw, corrected) p of ``claim.better`` against ``claim.than`` in the family of every model
        against ``than`` on this row and measure (the table's family when ``than`` is the baseline)."""
        key = (claim.than, claim.measure, test, alternative, correction)
        if key not in self._families:
            family = [model for model in self.spec.models if model != claim.than]
            p_values = []
            for model in family:
                try:
                    result = paired_test(test, self.values(model, claim.measure), self.values(claim.than, claim.measure),
                                         alternative=alternative)
                    p_values.append(result.p_value)
                except ValueError:  # e.g. a test undefined on these values: untested, not in the family
                    p_values.append(math.nan)
            self._families[key] = (family, p_values, correct_p_values(p_values, correction))
        family, p_values, corrected = self._families[key]
        index = family.index(claim.better)
        return float(p_values[index]), float(corrected[index])


def _judge(row: _Row, claim: Claim, spec: TableSpec) -> dict:
    """Difference, the experiment's corrected test (both directions) and the verdict at one selection."""
    better, than = row.values(claim.better, claim.measure), row.values(claim.than, claim.measure)
    difference = float((better - than.reindex(better.index)).mean())
    p_value, p_corrected = row.family_p(claim, spec.test, spec.alternative, spec.correction)
    p_opposite = None
    if spec.alternative != "two-sided" and difference < 0:
        _, p_opposite = row.family_p(claim, spec.test, _OPPOSITE[spec.alternative], spec.correction)
    return {"difference": difference, "p_value": p_value, "p_corrected": p_corrected,
            "significant": _significant(difference, p_corrected, p_opposite, spec.alpha),
            "verdict": verdict(difference, p_corrected, spec.alpha, int(than.size), claim.kind, p_opposite),
            "mean_better": float(better.mean()), "mean_than": float(than.mean()), "num_queries": int(than.size)}


def _significant(difference: float, p_corrected: float, p_opposite: float | None, alpha: float) -> str:
    """Whether the corrected test rejects, and which way: ``yes``, ``yes, the other way`` or ``no``."""
    if difference > 0 and not _nan(p_corrected) and p_corrected < alpha:
        return "yes"
    p_against = p_corrected if p_opposite is None else p_opposite
    if difference < 0 and not _nan(p_against) and p_against < alpha:
        return "yes, the other way"
    return "no"


def _paper(row: _Row, claim: Claim, paper_test: PaperTest | None, difference: float) -> dict:
    if paper_test is None:
        return {"paper_test": "none (the paper reports a direction only)", "paper_p": math.nan, "paper_significant": ""}
    _, p = row.family_p(claim, paper_test.test, paper_test.alternative, paper_test.correction)
    p_opposite = None
    if paper_test.alternative != "two-sided" and difference < 0:
        _, p_opposite = row.family_p(claim, paper_test.test, _OPPOSITE[paper_test.alternative], paper_test.correction)
    return {"paper_test": paper_test.describe(), "paper_p": p,
            "paper_significant": _significant(difference, p, p_opposite, paper_test.alpha)}


def _decided_by(claim: Claim, spec: TableSpec) -> str:
    where = f"at the {_SELECTION_NAMES.get(spec.selection, spec.selection)}"
    if claim.kind == "direction":
        return f"sign of the mean difference {where}"
    sided = "two-sided" if spec.alternative == "two-sided" else "one-sided"
    correction = "" if spec.correction == "none" else f", {spec.correction}-corrected"
    return f"{_TEST_NAMES.get(spec.test, spec.test)} ({sided}{correction}), alpha {spec.alpha:g}, {where}"


def _note(line: dict, claim: Claim) -> str:
    notes = []
    ci_excludes_zero = not _nan(line.get("ci_low")) and (line["ci_low"] > 0 or line["ci_high"] < 0)
    significant = line["significant"] != "no"
    if ci_excludes_zero and not significant:
        notes.append("the bootstrap CI excludes 0 but the corrected test does not reject")
    elif significant and not ci_excludes_zero and not _nan(line.get("ci_low")):
        notes.append("the corrected test rejects but the bootstrap CI includes 0")
    paper = line.get("paper_significant") or ""
    if paper and (paper != "no") != significant:
        notes.append(f"the paper's test says {'significant' if paper != 'no' else 'not significant'}, "
                     f"the corrected test {'significant' if significant else 'not significant'}")
    if notes and claim.kind == "significant":
        notes.append("the verdict is the corrected test's")
    return "; ".join(notes)


def _edge(position: GridPosition | None) -> str:
    return "" if position is None else position.describe()


def evaluate_claims(evaluations: pd.DataFrame, spec: TableSpec, claims: Sequence[Claim],
                    rows: Sequence[tuple[str, str]] = (), confidence: float = CONFIDENCE,
                    resamples: int = RESAMPLES, method: str = "BCa",
                    chosen_by_row: Mapping[tuple[str, str], Mapping[str, tuple[str, pd.DataFrame]]] | None = None,
                    paper_test: PaperTest | None = None,
                    oracle_by_row: Mapping[tuple[str, str], Mapping[str, tuple[str, pd.DataFrame]]] | None = None,
                    subsets: Mapping[tuple[str, str], Mapping[str, set[str]]] | None = None) -> pd.DataFrame:
    """One line per claim and row (``COLUMNS``), decided at ``spec.selection``'s points.

    ``rows``: every (collection, queryset) the experiment runs, so a row without judged queries
    (absent from ``evaluations``) still gets its line. ``chosen_by_row`` / ``oracle_by_row``:
    :func:`irgrid.tables.chosen_points` of ``evaluations`` under ``spec`` / under the best run,
    when the caller has them already. ``subsets``: (collection, queryset) -> subset -> qids
    (:func:`irgrid.tables.query_subsets`), for ``larger_on`` claims.
    """
    have_values = not evaluations.empty
    if chosen_by_row is None:
        chosen_by_row = chosen_points(evaluations, spec) if have_values else {}
    if oracle_by_row is None:
        oracle_spec = replace(spec, selection="best")
        oracle_by_row = chosen_by_row if spec.selection == "best" else (
            chosen_points(evaluations, oracle_spec) if have_values else {})
    positions = grid_positions(evaluations, spec) if have_values else {}
    all_rows = list(dict.fromkeys([*rows, *chosen_by_row]))
    if spec.selection == "tuned":
        all_rows = [row for row in all_rows if row[1] in spec.tune_on]
    decided, oracle = {}, {}
    lines = []
    for claim in claims:
        claim_rows = [row for row in all_rows if claim.applies_to(row[1])]
        base = {"claim": claim.describe(spec.model_labels), "text": claim.text, "kind": claim.kind,
                "better": claim.better, "than": claim.than, "measure": claim.measure, "selection": spec.selection,
                "test": spec.test, "alternative": spec.alternative, "correction": spec.correction,
                "decided_by": _decided_by(claim, spec)}
        if not claim_rows:
            lines.append({**base, "collection": "", "queryset": "", "num_queries": 0, "verdict": "no rows",
                          "note": f"this run has no row of the query sets {list(claim.querysets)}"})
            continue
        for collection, queryset in claim_rows:
            row = (collection, queryset)
            line = {**base, "collection": collection, "queryset": queryset,
                    "points_better": _points(positions, row, claim.better),
                    "points_than": _points(positions, row, claim.than),
                    "edge_better": _edge(positions.get((*row, claim.better))),
                    "edge_than": _edge(positions.get((*row, claim.than)))}
            if not chosen_by_row.get(row) or _per_query(chosen_by_row[row], claim.than, claim.measure).empty:
                lines.append({**line, "num_queries": 0, "verdict": "no judged queries"})
                continue
            decided.setdefault(row, _Row(chosen_by_row[row], spec))
            oracle.setdefault(row, _Row(oracle_by_row[row], replace(spec, selection="best")))
            if claim.larger_on:
                lines.append(_subset_line(line, claim, decided[row], oracle[row], spec,
                                          (subsets or {}).get(row, {}).get(claim.larger_on, set()), resamples))
                continue
            judged = _judge(decided[row], claim, spec)
            low, high = bootstrap_ci(decided[row].values(claim.better, claim.measure),
                                     decided[row].values(claim.than, claim.measure), confidence=confidence,
                                     num_resamples=resamples, seed=spec.seed, method=method)
            best = _judge(oracle[row], claim, spec)
            line = {**line, **judged, "ci_low": low, "ci_high": high, "direction": direction_of(judged["difference"]),
                    **_paper(decided[row], claim, paper_test, judged["difference"]),
                    "oracle_difference": best["difference"], "oracle_p_corrected": best["p_corrected"],
                    "oracle_verdict": best["verdict"]}
            line["note"] = _note(line, claim)
            lines.append(line)
    return pd.DataFrame(lines, columns=COLUMNS)


def _points(positions: Mapping[tuple[str, str, str], GridPosition], row: tuple[str, str], model: str) -> float:
    position = positions.get((*row, model))
    return math.nan if position is None else position.points


def _gains(row: _Row, claim: Claim) -> pd.Series:
    better, than = row.values(claim.better, claim.measure), row.values(claim.than, claim.measure)
    return (better - than.reindex(better.index)).sort_index()


def _subset_gain(gains: pd.Series, qids: set[str]) -> tuple[float, float, float, int]:
    """(mean gain on the subset, mean gain over all, Welch's two-sided p, subset size)."""
    inside = gains.index.astype(str).isin(qids)
    if not inside.any() or inside.all():
        return math.nan, float(gains.mean()), math.nan, int(inside.sum())
    # deferred: scipy is imported only for the tests a claim asks for
    from scipy import stats as scipy_stats

    p = float(scipy_stats.ttest_ind(gains[inside], gains[~inside], equal_var=False).pvalue)
    return float(gains[inside].mean()), float(gains.mean()), p, int(inside.sum())


def _subset_line(line: dict, claim: Claim, decided: _Row, oracle: _Row, spec: TableSpec, qids: set[str],
                 resamples: int) -> dict:
    """A ``larger_on`` claim on one row: the gain on the subset against the gain over all queries."""
    gains = _gains(decided, claim)
    on_subset, overall, p, size = _subset_gain(gains, qids)
    difference = on_subset - overall
    low = high = math.nan
    if size and size < len(gains):
        # stratified percentile bootstrap: the subset's and the other queries' gains resampled apart
        rng = np.random.default_rng(spec.seed)
        inside = gains.index.astype(str).isin(qids)
        a, b = gains[inside].to_numpy(), gains[~inside].to_numpy()
        means_a = rng.choice(a, size=(resamples, len(a))).mean(axis=1)
        means_b = rng.choice(b, size=(resamples, len(b))).mean(axis=1)
        resampled = means_a - (len(a) * means_a + len(b) * means_b) / (len(a) + len(b))
        low, high = (float(v) for v in np.percentile(resampled, [2.5, 97.5]))
    significant = "no" if _nan(p) or p >= spec.alpha else ("yes" if difference > 0 else "yes, the other way")
    oracle_subset, oracle_all, oracle_p, _ = _subset_gain(_gains(oracle, claim), qids)
    oracle_difference = oracle_subset - oracle_all
    done = {**line, "num_queries": int(len(gains)), "mean_better": on_subset, "mean_than": overall,
            "difference": difference, "ci_low": low, "ci_high": high,
            "direction": direction_of(difference),
            "test": "welch", "alternative": "two-sided", "correction": "none", "p_value": p, "p_corrected": p,
            "significant": significant, "paper_test": "none (the paper reports a direction only)",
            "paper_p": math.nan, "paper_significant": "",
            "decided_by": (f"sign of the gain on the {size} '{claim.larger_on}' queries minus the gain over all "
                           f"{len(gains)}, at the {_SELECTION_NAMES.get(spec.selection, spec.selection)}; "
                           "Welch's t-test (subset against the other queries) beside it"),
            "oracle_difference": oracle_difference, "oracle_p_corrected": oracle_p,
            "oracle_verdict": verdict(oracle_difference, oracle_p, spec.alpha, len(gains), "direction")}
    if not size or size == len(gains):
        # nothing to compare the subset with: every query is in it, or none is
        done.update(verdict="untestable", direction="", oracle_verdict="untestable",
                    note=f"{size} of the row's {len(gains)} queries are '{claim.larger_on}' queries: "
                         "no other queries to compare their gain with")
        return done
    done["verdict"] = verdict(difference, p, spec.alpha, len(gains), claim.kind)
    done["note"] = _note(done, claim)
    return done


def claim_summary(findings: pd.DataFrame) -> pd.DataFrame:
    """Per claim: on how many rows each verdict came out."""
    counts = findings.groupby(["claim"], sort=False)["verdict"].value_counts().unstack(fill_value=0)
    return counts.reindex(columns=[v for v in VERDICTS if v in counts.columns]).reset_index()


def _number(value, digits: int = 4) -> str:
    return "" if _nan(value) else f"{value:+.{digits}f}"


def _p(value) -> str:
    return "" if _nan(value) else f"{value:.3g}"


def _count(value) -> str:
    return "" if _nan(value) else str(int(value))


def _row_label(collection: str, queryset: str) -> str:
    return f"{collection} ({queryset})" if collection else "(none)"


def _edges(line) -> str:
    parts = [f"{role}: {text}" for role, text in (("better", line.edge_better), ("than", line.edge_than))
             if isinstance(text, str) and text]
    return "; ".join(parts)


def _oracle(line) -> str:
    if _nan(line.oracle_difference):
        return ""
    return f"{_number(line.oracle_difference)}, p {_p(line.oracle_p_corrected)}, {line.oracle_verdict}"


def _selection_sentence(findings: pd.DataFrame) -> str:
    selection = findings["selection"].iloc[0]
    return (f"Verdicts are decided at the {_SELECTION_NAMES.get(selection, selection)}, which cannot reward a "
            "model for having more grid points; the best run (an oracle that can) is shown beside each.")


def findings_markdown(findings: pd.DataFrame, title: str, alpha: float) -> str:
    lines = [f"# Findings: {title}", ""]
    if findings.empty:
        return "\n".join(lines + ["The experiment states no claims (`claims:` in its file).", ""])
    lines += [_selection_sentence(findings) + " Difference = mean per-query difference (better − than) with its "
              "95% paired bootstrap CI; p = the experiment's test, corrected over the comparisons with the same "
              f"model; paper p = the paper's own test; alpha = {alpha}. Points: grid points of the two models.", ""]
    for claim, group in findings.groupby("claim", sort=False):
        first = group.iloc[0]
        text = first["text"]
        lines += [f"## {claim}{': ' + text if text else ''}", "",
                  f"Claim of a {'significant difference' if first['kind'] == 'significant' else 'direction'}; "
                  f"decided by the {first['decided_by']}.", "",
                  "| row | queries | points | difference | 95% CI | p (raw / corrected) | paper p | verdict | "
                  "best run (oracle) | grid edges | note |",
                  "|---|---:|---|---:|---|---|---|---|---|---|---|"]
        for line in group.itertuples(index=False):
            ci = f"[{_number(line.ci_low)}, {_number(line.ci_high)}]" if not _nan(line.ci_low) else ""
            p = f"{_p(line.p_value)} / {_p(line.p_corrected)}" if not _nan(line.p_value) else ""
            points = f"{_count(line.points_better)} / {_count(line.points_than)}" if line.num_queries else ""
            lines.append(f"| {_row_label(line.collection, line.queryset)} | {line.num_queries} | {points} | "
                         f"{_number(line.difference)} | {ci} | {p} | {_p(line.paper_p)} | {line.verdict} | "
                         f"{_oracle(line)} | {_edges(line)} | {line.note if isinstance(line.note, str) else ''} |")
        lines.append("")
    return "\n".join(lines)


def findings_html(findings: pd.DataFrame, alpha: float) -> str:
    """An HTML fragment: one table per claim, the verdict coloured and spelled out."""
    if findings.empty:
        return "<p>The experiment states no claims (<code>claims:</code> in its file).</p>\n"
    out = [f"<p class='legend'>{html.escape(_selection_sentence(findings))}</p>"]
    for claim, group in findings.groupby("claim", sort=False):
        first = group.iloc[0]
        text = first["text"]
        verdicts = group["verdict"].value_counts()
        tally = ", ".join(f"{verdicts[v]} {v}" for v in VERDICTS if v in verdicts)
        out.append(f"<h4>{html.escape(claim)}</h4>")
        kind = "a significant difference" if first["kind"] == "significant" else "a direction"
        said = f"The paper: “{html.escape(text)}” ({kind}). " if text else f"A claim of {kind}. "
        out.append(f"<p class='claim'>{said}On {len(group)} rows: {html.escape(tally)}. Decided by the "
                   f"{html.escape(str(first['decided_by']))}.</p>")
        out.append("<div class='scroll'><table class='findings'><thead><tr><th>row</th><th>queries</th>"
                   "<th>points (better / than)</th><th>mean better / than</th><th>difference</th><th>95% CI</th>"
                   "<th>p raw</th><th>p corrected</th><th>paper p</th><th>verdict</th><th>best run (oracle)</th>"
                   "<th>grid edges</th><th>note</th></tr></thead><tbody>")
        for line in group.itertuples(index=False):
            css = "verdict-" + line.verdict.replace(" ", "-")
            if line.num_queries and not _nan(line.difference):
                means = f"{line.mean_better:.4f} / {line.mean_than:.4f}" if not _nan(line.mean_better) else ""
                ci = f"[{_number(line.ci_low)}, {_number(line.ci_high)}]" if not _nan(line.ci_low) else ""
                cells = [str(line.num_queries), f"{_count(line.points_better)} / {_count(line.points_than)}", means,
                         _number(line.difference), ci, _p(line.p_value), _p(line.p_corrected), _p(line.paper_p)]
            else:
                cells = [str(line.num_queries), "", "", "", "", "", "", ""]
            note = line.note if isinstance(line.note, str) else ""
            out.append(f"<tr><td>{html.escape(_row_label(line.collection, line.queryset))}</td>"
                       + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells)
                       + f"<td class='{css}'>{html.escape(line.verdict)}</td>"
                       + "".join(f"<td>{html.escape(cell)}</td>" for cell in (_oracle(line), _edges(line), note))
                       + "</tr>")
        out.append("</tbody></table></div>")
    out.append(f"<p class='legend'>Difference: mean per-query difference (better − than), with a 95% paired "
               f"bootstrap CI ({RESAMPLES:,} resamples, BCa). p: the experiment's test, corrected over the "
               f"comparisons with the same model; paper p: the paper's own test as it ran it; verdict at alpha = "
               f"{alpha}. Grid edges: a best point on an edge of its grid (extend the grid).</p>")
    return "\n".join(out) + "\n"


def write_findings(findings: pd.DataFrame, title: str, alpha: float, out_dir) -> dict[str, str]:
    """findings.{md,html,csv} in ``out_dir`` (the experiment's table directory)."""

    out_dir = Path(out_dir)
    paths = {suffix: out_dir / f"findings.{suffix}" for suffix in ("md", "html", "csv")}
    write_text(findings_markdown(findings, title, alpha), paths["md"])
    write_text(findings_html(findings, alpha), paths["html"])
    write_text(findings.to_csv(index=False), paths["csv"])
    return {suffix: str(path) for suffix, path in paths.items()}


__all__ = ["COLUMNS", "VERDICTS", "QUERY_SUBSETS", "claim_summary", "evaluate_claims", "findings_html",
           "findings_markdown", "verdict", "write_findings"]
