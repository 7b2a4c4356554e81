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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import InputFormatError
from .evaluate import read_evaluation, read_parquet_file
from .grid import decode_point, format_value
from .io import write_text
from .jobs.chunk import read_cell_evaluations
from .phrases import has_phrase
from .sentences.protocol import mixed_qids, positive_qids
from .stats import apply_selection, best_point, correct_p_values, cross_validated_selection, paired_test
from .ties import FIRST_TIED_RELEVANT, is_tie_measure, tie_form

SIGNIFICANT_MARK = "†"
#: the columns of an evaluation file, in its order
_EVALUATION_COLUMNS = ["qid", "measure", "value"]
#: the columns of a cell that :func:`load_cells` gives each of its rows
_CELL_COLUMNS = ("collection", "queryset", "model", "params")


@dataclass
class TableSpec:
    """What an experiment's table shows (from config/experiments/*.yaml).

    ``selection`` is ``best`` (each model at its best grid point over all
    queries: an oracle that overstates every model) or ``cv`` (the point chosen
    by k-fold cross-validation over queries, each query scored by the point
    chosen on the other folds) or ``tuned`` (the point best on another query set,
    ``tune_on``: parameters chosen on a development set, reported on a test set). ``correction`` adjusts, per row and measure, the
    p-values of the models compared with the baseline (holm, bonferroni, bh).
    """

    experiment: str
    models: Sequence[str]
    baseline: str
    measures: Sequence[str] = ("AP", "P@10")
    select_by: str = "AP"
    alpha: float = 0.05
    title: str = ""
    model_labels: dict[str, str] = field(default_factory=dict)
    selection: str = "best"
    folds: int = 5
    seed: int = 0
    test: str = "ttest"
    alternative: str = "two-sided"
    correction: str = "none"
    #: query subsets given rows of their own beside each row (QUERY_SUBSETS), e.g. ``["phrases"]``
    subsets: Sequence[str] = ()
    #: show each row's number of queries in its label
    query_counts: bool = False
    #: selection ``tuned``: query set -> the query set whose evaluations choose its parameters
    #: (``{test: dev}``: every model at its best point on dev, reported on test; rows: the keys)
    tune_on: dict[str, str] = field(default_factory=dict)
    #: model -> parameter -> [low, high]: the inclusive bounds of its range (None where the bound is
    #: open or infinite); a best point at such a bound is on the edge of the range, not of the grid
    bounds: dict[str, dict[str, list]] = field(default_factory=dict)


EDGE_MARK = "‡"


@dataclass(frozen=True)
class GridPosition:
    """Where a model's best point sits in the grid it was tuned over, on one table row.

    ``points``: the grid points evaluated; ``edges``: each swept parameter whose best value is
    the lowest or highest of its grid values and could still move (not a bound of its range),
    as ``name=value (lowest of n)``; ``bounded``: those at a bound of the parameter's range, which
    no grid can extend past.
    """

    points: int
    best: str
    edges: tuple[str, ...] = ()
    bounded: tuple[str, ...] = ()

    @property
    def on_edge(self) -> bool:
        return bool(self.edges)

    def describe(self) -> str:
        parts = [f"edge: extend the grid ({'; '.join(self.edges)})"] if self.edges else []
        if self.bounded:
            parts.append(f"at the range's bound ({'; '.join(self.bounded)})")
        return ", ".join(parts)


def grid_position(params: Sequence[str], best: str, bounds: dict[str, list] | None = None) -> GridPosition:
    """The position of ``best`` among the evaluated grid points ``params`` (encoded points)."""
    bounds = bounds or {}
    points = [decode_point(point) for point in dict.fromkeys(params)]
    chosen = decode_point(best)
    edges, bounded = [], []
    for name, value in chosen.items():
        values = sorted({point[name] for point in points if name in point})
        if len(values) < 2 or values[0] < value < values[-1]:
            continue
        side = "lowest" if value == values[0] else "highest"
        low, high = (list(bounds.get(name) or [None, None]) + [None, None])[:2]
        at_bound = (side == "lowest" and low is not None and value <= low) or (
            side == "highest" and high is not None and value >= high)
        text = f"{name}={format_value(value)} ({side} of {len(values)})"
        (bounded if at_bound else edges).append(text)
    return GridPosition(len(points), best, tuple(edges), tuple(bounded))


