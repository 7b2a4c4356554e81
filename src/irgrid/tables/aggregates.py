"""Each cell's aggregates of a table's chunk evaluation files, read file by file: what choosing every
model's point needs of every cell, without every cell's per-query rows in memory at once.

A table, figure or findings job chooses a point per model and row from the cells' means of the
selection measure (the best run, the grid's edges, the sensitivity curves), or from their per-query
values of that one measure (cross-validation over queries); the paired tests, ties, subsets and
findings then read every measure of only the chosen cells. :func:`read_cell_aggregates` keeps, per
cell: its number of rows, the set of measures it has, its mean of the selection measure (the same
pandas groupby mean over the same rows in the same order as over the whole frame of
:func:`irgrid.tables.load_cells`, so the same number: the mean is summed group by group), and on
request its per-query values of the selection measure. :meth:`CellAggregates.load` then reads the
rows of the cells asked for, as ``load_cells`` gives them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .loading import _CELL_COLUMNS, _is_chunk_evaluation, cell_slices, load_cells, missing_cell_error, read_chunk_file


@dataclass(eq=False)
class CellAggregates:
    """A table's cells (``cells``, positions 0..n-1) and what every one of them gives the selection.

    ``means``: one row per cell with rows of ``measure`` (in ``cells`` order): ``cell`` (its position),
    collection, queryset, model, params, the cell's mean of ``measure`` summed by reduceat (``value``)
    and compensated (``compensated``), and whether a value of it is NaN (``nan``).
    ``measures``: (collection, queryset, model) -> the measures its cells have. ``row_counts``: each
    cell's number of rows.
    """

    cells: pd.DataFrame
    measure: str
    means: pd.DataFrame
    measures: dict[tuple[str, str, str], frozenset[str]]
    row_counts: np.ndarray
    #: per cell: (part, offset, length) of its per-query values of ``measure`` in ``_parts`` (part -1: none kept)
    _selection_at: np.ndarray | None = None
    _parts: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    _qid_names: list[str] = field(default_factory=list)
    _loaded: dict[int, pd.DataFrame] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.cells.empty

    def models_by_row(self) -> dict[tuple[str, str], dict[str, list[int]]]:
        """(collection, queryset) -> model -> its cells' positions: rows and models in the order they first
        appear in ``cells``, as a groupby without sorting of ``load_cells``' frame orders them."""
        out: dict[tuple[str, str], dict[str, list[int]]] = {}
        keys = self.cells[list(_CELL_COLUMNS[:3])].astype(str)
        for position, (collection, queryset, model) in enumerate(zip(*(keys[c] for c in keys.columns))):
            out.setdefault((collection, queryset), {}).setdefault(model, []).append(position)
        return out

    def point_means(self) -> pd.DataFrame:
        """collection, queryset, model, params, value (the mean of ``measure``) per cell with rows of it:
        the frame a groupby of ``load_cells``' rows of ``measure`` by those columns gives, reset."""
        frame = self.means[["collection", "queryset", "model", "params"]].reset_index(drop=True)
        frame["value"] = _groupby_means(self.means)
        return frame

    def selection_means(self, positions: Sequence[int]) -> pd.Series:
        """params -> mean of ``measure`` of the cells at ``positions`` that have rows of it, in their order."""
        means = self.means[self.means["cell"].isin(positions)]
        return pd.Series(_groupby_means(means), index=pd.Index(means["params"].to_numpy(), name="params"),
                         name="value")

    def best_mean(self, collection: str, queryset: str, model: str) -> float | None:
        """The highest mean of ``measure`` over the model's points on a row (None: no such model there), as
        a groupby of its rows by params (sorted) gives it."""
        means = self.means[(self.means["collection"] == collection) & (self.means["queryset"] == queryset)
                           & (self.means["model"] == model)]
        if means.empty:
            return None
        params = means["params"].tolist()
        # sorted by params, the groups rise in the rows' order only where the cells are listed so
        return float(_groupby_means(means, rising=params == sorted(params)).max())

    def selection_values(self, positions: Sequence[int]) -> pd.DataFrame:
        """qid, params, value: the cells' per-query values of ``measure``, cell after cell, each in file order."""
        if self._selection_at is None:
            raise ValueError("the per-query values of the selection measure were not kept (selection_values=False)")
        codes, values, params = [], [], []
        for position in positions:
            part, offset, length = self._selection_at[position]
            if part < 0:
                continue
            part_codes, part_values = self._parts[part]
            codes.append(part_codes[offset:offset + length])
            values.append(part_values[offset:offset + length])
            params.append(np.full(length, str(self.cells["params"].iloc[position]), dtype=object))
        # qid through Arrow, as load_cells converts it (the same pandas dtype)
        names = pa.array(self._qid_names, pa.string())
        qids = names.take(pa.array(np.concatenate(codes or [np.zeros(0, np.int64)]), pa.int64()))
        return pd.DataFrame({"qid": qids.to_pandas(),
                             "params": np.concatenate(params or [np.zeros(0, dtype=object)]),
                             "value": np.concatenate(values or [np.zeros(0)])})

    def load(self, positions: Iterable[int]) -> None:
        """Read the rows of the cells at ``positions`` not read yet (each file once)."""
        wanted = sorted(set(positions) - set(self._loaded))
        if not wanted:
            return
        frame = load_cells(self.cells.iloc[wanted])
        ends = np.cumsum(self.row_counts[wanted])
        for position, end, length in zip(wanted, ends, self.row_counts[wanted]):
            self._loaded[position] = frame.iloc[end - length:end]

    def rows_of(self, positions: Sequence[int]) -> pd.DataFrame:
        """The rows of the cells at ``positions`` (each loaded already), cell after cell."""
        frames = [self._loaded[position] for position in positions]
        return frames[0] if len(frames) == 1 else pd.concat(frames)


