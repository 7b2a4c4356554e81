"""Reading the per-query evaluation files a table lists, every row of every cell (:func:`load_cells`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import InputFormatError
from ..evaluation.evaluator import read_evaluation, read_parquet_file
from ..jobs.chunk import CHUNK_EVALUATION_SCHEMA

#: the columns of an evaluation file, in its order
_EVALUATION_COLUMNS = ["qid", "measure", "value"]
#: the columns of a cell that :func:`load_cells` gives each of its rows
_CELL_COLUMNS = ("collection", "queryset", "model", "params")


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
    for path, keys in wanted.items():
        table = read_chunk_file(path)
        in_file = cell_slices(table)
        # only the listed cells' rows stay: a job that lists a few cells of many files holds those
        found = [(key, in_file[key]) for key in keys if key in in_file]
        rows = np.concatenate([np.arange(start, end) for _, (start, end) in found] or [np.zeros(0, np.int64)])
        tables.append(table.select(_EVALUATION_COLUMNS).take(pa.array(rows, pa.int64())))
        for key, (start, end) in found:
            slices[(path, *key)] = (rows_before, rows_before + end - start)
            rows_before += end - start
    rows, lengths = [], []
    for path, model, params in zip(cells["path"], cells["model"], cells["params"]):
        found = slices.get((str(path), str(model), str(params)))
        if found is None:
            raise missing_cell_error(path, model, params)
        rows.append(np.arange(*found))
        lengths.append(found[1] - found[0])
    combined = pa.concat_tables(tables).take(pa.array(np.concatenate(rows))).combine_chunks()
    frame = combined.to_pandas()
    cell_of_row = np.repeat(np.arange(len(cells)), lengths)
    for column in _CELL_COLUMNS:
        values = cells[column].astype(str).to_numpy(dtype=object)
        frame[column] = values[cell_of_row]  # one string object a cell, however many rows it has
    return frame


def missing_cell_error(path, model, params) -> InputFormatError:
    """A listed cell that its chunk's evaluation file has no rows of: the file and the cell named."""
    return InputFormatError(path, None, f"the evaluations of {model} at {params}", "no rows of that cell")


def read_chunk_file(path) -> pa.Table:
    """One chunk's evaluation file, its columns those of ``CHUNK_EVALUATION_SCHEMA`` in that order and type."""
    table = read_parquet_file(path)
    missing = set(CHUNK_EVALUATION_SCHEMA.names) - set(table.column_names)
    if missing:
        raise InputFormatError(path, None, f"a chunk's evaluations with columns {CHUNK_EVALUATION_SCHEMA.names}",
                               f"columns {table.column_names}")
    return table.select(CHUNK_EVALUATION_SCHEMA.names).cast(CHUNK_EVALUATION_SCHEMA)


def cell_slices(table: pa.Table) -> dict[tuple[str, str], tuple[int, int]]:
    """(model, params) -> the rows (start, end) of that cell in a chunk's evaluations.

    A cell's rows are contiguous in its chunk's file: each cell's slice is found from where the key changes
    (a key found twice keeps its later slice)."""
    codes = [pc.dictionary_encode(table.column(name)).combine_chunks() for name in ("model", "params")]
    indices = [code.indices.to_numpy(zero_copy_only=False) for code in codes]
    changed = np.zeros(table.num_rows, dtype=bool)
    changed[:1] = True
    for column in indices:
        changed[1:] |= column[1:] != column[:-1]
    starts = np.flatnonzero(changed)
    ends = np.append(starts[1:], table.num_rows)
    names = [code.dictionary.to_pylist() for code in codes]
    return {(names[0][indices[0][start]], names[1][indices[1][start]]): (start, end)
            for start, end in zip(starts.tolist(), ends.tolist())}


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