def grid_positions(evaluations: pd.DataFrame, spec: TableSpec) -> dict[tuple[str, str, str], GridPosition]:
    """(collection, queryset, model) -> where the model's best point by ``select_by`` (the best run)
    sits in its grid on that row: the edge flags every table and finding shows, whatever its selection."""
    best = replace(spec, selection="best")
    out = {}
    selected = evaluations[evaluations["measure"] == spec.select_by]
    for (collection, queryset, model), values in selected.groupby(["collection", "queryset", "model"], sort=False):
        if model not in spec.models:
            continue
        params, _ = select_point(values, best)
        out[(collection, queryset, model)] = grid_position(list(values["params"].unique()), params,
                                                          spec.bounds.get(model))
    return out


#: query subsets a table can show: name -> (row label, which queries of a topics table belong to it)
QUERY_SUBSETS = {"phrases": "queries with a phrase",
                 "mixed": "questions with a positive and a negative candidate",
                 "positive": "questions with a positive candidate"}


def subset_qids(topics: pd.DataFrame, subset: str) -> set[str]:
    """The qids of ``topics`` in ``subset``: ``phrases``, those with a phrase of two or more words;
    ``mixed``, those with a relevant and a non-relevant candidate (query sets ``X+judged``, ``X+alljudged``);
    ``positive``, those with a relevant candidate (all of ``X+judged``'s).

    (A query set without identified phrases, or without judged candidates, has none.)
    """
    if subset not in QUERY_SUBSETS:
        raise ValueError(f"unknown query subset {subset!r}; known: {sorted(QUERY_SUBSETS)}")
    if subset == "mixed":
        return mixed_qids(topics)
    if subset == "positive":
        return positive_qids(topics)

    if "phrases" not in topics.columns:
        return set()
    return {str(qid) for qid, phrases in zip(topics["qid"], topics["phrases"])
            if phrases is not None and has_phrase(list(phrases))}


def read_topics_file(path: str | os.PathLike) -> pd.DataFrame:
    """A topics file (qid, text, ...), the frame :func:`irgrid.runs.read_topics` gives, read
    without importing the retrieval code (numba) and pyarrow.dataset, a table or findings job's
    largest fixed cost, which only wants the queries' ids, text or phrases."""
    table = read_parquet_file(path)
    if not {"qid", "text"} <= set(table.column_names):
        raise InputFormatError(path, None, "a topics table with columns qid, text", f"columns {table.column_names}")
    return table.to_pandas()


def query_subsets(cells: pd.DataFrame, subsets: Sequence[str]) -> dict[tuple[str, str], dict[str, set[str]]]:
    """For each (collection, queryset) row of ``cells`` (with a ``topics`` path), the qids of each subset."""
    out: dict[tuple[str, str], dict[str, set[str]]] = {}
    if not subsets:
        return out
    for (collection, queryset), rows in cells.groupby(["collection", "queryset"], sort=False):
        topics = read_topics_file(rows["topics"].iloc[0])
        out[(collection, queryset)] = {subset: subset_qids(topics, subset) for subset in subsets}
    return out


def load_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """Read every evaluation file listed in ``cells`` (collection, queryset, model, params, path).

    Returns one long frame: collection, queryset, model, params, qid, measure, value.
    """
    if cells.empty:
        raise ValueError("no evaluation files for the table")
    if _is_chunk_evaluation(cells["path"].iloc[0]):
        return _load_chunk_cells(cells)
    tables = [read_parquet_file(path) for path in cells["path"]]
    combined = _concat_evaluations(cells, tables)
    if combined is None:
        return _load_cells_one_by_one(cells)
    return combined.to_pandas()


def _is_chunk_evaluation(path) -> bool:
    """Whether ``path`` is a chunk's evaluation file (irgrid.jobs.chunk: cells as model, params columns),
    not one cell's."""
    return {"model", "params"} <= set(pq.read_schema(path).names)


