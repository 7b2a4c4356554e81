"""The constraint-violation experiment: analyse each model's best run, tabulate, correlate, check.

:mod:`irgrid.axioms.counting` counts the violations of constraints C1-C4 in one run;
this module does what the paper does with those counts:

1. per collection, query set and analyzer, take each weighting function's best
   run (by the experiment's selection measure, as for the tables);
2. count violations over its top ``depth`` documents, and over the top ``depth`` documents
   of one common benchmark run (``common_run``, the baseline's best run by default), so that
   every function is also counted on the same documents;
3. report violations per document per query for each constraint and function
   (the paper's Table 2) on both document sets, beside each function's mean of the
   selection measure, and Spearman's rho between total violations and that measure over
   the paper's functions (its figure) and over all the functions, with exact permutation
   p-values (:func:`irgrid.evaluation.stats.spearman_test`);
4. check the paper's two claims about them: violations and the measure are inversely
   correlated, and one function (ES) has the fewest violations.
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import ConfigError, InputFormatError
from ..evaluation.stats import spearman_test
from ..grid import decode_point
from ..index import IndexReader
from ..io import write_parquet, write_text
from ..jobs.chunk import recompute_run
from ..runs import read_run, read_topics
from ..tables import CellAggregates, TableSpec, best_points, point_means, read_table_evaluations
from .counting import CONSTRAINTS, analyse_runs, summarise_violations

#: ``counted_on`` of the per-document counts: the function's own best run, or the common run.
OWN, COMMON = "own", "common"
#: the function sets Spearman's rho is computed over: the paper's functions, and all of them.
PAPER, ALL = "paper", "all"
COUNT_COLUMNS = [*CONSTRAINTS, "total"]
#: the columns of the per-document counts that name the analysed run
RUN_KEYS = ["collection", "queryset", "model", "params", "counted_on"]
#: the common-run counts' columns in the violation table (the own-run ones are COUNT_COLUMNS)
COMMON_COLUMNS = [f"common_{name}" for name in COUNT_COLUMNS]
INVERSE_CORRELATION, FEWEST_VIOLATIONS = "inverse_correlation", "fewest_violations"


def analyse_best_runs(cells: pd.DataFrame, spec: TableSpec, families: dict[str, str], depth: int = 1000,
                      common_run: str | None = None, run_depth: int | None = None) -> pd.DataFrame:
    """Violations per (query, document) of every model's best run on one collection.

    ``cells``: collection, queryset (row label), analyzer, model, params, path (evaluation),
    run, index, topics. Returns the per-document counts with the row's keys and ``counted_on``:
    ``own`` for the documents of the model's own best run; with ``common_run`` (a model name),
    also ``common`` for the documents of that model's best run, counted with each model.
    ``run_depth``: the retrieval depth the runs were made at; the best runs are then scored again
    here (irgrid.jobs.chunk.recompute_run: the workflow keeps no runs), else read from ``run``.
    """
    if common_run is not None and common_run not in spec.models:
        raise ConfigError(f"the common run's model {common_run!r} is not one of the models {list(spec.models)}")
    # each model's best point from the cells' means (irgrid.tables.aggregates), not every cell's rows
    frames = []
    for (collection, queryset), best_of_model in best_points(read_table_evaluations(cells, spec.select_by),
                                                             spec).items():
        row_cells = cells[(cells["collection"] == collection) & (cells["queryset"] == queryset)]
        index_path = row_cells["index"].iloc[0]
        index = IndexReader(index_path)
        topics = read_topics(row_cells["topics"].iloc[0])
        best = []
        for model in spec.models:
            params = best_of_model[model]
            cell = row_cells[(row_cells["model"] == model) & (row_cells["params"] == params)].iloc[0]
            if run_depth is None:
                run = read_run(cell["run"])
            else:
                run = recompute_run(index, topics, families[model], params, run_depth).to_pandas()
                run = run.astype({"qid": object, "docno": object})  # the columns read_run gives
            best.append((model, params, cell, run))
        runs = [(run, families[model], decode_point(params)) for model, params, _, run in best]
        counted_on = [OWN] * len(best)
        if common_run is not None:
            # each model again, on the common run's documents: analyse_runs scores a (family, point)
            # once per query over the union of the documents, so this adds only the picking out
            common = next(run for model, _, _, run in best if model == common_run)
            runs += [(common, families[model], decode_point(params)) for model, params, _, _ in best]
            counted_on += [COMMON] * len(best)
        per_run = analyse_runs(index, runs, topics, depth=depth)
        for i, per_doc in enumerate(per_run):
            model, params, cell, _ = best[i % len(best)]
            frames.append(per_doc.assign(collection=collection, queryset=queryset, analyzer=cell["analyzer"],
                                         model=model, params=params, counted_on=counted_on[i]))
    return pd.concat(frames, ignore_index=True)


def write_violations(per_doc: pd.DataFrame, path: str | os.PathLike) -> None:
    write_parquet(pa.Table.from_pandas(per_doc, preserve_index=False), path)


def violations_per_document(per_doc: pd.DataFrame) -> pd.DataFrame:
    """Violations per document per query (axioms.summarise_violations) of each analysed run.

    One row per collection, queryset, model, params and ``counted_on`` (``own`` when the
    per-document counts have no such column: counted on the model's own best run only).
    """
    if "counted_on" not in per_doc.columns:
        per_doc = per_doc.assign(counted_on=OWN)
    rows = []
    for key, run in per_doc.groupby(RUN_KEYS, sort=False):
        summary = summarise_violations(run).iloc[0]
        rows.append({**dict(zip(RUN_KEYS, key)), **{name: summary[name] for name in COUNT_COLUMNS}})
    return pd.DataFrame(rows, columns=[*RUN_KEYS, *COUNT_COLUMNS])


def read_violations_per_document(paths: Sequence[str | os.PathLike], batch_rows: int = 1 << 18) -> pd.DataFrame:
    """:func:`violations_per_document` of the per-document count files ``paths`` (:func:`write_violations`)
    read one after another, without their rows in memory.

    An experiment's files hold millions of (query, document) rows, six text columns each. A run's
    violations per document per query only need, per run and query, each count's sum and number of
    documents: these are summed ``batch_rows`` rows at a time, the key columns read dictionary-encoded.
    The counts are integers, so their sums are exact in any order and each query's mean (sum / number)
    is the one pandas' groupby mean gives; the mean over queries is then taken as
    :func:`~irgrid.axioms.counting.summarise_violations` takes it, over the same per-query means in
    the same (sorted) order, so every number is the same to the bit. Runs come in the order they
    first appear in the files; a file without ``counted_on`` was counted on the own runs only.
    """
    key_columns = [*RUN_KEYS, "qid"]
    parts = []
    rows_before = 0
    for path in paths:
        names = pq.read_schema(path).names
        wanted = [name for name in key_columns if name in names]
        expected = [name for name in key_columns if name != "counted_on"] + list(CONSTRAINTS)
        if any(name not in names for name in expected):
            raise InputFormatError(path, None, f"per-document violation counts with columns {expected}",
                                   f"columns {names}")
        parquet = pq.ParquetFile(path, read_dictionary=wanted)
        for name in CONSTRAINTS:
            if not pa.types.is_integer(parquet.schema_arrow.field(name).type):
                raise InputFormatError(path, None, f"integer violation counts in column {name}",
                                       str(parquet.schema_arrow.field(name).type))
        for batch in parquet.iter_batches(batch_size=batch_rows, columns=[*wanted, *CONSTRAINTS]):
            part = _query_sums(batch, wanted, rows_before)
            if "counted_on" not in wanted:
                part = part.append_column("counted_on", pa.array([OWN] * part.num_rows, pa.string()))
            parts.append(part.select([*key_columns, *_SUM_COLUMNS, *_NUMBER_COLUMNS, "first_row"]))
            rows_before += batch.num_rows
    if not parts:
        return pd.DataFrame(columns=[*RUN_KEYS, *COUNT_COLUMNS])
    sums = pa.concat_tables(parts).to_pandas()
    # the runs in the order of their first rows, as a groupby of the concatenated rows without sorting;
    # like it, leaving out rows with a missing key (and, for the per-query means, a missing qid)
    sums = sums.dropna(subset=RUN_KEYS)
    order = sums.groupby(RUN_KEYS, sort=False)["first_row"].min().sort_values(kind="stable")
    rows = []
    for key, run in sums.groupby(RUN_KEYS, sort=False)[["qid", *_SUM_COLUMNS, *_NUMBER_COLUMNS]]:
        per_query = run.groupby("qid", sort=True)[[*_SUM_COLUMNS, *_NUMBER_COLUMNS]].sum()
        with np.errstate(invalid="ignore", divide="ignore"):  # 0 / 0: a query with no count of a constraint
            means = {name: per_query[f"{name}_sum"].to_numpy(np.float64) / per_query[f"{name}_number"].to_numpy(np.float64)
                     for name in COUNT_COLUMNS}
        summary = {name: float(pd.Series(means[name]).mean()) if len(per_query) else float("nan")
                   for name in COUNT_COLUMNS}
        rows.append((order[key], {**dict(zip(RUN_KEYS, key)), **summary}))
    rows.sort(key=lambda row: row[0])
    return pd.DataFrame([row for _, row in rows], columns=[*RUN_KEYS, *COUNT_COLUMNS])


#: :func:`_query_sums`' columns: each count's sum over a run's documents of a query, and their number
_SUM_COLUMNS = [f"{name}_sum" for name in COUNT_COLUMNS]
_NUMBER_COLUMNS = [f"{name}_number" for name in COUNT_COLUMNS]


def _query_sums(batch: pa.RecordBatch, keys: list[str], first_row: int) -> pa.Table:
    """Per run and query of ``batch``: each count's sum and number of (non-null) values, ``total`` (the row's
    counts summed, a missing one as 0, as pandas sums a row) among them, and the first row's position in
    the files (``first_row``: ``batch`` starts at row ``first_row``)."""
    table = pa.Table.from_batches([batch])
    total = table.column(CONSTRAINTS[0]).fill_null(0)
    for name in CONSTRAINTS[1:]:
        total = pc.add(total, table.column(name).fill_null(0))
    table = table.append_column("total", total)
    table = table.append_column("row", pa.array(np.arange(first_row, first_row + table.num_rows), pa.int64()))
    aggregations = [(name, "sum") for name in COUNT_COLUMNS] + [(name, "count") for name in COUNT_COLUMNS]
    sums = table.group_by(keys, use_threads=False).aggregate([*aggregations, ("row", "min")])
    names = {f"{name}_count": f"{name}_number" for name in COUNT_COLUMNS} | {"row_min": "first_row"}
    sums = sums.rename_columns([names.get(name, name) for name in sums.column_names])
    # the keys as plain text: each batch has its own dictionaries
    return pa.table({name: (sums.column(name).cast(pa.string()) if name in keys else sums.column(name))
                     for name in sums.column_names})


def violation_summary(
    per_doc: pd.DataFrame,
    evaluations: pd.DataFrame | CellAggregates,
    spec: TableSpec,
    paper_models: Sequence[str] | None = None,
    analyzers: Mapping[tuple[str, str], str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-function table: violations on both document sets and mean measure; Spearman's rho per row).

    The table has one row per collection, queryset and model: C1..C4 and total over the
    model's own best run, ``common_C1`` .. ``common_total`` over the common run (nan without
    common-run counts), the mean of ``spec.select_by``, ranks, ``paper_model`` (one of
    ``paper_models``, default: every model) and ``analyzer`` (from ``analyzers``, by row).
    The correlations have one row per table row, function set (``paper``; ``all`` when the
    paper's functions are not all of them) and document set (``counted_on``): rho of total
    violations against the measure with its exact permutation p-values.
    """
    return run_violation_summary(violations_per_document(per_doc), evaluations, spec, paper_models, analyzers)