def _groupby_means(means: pd.DataFrame, rising: bool = True) -> np.ndarray:
    """The means a groupby over the rows of these cells gives: sums by reduceat where its group ids rise
    (``rising``) and no value is NaN, else compensated (see :func:`read_cell_aggregates`)."""
    return (means["value"] if rising and not means["nan"].any() else means["compensated"]).to_numpy()


def point_means(evaluations: pd.DataFrame | CellAggregates, measure: str) -> pd.DataFrame:
    """collection, queryset, model, params, value: each cell's mean of ``measure``, from every per-query
    row (a groupby in the rows' order) or from the cells' aggregates (:meth:`CellAggregates.point_means`,
    the same means)."""
    if isinstance(evaluations, CellAggregates):
        if evaluations.measure != measure:
            raise ValueError(f"the cells' aggregates are of {evaluations.measure!r}, not of {measure!r}")
        return evaluations.point_means()
    return (evaluations[evaluations["measure"] == measure]
            .groupby(list(_CELL_COLUMNS), sort=False)["value"]
            .mean()
            .reset_index())


def read_table_evaluations(cells: pd.DataFrame, measure: str, selection_values: bool = False
                           ) -> CellAggregates | pd.DataFrame:
    """What a table, figure or findings job reads of its cells: their aggregates
    (:func:`read_cell_aggregates`), or every row (:func:`irgrid.tables.load_cells`) where aggregates
    could not give the same selection: one evaluation file a cell (the older layout), or a cell listed
    twice (whose rows the whole frame holds twice)."""
    if cells.empty:
        raise ValueError("no evaluation files for the table")
    keys = cells[list(_CELL_COLUMNS)].astype(str)
    if keys.duplicated().any() or not _is_chunk_evaluation(cells["path"].iloc[0]):
        return load_cells(cells)
    return read_cell_aggregates(cells, measure, selection_values)