def _load_chunk_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """The cells' rows of their chunks' evaluation files, cell after cell in ``cells`` order (each cell's rows
    in file order), with the cells' columns: the frame one evaluation file a cell gives (_concat_evaluations).

    Each file is read once, however many of its cells are listed. The cells' columns repeat a value per
    row of a cell, so they are made as dictionary arrays and become object columns holding each cell's
    strings once: a grid of tens of thousands of cells has millions of rows.
    """
    wanted: dict[str, dict[tuple[str, str], None]] = {}
    for path, model, params in zip(cells["path"], cells["model"], cells["params"]):
        wanted.setdefault(str(path), {})[(str(model), str(params))] = None
    tables, slices, rows_before = [], {}, 0
    for path, table in zip(wanted, (read_cell_evaluations([path]) for path in wanted)):
        # a cell's rows are contiguous in its chunk's file: find each cell's slice from where the key changes
        codes = [pc.dictionary_encode(table.column(name)).combine_chunks() for name in ("model", "params")]
        indices = [code.indices.to_numpy(zero_copy_only=False) for code in codes]
        changed = np.zeros(table.num_rows, dtype=bool)
        changed[:1] = True
        for column in indices:
            changed[1:] |= column[1:] != column[:-1]
        starts = np.flatnonzero(changed)
        ends = np.append(starts[1:], table.num_rows)
        names = [code.dictionary.to_pylist() for code in codes]
        for start, end in zip(starts.tolist(), ends.tolist()):
            key = (names[0][indices[0][start]], names[1][indices[1][start]])
            if key in wanted[path]:
                slices[(path, *key)] = (rows_before + start, rows_before + end)
        tables.append(table.select(_EVALUATION_COLUMNS))
        rows_before += table.num_rows
    rows, lengths = [], []
    for path, model, params in zip(cells["path"], cells["model"], cells["params"]):
        found = slices.get((str(path), str(model), str(params)))
        if found is None:
            raise InputFormatError(path, None, f"the evaluations of {model} at {params}", "no rows of that cell")
        rows.append(np.arange(*found))
        lengths.append(found[1] - found[0])
    combined = pa.concat_tables(tables).take(pa.array(np.concatenate(rows))).combine_chunks()
    frame = combined.to_pandas()
    cell_of_row = np.repeat(np.arange(len(cells)), lengths)
    for column in _CELL_COLUMNS:
        values = cells[column].astype(str).to_numpy(dtype=object)
        frame[column] = values[cell_of_row]  # one string object a cell, however many rows it has
    return frame


def _concat_evaluations(cells: pd.DataFrame, tables: list[pa.Table]) -> pa.Table | None:
    """The evaluation files as one Arrow table with the cells' columns, converted to pandas once:
    an experiment has up to ~1,400 files, and a pandas frame per file (converted, assigned the
    cell's columns, concatenated) was most of a table job's CPU. None when the files are not all plain
    evaluations of one schema, or a cell column is not text: pandas then reconciles them as before."""
    schema = tables[0].schema
    if schema.names != _EVALUATION_COLUMNS or any(not table.schema.equals(schema) for table in tables):
        return None
    columns = {}
    for column in _CELL_COLUMNS:
        values = pa.array(cells[column].to_numpy(dtype=object), from_pandas=True)
        if not pa.types.is_string(values.type) or values.null_count:
            return None
        columns[column] = values
    lengths = np.fromiter((table.num_rows for table in tables), dtype=np.int64, count=len(tables))
    cell_of_row = pa.array(np.repeat(np.arange(len(tables)), lengths))
    combined = pa.concat_tables(tables)
    for column, values in columns.items():
        combined = combined.append_column(column, values.take(cell_of_row))
    # One chunk per column, not one per file: filtering the frame is then a single take per column.
    return combined.combine_chunks()


def _load_cells_one_by_one(cells: pd.DataFrame) -> pd.DataFrame:
    frames = []
    for cell in cells.itertuples(index=False):
        per_query = read_evaluation(cell.path)
        per_query = per_query.assign(
            collection=cell.collection, queryset=cell.queryset, model=cell.model, params=cell.params
        )
        frames.append(per_query)
    return pd.concat(frames, ignore_index=True)