def run_violation_summary(
    violations: pd.DataFrame,
    evaluations: pd.DataFrame | CellAggregates,
    spec: TableSpec,
    paper_models: Sequence[str] | None = None,
    analyzers: Mapping[tuple[str, str], str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`violation_summary` of each analysed run's violations per document per query
    (:func:`violations_per_document` or :func:`read_violations_per_document`)."""
    keys = ["collection", "queryset", "model", "params"]
    own = violations[violations["counted_on"] == OWN].drop(columns="counted_on")
    common = (violations[violations["counted_on"] == COMMON].drop(columns="counted_on")
              .rename(columns=dict(zip(COUNT_COLUMNS, COMMON_COLUMNS))))
    means = point_means(evaluations, spec.select_by).rename(columns={"value": spec.select_by})
    table = own.merge(common, on=keys, how="left").merge(means, on=keys, how="left")
    paper = set(spec.models if paper_models is None else paper_models)
    table["paper_model"] = table["model"].isin(paper)
    rows = list(zip(table["collection"], table["queryset"]))
    table["analyzer"] = [(analyzers or {}).get(row, "") for row in rows]
    # Each function's place within its row (1 = fewest violations / best measure), so a reader
    # sees directly whether removing stop words, or counting on the common run, reorders them.
    by_row = table.groupby(["collection", "queryset"], sort=False)
    table["rank_violations"] = by_row["total"].rank(method="min").astype("Int64")
    table["rank_violations_common"] = by_row["common_total"].rank(method="min").astype("Int64")
    table["rank_measure"] = by_row[spec.select_by].rank(method="min", ascending=False).astype("Int64")
    has_common = table["common_total"].notna().any()
    correlations = []
    for (collection, queryset), row in table.groupby(["collection", "queryset"], sort=False):
        sets = [(PAPER, row[row["paper_model"]])]
        if not row["paper_model"].all():
            sets.append((ALL, row))
        for models, functions in sets:
            for counted_on, total in [(OWN, "total")] + ([(COMMON, "common_total")] if has_common else []):
                test = spearman_test(functions[total].to_numpy(), functions[spec.select_by].to_numpy())
                correlations.append({
                    "collection": collection, "queryset": queryset, "analyzer": row["analyzer"].iloc[0],
                    "models": models, "counted_on": counted_on, "functions": len(functions),
                    "rho": test.rho, "p_less": test.p_less, "p_two_sided": test.p_two_sided,
                    "p_method": test.method, "min_p_one_sided": test.min_p_one_sided,
                })
    return table, pd.DataFrame(correlations)


def _ties(a: float, b: float) -> bool:
    """Equal violation averages: the same integer counts averaged in another order differ by rounding only."""
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def _documents(counted_on: str, common_run: str | None, labels: Mapping[str, str]) -> str:
    if counted_on == OWN:
        return "own best runs"
    return f"{labels.get(common_run, common_run)}'s best run" if common_run else "common run"


def fewest_violations(totals: Mapping[str, float], model: str, labels: Mapping[str, str] | None = None) -> dict:
    """Whether ``model`` has the smallest of ``totals`` (model -> total violations), and by how much.

    verdict: ``holds`` (strictly fewest), ``tied`` (its total equals the smallest of the others:
    a tie favours no one), ``does not hold`` (another has fewer) or ``undefined`` (a total is
    missing). ``next_model`` is the other model with the fewest violations; ``margin`` is its
    total minus ``model``'s (positive when the claim holds) and ``relative_margin`` that as a
    share of the next one's total.
    """
    labels = labels or {}
    others = {name: value for name, value in totals.items() if name != model}
    value = totals[model]
    result = {"model": model, "value": value, "next_model": None, "next_value": float("nan"),
              "margin": float("nan"), "relative_margin": float("nan")}
    if not others or any(pd.isna(v) for v in totals.values()):
        return {**result, "verdict": "undefined", "detail": "a function's violations are missing"}
    next_model = min(others, key=lambda name: others[name])  # the first of equals, in the given order
    next_value = others[next_model]
    margin = next_value - value
    relative = margin / next_value if next_value > 0 else float("nan")
    result.update(next_model=next_model, next_value=next_value, margin=margin, relative_margin=relative)
    name, other = labels.get(model, model), labels.get(next_model, next_model)
    tied_with = [labels.get(n, n) for n, v in others.items() if _ties(v, value)]
    if tied_with:
        return {**result, "margin": 0.0, "relative_margin": 0.0, "verdict": "tied",
                "detail": f"{name} ties {', '.join(tied_with)} at {value:.4f}"}
    # the margin to 3 significant digits: two totals may agree to the second decimal and still differ
    share = f"{abs(relative):.2%}" if abs(relative) >= 0.01 else f"{abs(relative) * 100:.2g}%"
    if margin > 0:
        return {**result, "verdict": "holds",
                "detail": f"{name} {value:.4f} against {next_value:.4f} for {other}, the next fewest: "
                          f"{margin:.3g} fewer ({share} of {other}'s)"}
    rank = 1 + sum(v < value for v in others.values())
    return {**result, "verdict": "does not hold",
            "detail": f"{other} has fewer: {next_value:.4f} against {value:.4f} for {name} "
                      f"({-margin:.3g} more, {share} of {other}'s); {name} ranks {rank} of {len(totals)}, fewest first"}


def inverse_correlation(rho: float, p_less: float, alpha: float, functions: int, method: str,
                        min_p: float) -> dict:
    """The verdict on "violations and the measure are inversely correlated" from Spearman's rho.

    The direction (``holds`` when rho < 0, ``opposite`` when rho > 0, ``no correlation`` at 0,
    ``undefined`` without a rho) and, separately, ``significant``: the one-sided p of rho <= the
    observed one (the paper claims a direction) at most ``alpha``.
    """
    if pd.isna(rho):
        return {"verdict": "undefined", "significant": False,
                "detail": "no ranking to correlate (constant violations or measure)"}
    verdict = "holds" if rho < 0 else "opposite" if rho > 0 else "no correlation"
    significant = bool(p_less <= alpha)
    detail = (f"rho = {rho:.3f} over {functions} functions; one-sided {method} p = {p_less:.4g} "
              f"{'<=' if significant else '>'} {alpha:g}: {'significant' if significant else 'not significant'}")
    if method == "exact" and not pd.isna(min_p) and min_p > 0:
        detail += f" (the smallest p {functions} functions can give: {min_p:.4g})"
    return {"verdict": verdict, "significant": significant, "detail": detail}


def violation_claims(table: pd.DataFrame, correlations: pd.DataFrame, spec: TableSpec,
                     fewest: str | None = None, common_run: str | None = None) -> pd.DataFrame:
    """The paper's claims about the violations, checked per row and document set.

    ``inverse_correlation``: total violations and ``spec.select_by`` are inversely correlated over
    the paper's functions (verdict on the direction; ``significant`` at ``spec.alpha``, one-sided).
    ``fewest_violations`` (when ``fewest`` names a model): that model's total violations are the
    smallest of the paper's functions (:func:`fewest_violations`).
    """
    labels = spec.model_labels
    rows = []
    for (collection, queryset), row in table.groupby(["collection", "queryset"], sort=False):
        paper = row[row["paper_model"]]
        analyzer = row["analyzer"].iloc[0]
        for correlation in correlations[(correlations["collection"] == collection)
                                        & (correlations["queryset"] == queryset)
                                        & (correlations["models"] == PAPER)].to_dict("records"):
            counted_on = correlation["counted_on"]
            base = {"collection": collection, "queryset": queryset, "analyzer": analyzer, "counted_on": counted_on,
                    "documents": _documents(counted_on, common_run, labels), "functions": len(paper)}
            check = inverse_correlation(correlation["rho"], correlation["p_less"], spec.alpha, len(paper),
                                        correlation["p_method"], correlation["min_p_one_sided"])
            rows.append({**base, "claim": INVERSE_CORRELATION,
                         "text": f"violations and {spec.select_by} are inversely correlated",
                         "rho": correlation["rho"], "p_less": correlation["p_less"],
                         "p_two_sided": correlation["p_two_sided"], "p_method": correlation["p_method"], **check})
            if fewest is not None:
                column = "total" if counted_on == OWN else "common_total"
                totals = dict(zip(paper["model"], paper[column]))
                if fewest not in totals:
                    raise ConfigError(f"the model with the fewest violations, {fewest!r}, is not among the paper's "
                                      f"functions {sorted(totals)} of {collection} ({queryset})")
                check = fewest_violations(totals, fewest, labels)
                rows.append({**base, "claim": FEWEST_VIOLATIONS,
                             "text": f"{labels.get(fewest, fewest)} has the fewest violations of the paper's functions",
                             "significant": pd.NA, **check})
    columns = ["collection", "queryset", "analyzer", "claim", "text", "documents", "counted_on", "functions",
               "verdict", "significant", "detail", "rho", "p_less", "p_two_sided", "p_method",
               "model", "value", "next_model", "next_value", "margin", "relative_margin"]
    return pd.DataFrame(rows).reindex(columns=columns)


def _count(value: float) -> str:
    return "" if pd.isna(value) else f"{value:.2f}"


def _rows(table: pd.DataFrame, spec: TableSpec, common: bool, extended: bool) -> list[list[str]]:
    rows = []
    for _, entry in table.iterrows():
        label = spec.model_labels.get(entry["model"], entry["model"])
        if extended and not entry["paper_model"]:
            label += " (extended)"
        ranks = f"{entry['rank_violations']}"
        if common:
            ranks += f" / {entry['rank_violations_common']}"
        rows.append(
            [f"{entry['collection']} ({entry['queryset']})", label, entry["params"]]
            + [_count(entry[c]) for c in COUNT_COLUMNS]
            + ([_count(entry[c]) for c in COMMON_COLUMNS] if common else [])
            + [f"{entry[spec.select_by]:.4f}", f"{ranks} / {entry['rank_measure']}"]
        )
    return rows


def _p(value: float) -> str:
    return "" if pd.isna(value) else f"{value:.4g}"


def _correlation_rows(correlations: pd.DataFrame, common_run: str | None, labels: Mapping[str, str]) -> list[list[str]]:
    names = {PAPER: "paper's", ALL: "all"}
    return [
        [f"{entry['collection']} ({entry['queryset']})", f"{names[entry['models']]} ({entry['functions']})",
         _documents(entry["counted_on"], common_run, labels),
         "" if pd.isna(entry["rho"]) else f"{entry['rho']:.3f}", _p(entry["p_less"]), _p(entry["p_two_sided"]),
         entry["p_method"]]
        for _, entry in correlations.iterrows()
    ]


def _claim_rows(claims: pd.DataFrame) -> list[list[str]]:
    def significance(entry):
        if entry["claim"] != INVERSE_CORRELATION:
            return ""
        return "yes" if entry["significant"] else "no"

    return [
        [f"{entry['collection']} ({entry['queryset']})", entry["text"], entry["documents"], entry["verdict"],
         significance(entry), entry["detail"]]
        for _, entry in claims.iterrows()
    ]


def _wide_correlations(correlations: pd.DataFrame) -> pd.DataFrame:
    """One row per table row: rho and p-values of each function set and document set as columns
    (``rho_paper_own``, ``p_less_paper_own``, ``p_two_sided_paper_own``, ...)."""
    keys = ["collection", "queryset"]
    if correlations.empty:
        return pd.DataFrame(columns=keys)
    wide = correlations.pivot_table(index=keys, columns=["models", "counted_on"],
                                    values=["rho", "p_less", "p_two_sided"], aggfunc="first", dropna=False, sort=False)
    wide.columns = [f"{value}_{models}_{counted_on}" for value, models, counted_on in wide.columns]
    return wide.reset_index()


def violation_tables(table: pd.DataFrame, correlations: pd.DataFrame, spec: TableSpec,
                     claims: pd.DataFrame | None = None, common_run: str | None = None) -> dict[str, str]:
    """The violation table, the correlations and the claims as Markdown, LaTeX, HTML and CSV texts.

    Keys ``md``, ``tex``, ``html``, ``csv`` (the per-function table with the correlations as
    columns) and ``claims.csv`` (one row per claim, row and document set).
    """
    labels = spec.model_labels
    common = bool(table["common_total"].notna().any()) if "common_total" in table else False
    extended = "paper_model" in table and not table["paper_model"].all()
    claims = claims if claims is not None else pd.DataFrame(columns=["collection", "queryset", "text", "documents",
                                                                      "verdict", "significant", "detail", "claim"])
    rank_label = "violations / common" if common else "violations"
    header = ["collection", "function", "parameters", *CONSTRAINTS, "total"]
    header += [f"{name} common" for name in COUNT_COLUMNS] if common else []
    header += [spec.select_by, f"rank: {rank_label} / {spec.select_by}"]
    corr_header = ["collection", "functions", "documents", "Spearman ρ (total violations, " + spec.select_by + ")",
                   "p (ρ < 0)", "p (two-sided)", "p method"]
    claim_header = ["collection", "claim", "documents", "verdict", "significant", "detail"]
    rows = _rows(table, spec, common, extended)
    corr_rows = _correlation_rows(correlations, common_run, labels)
    claim_rows = _claim_rows(claims)
    common_label = labels.get(common_run, common_run) if common_run else "the common run"
    legend = (
        f"Violations per document per query over the top documents of each function's best run (by {spec.select_by})"
        + (f"; the columns marked common: over the top documents of {common_label}'s best run of the row, so that "
           "every function is counted on the same documents" if common else "")
        + f". ρ: Spearman's correlation between total violations and {spec.select_by} over the functions of a row: "
        "the paper's functions (its figure)" + (" and all functions, (extended) marking the others" if extended else "")
        + "; p: exact permutation p-values (every ordering of the functions enumerated) up to 8 functions. "
        "C1-C4 are defined in docs/axioms.md."
    )
    sections = [("Violations per document per query", header, rows),
                ("Violations against effectiveness", corr_header, corr_rows),
                ("Claims", claim_header, claim_rows)]

    def markdown(head, body):
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        return out + ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in body]

    md = [f"# {spec.title or spec.experiment}: constraint violations", "", legend, ""]
    for heading, head, body in sections:
        md += [f"## {heading}", ""] + markdown(head, body) + [""]

    def escape(text):
        return (text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")
                .replace("#", r"\#").replace("~", r"\textasciitilde{}").replace("ρ", r"$\rho$")
                .replace("<=", r"$\le$").replace("<", r"$<$").replace(">", r"$>$"))

    def latex(head, body, text_columns):
        out = [r"\begin{tabular}{" + "l" * text_columns + "r" * (len(head) - text_columns) + "}", r"\toprule",
               " & ".join(map(escape, head)) + r" \\", r"\midrule"]
        out += [" & ".join(map(escape, row)) + r" \\" for row in body]
        return out + [r"\bottomrule", r"\end{tabular}"]

    tex = [r"\begin{table}", r"\centering"] + latex(header, rows, 3) + [r"\medskip"] + latex(corr_header, corr_rows, 3)
    tex += [r"\caption{" + escape(legend) + "}", r"\end{table}", "", r"\begin{table}", r"\centering"]
    tex += latex(claim_header, claim_rows, len(claim_header))
    tex += [r"\caption{Claims: " + escape(f"the paper's claims about the violations, per row and document set; "
                                          f"significant: one-sided p at most {spec.alpha:g}.") + "}", r"\end{table}"]

    def html_table(head, body):
        out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body]
        return out + ["</table>"]

    page = [f"<h2>{html.escape(spec.title or spec.experiment)}: constraint violations</h2>",
            f"<p>{html.escape(legend)}</p>"]
    for heading, head, body in sections:
        page += [f"<h3>{html.escape(heading)}</h3>"] + html_table(head, body)
    merged = table.merge(_wide_correlations(correlations), on=["collection", "queryset"], how="left")
    return {
        "md": "\n".join(md),
        "tex": "\n".join(tex) + "\n",
        "html": "\n".join(page) + "\n",
        "csv": merged.to_csv(index=False),
        "claims.csv": claims.to_csv(index=False),
    }


def write_violation_tables(table: pd.DataFrame, correlations: pd.DataFrame, spec: TableSpec, out_dir: str | os.PathLike,
                           claims: pd.DataFrame | None = None, common_run: str | None = None) -> None:
    """violations.{md,tex,html,csv} and violations_claims.csv in ``out_dir``."""
    for suffix, text in violation_tables(table, correlations, spec, claims, common_run).items():
        name = "violations_claims.csv" if suffix == "claims.csv" else f"violations.{suffix}"
        write_text(text, Path(out_dir) / name)