def read_cell_aggregates(cells: pd.DataFrame, measure: str, selection_values: bool = False) -> CellAggregates:
    """Each listed cell's aggregates of its chunk's evaluation file (see the module's docstring), one file
    at a time. ``selection_values``: also keep each cell's per-query values of ``measure`` (for
    cross-validation: a float and a query code per query and cell, not every measure's rows)."""
    if cells.empty:
        raise ValueError("no evaluation files for the table")
    cells = cells.reset_index(drop=True)
    keys = cells[list(_CELL_COLUMNS)].astype(str)
    wanted: dict[str, dict[tuple[str, str], list[int]]] = {}
    for position, (path, model, params) in enumerate(zip(cells["path"].astype(str), keys["model"], keys["params"])):
        wanted.setdefault(path, {}).setdefault((model, params), []).append(position)
    count = len(cells)
    row_counts = np.full(count, -1, dtype=np.int64)
    means, kahan_means = np.full(count, np.nan), np.full(count, np.nan)
    has_nan = np.zeros(count, dtype=bool)
    has_selection = np.zeros(count, dtype=bool)
    cell_measures: list[frozenset[str]] = [frozenset()] * count
    distinct_sets: dict[frozenset[str], frozenset[str]] = {}
    selection_at = np.full((count, 3), -1, dtype=np.int64) if selection_values else None
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    qid_codes: dict[str, int] = {}
    for path, by_key in wanted.items():
        table = read_chunk_file(path)
        in_file = cell_slices(table)
        found = [(positions, in_file[key]) for key, positions in by_key.items() if key in in_file]
        encoded = pc.dictionary_encode(table.column("measure")).combine_chunks()
        measure_of_row = encoded.indices.to_numpy(zero_copy_only=False)
        measure_names = encoded.dictionary.to_pylist()
        code = measure_names.index(measure) if measure in measure_names else -1
        selected, labels = [], []
        for positions, (start, end) in found:
            present = frozenset(measure_names[i] for i in np.unique(measure_of_row[start:end]).tolist())
            present = distinct_sets.setdefault(present, present)
            rows = start + np.flatnonzero(measure_of_row[start:end] == code)
            for position in positions:
                row_counts[position] = end - start
                cell_measures[position] = present
            selected.append(rows)
            labels.append(np.full(len(rows), positions[0]))
        rows = np.concatenate(selected or [np.zeros(0, np.int64)])
        if not len(rows):
            continue
        labels = np.concatenate(labels)
        values = table.column("value").to_numpy()[rows]
        nan = np.isnan(values)
        # pandas' groupby mean: a float sum per group by ufunc.reduceat where the group ids rise and no
        # value is NaN, else its Cython kernel (a compensated sum, skipping NaN). Which one a consumer's
        # groupby takes depends on all of its rows, so each cell keeps both (each a sum over its own rows).
        starts = np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]])
        sizes = np.diff(starts, append=len(labels))
        summed = np.add.reduceat(values, starts) / sizes.astype(np.float64)
        compensated = pd.Series(np.append(values, np.nan)).groupby(np.append(labels, -1), sort=False).mean()
        for label, start, size, mean in zip(labels[starts].tolist(), starts, sizes, summed):
            means[label] = mean
            kahan_means[label] = compensated[label]
            has_nan[label] = nan[start:start + size].any()
            has_selection[label] = True
        for positions, _ in found:
            if has_selection[positions[0]]:
                for array in (means, kahan_means, has_nan, has_selection):
                    array[positions] = array[positions[0]]
        if selection_at is not None:
            encoded_qids = pc.dictionary_encode(table.column("qid")).combine_chunks()
            to_code = np.array([qid_codes.setdefault(qid, len(qid_codes))
                                for qid in encoded_qids.dictionary.to_pylist()], dtype=np.int64)
            codes = to_code[encoded_qids.indices.to_numpy(zero_copy_only=False)[rows]]
            offsets = np.concatenate([[0], np.cumsum([len(part) for part in selected])])
            for (positions, _), offset, part in zip(found, offsets, selected):
                if len(part):
                    selection_at[positions] = (len(parts), offset, len(part))
            parts.append((codes.astype(np.int32), values))
    missing = np.flatnonzero(row_counts < 0)
    if len(missing):
        cell = cells.iloc[missing[0]]
        raise missing_cell_error(cell["path"], cell["model"], cell["params"])
    measures: dict[tuple[str, str, str], set[str]] = {}
    for collection, queryset, model, present in zip(keys["collection"], keys["queryset"], keys["model"], cell_measures):
        measures.setdefault((collection, queryset, model), set()).update(present)
    chosen = np.flatnonzero(has_selection)
    mean_frame = pd.DataFrame({"cell": chosen, **{column: keys[column].to_numpy(dtype=object)[chosen]
                                                  for column in _CELL_COLUMNS},
                               "value": means[chosen], "compensated": kahan_means[chosen], "nan": has_nan[chosen]})
    return CellAggregates(cells, measure, mean_frame, {key: frozenset(value) for key, value in measures.items()},
                          row_counts, selection_at, parts, list(qid_codes))
