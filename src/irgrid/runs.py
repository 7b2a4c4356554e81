"""Run and topic files: the tables that pass between retrieval, evaluation, analysis and export.

A run is Parquet with the run schema (qid, docno, rank, score); topics are Parquet (qid, text, ...) as
:func:`irgrid.collections.write_topics` writes them; the TREC form of a run is made at export.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import InputFormatError
from .io import atomic_path, read_parquet_file, write_parquet

#: a topics column listing each query's own candidate documents (docnos): rank those, not the collection
CANDIDATES_COLUMN = "candidates"
RUN_SCHEMA = pa.schema(
    [
        pa.field("qid", pa.string()),
        pa.field("docno", pa.string()),
        pa.field("rank", pa.int32()),
        pa.field("score", pa.float64()),
    ]
)
RUN_COLUMNS = [field.name for field in RUN_SCHEMA]
# How a run is written. Dictionary pages for the columns that repeat (a qid a row, a docno per query,
# ranks 1..depth), not for the scores, which Parquet's default hashes until the dictionary page is full
# and then writes plain anyway; no column statistics (nothing filters runs by them). Faster to write
# and to read, the same table read back (benchmarks/HISTORY.md).
RUN_WRITE_OPTIONS = {"use_dictionary": ["qid", "docno", "rank"], "write_statistics": False}


def read_topics(path: str | os.PathLike) -> pd.DataFrame:
    """Topics Parquet (qid, text) as written by irgrid.collections.write_topics."""
    table = read_parquet_file(path)
    missing = {"qid", "text"} - set(table.column_names)
    if missing:
        raise InputFormatError(path, None, "a topics table with columns qid, text", f"columns {table.column_names}")
    return table.to_pandas()


def write_run(run: pd.DataFrame | pa.Table, path: str | os.PathLike) -> None:
    """Write a run (DataFrame or Arrow table) as Parquet with the run schema, atomically."""
    if isinstance(run, pa.Table):
        table = run.select(RUN_COLUMNS).cast(RUN_SCHEMA)
    else:
        table = pa.Table.from_pandas(run[RUN_COLUMNS], schema=RUN_SCHEMA, preserve_index=False)
    write_parquet(table, path, **RUN_WRITE_OPTIONS)


def read_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read and check a run: the one data contract (qid, docno, rank, score)."""
    return read_run_table(path).to_pandas()


def read_run_table(path: str | os.PathLike) -> pa.Table:
    """A run as an Arrow table (qid, docno, rank, score), checked as :func:`read_run` does, not converted to pandas."""
    table = pq.read_table(path)
    missing = set(RUN_COLUMNS) - set(table.column_names)
    if missing:
        raise InputFormatError(path, None, f"a run with columns {RUN_COLUMNS}", f"columns {table.column_names}")
    return table.select(RUN_COLUMNS)


def source_qids(topics_path: str | os.PathLike) -> dict[str, str]:
    """qid -> the qid as the queries file writes it, for the topics whose reader changed it ({} if none)."""
    # deferred: irgrid.collections loads every reader; only a TREC export needs the column's name
    from .collections.writers import SOURCE_QID_COLUMN

    if SOURCE_QID_COLUMN not in pq.read_schema(topics_path).names:
        return {}
    table = pq.read_table(topics_path, columns=["qid", SOURCE_QID_COLUMN])
    return {qid: written for qid, written in zip(table.column("qid").to_pylist(),
                                                 table.column(SOURCE_QID_COLUMN).to_pylist())
            if written and written != qid}


def write_trec_run(run: pd.DataFrame | pa.Table, path: str | os.PathLike, tag: str,
                   qids: Mapping[str, str] | None = None) -> None:
    """Export a run (DataFrame or Arrow table) in TREC format: qid Q0 docno rank score tag.

    ``qids``: qid -> the form to write (:func:`source_qids`: ``001`` as the topics file has it,
    where the workflow compares ``1``); a qid not in it is written as it is."""
    if isinstance(run, pa.Table):
        run = run.to_pandas()
    if qids:
        run = run.assign(qid=run["qid"].map(lambda qid: qids.get(qid, qid)))
    for column in ("qid", "docno"):
        # a blank inside an id would make a seven-field line that trec_eval reads as other ids
        spaced = [value for value in run[column].unique() if any(c.isspace() for c in str(value))]
        if spaced:
            raise InputFormatError(path, None, f"{column}s without blanks (a TREC run line is six fields)",
                                   found=str(spaced[0]))
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for qid, docno, rank, score in zip(run["qid"], run["docno"], run["rank"], run["score"]):
            out.write(f"{qid} Q0 {docno} {rank} {score:.6f} {tag}\n")