def select_point(values: pd.DataFrame, spec: TableSpec) -> tuple[str, pd.DataFrame]:
    """One model's chosen parameters (a label) and its per-query values (qid, measure, value)."""
    selection = values[values["measure"] == spec.select_by]
    if selection.empty:
        raise ValueError(f"measure {spec.select_by!r} was not evaluated")
    if spec.selection == "best":
        point_order = list(selection["params"].unique())  # first-appearance (grid) order
        means = selection.groupby("params", sort=False)["value"].mean().reindex(point_order)
        params = best_point(means)
        return params, values.loc[values["params"] == params, ["qid", "measure", "value"]]
    if spec.selection == "cv":
        result = cross_validated_selection(selection[["qid", "params", "value"]], k=spec.folds, seed=spec.seed)
        counts = Counter(result.chosen.values())
        label = ", ".join(
            f"{params} ({count}/{len(result.chosen)})" if len(counts) > 1 else params
            for params, count in counts.most_common()
        )
        sparse = _sparse_tie_rows(values, spec)
        if not sparse.any():
            return label, apply_selection(values[["qid", "params", "measure", "value"]], result.query_params)
        # rows only some queries of a run have (irgrid.ties: where ties touch a relevant document) follow
        # the same choice, without apply_selection's check that every query has every measure
        dense, extra = values[~sparse], values[sparse]
        extra = extra.loc[extra["params"] == extra["qid"].map(result.query_params), ["qid", "measure", "value"]]
        selected = apply_selection(dense[["qid", "params", "measure", "value"]], result.query_params)
        return label, pd.concat([selected, extra], ignore_index=True)
    raise ValueError(f"unknown selection {spec.selection!r}: expected 'best' or 'cv'")


def _sparse_tie_rows(values: pd.DataFrame, spec: TableSpec) -> np.ndarray:
    """Which rows hold what every evaluation adds on ties (irgrid.ties.TiedRelevantScan): the first
    tied rank and E[m] of the queries a tie touches, not of every query (E[m] of a ``tie_aware``
    experiment's table measures are of every query, and stay with the table's measures)."""
    sparse = {measure for measure in values["measure"].unique()
              if measure == FIRST_TIED_RELEVANT or (is_tie_measure(measure) and measure not in spec.measures)}
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


def summarise(evaluations: pd.DataFrame, spec: TableSpec,
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


def chosen_means(evaluations: pd.DataFrame, spec: TableSpec, measure: str) -> pd.DataFrame:
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


def chosen_points(evaluations: pd.DataFrame, spec: TableSpec
                  ) -> dict[tuple[str, str], dict[str, tuple[str, pd.DataFrame]]]:
    """Per table row (collection, queryset): each model's chosen parameters and its per-query values
    there (qid, measure, value), under the spec's selection (best, cv, tuned: rows the tune_on keys)."""
    out = {}
    by_row = dict(tuple(evaluations.groupby(["collection", "queryset"], sort=False)))
    for (collection, queryset), row_values in by_row.items():
        if spec.selection == "tuned":
            if queryset not in spec.tune_on:
                continue
            tuning = by_row.get((collection, spec.tune_on[queryset]))
            if tuning is None:
                raise ValueError(f"{collection}/{queryset}: parameters are chosen on query set "
                                 f"{spec.tune_on[queryset]!r}, which has no evaluations")
            out[(collection, queryset)] = _tuned_points(row_values, tuning, spec, collection, queryset)
        else:
            out[(collection, queryset)] = _chosen_points(row_values, spec, collection, queryset)
    return out


def _chosen_points(row_values: pd.DataFrame, spec: TableSpec, collection: str, queryset: str
                   ) -> dict[str, tuple[str, pd.DataFrame]]:
    chosen: dict[str, tuple[str, pd.DataFrame]] = {}
    # One pass over the row's values, not a comparison of all of them per model.
    by_model = dict(tuple(row_values.groupby("model", sort=False)))
    for model in spec.models:
        values = by_model.get(model, row_values.iloc[:0])
        if values.empty:
            raise ValueError(f"no evaluations of model {model!r} on {collection}/{queryset}")
        try:
            chosen[model] = select_point(values, spec)
        except ValueError as error:
            raise ValueError(f"{collection}/{queryset}, model {model!r}: {error}") from None
    return chosen


def _tuned_points(row_values: pd.DataFrame, tuning: pd.DataFrame, spec: TableSpec, collection: str, queryset: str
                  ) -> dict[str, tuple[str, pd.DataFrame]]:
    """Each model at its best point on the tuning query set, with its values on this one."""
    best = replace(spec, selection="best")
    chosen: dict[str, tuple[str, pd.DataFrame]] = {}
    for model in spec.models:
        params, _ = _chosen_points(tuning, best, collection, spec.tune_on[queryset])[model]
        values = row_values[(row_values["model"] == model) & (row_values["params"] == params)]
        if values.empty:
            raise ValueError(f"{collection}/{queryset}, model {model!r}: no evaluation at {params}, "
                             f"the point chosen on {spec.tune_on[queryset]!r}")
        chosen[model] = (params, values[["qid", "measure", "value"]])
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
