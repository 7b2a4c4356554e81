"""Read an index written by :func:`irgrid.index.build_index`."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from irgrid.analysis import Analyzer
from irgrid.errors import InputFormatError
from irgrid.features.windows import PositionalPostings

from .format import FORMAT_VERSION, FORWARD_PART_DOCS


class Postings(NamedTuple):
    """The postings of one term, in increasing docid order."""

    docids: np.ndarray  # int32
    tfs: np.ndarray  # int32
    positions: list[np.ndarray] | None  # one int32 array per posting, or None if not asked for


class IndexReader:
    """Docs and stats are loaded eagerly; the term dictionary on first use; postings on demand."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        stats_path = self.path / "stats.json"
        if not stats_path.is_file():
            raise InputFormatError(self.path, None, "an index directory with stats.json (see irgrid.index.build_index)",
                                   "no stats.json")
        with open(stats_path, encoding="utf-8") as f:
            self.stats: dict = json.load(f)
        version = self.stats.get("format_version")
        if version != FORMAT_VERSION:
            raise InputFormatError(stats_path, None, f"format_version {FORMAT_VERSION}", repr(version))
        self.num_docs: int = int(self.stats["num_docs"])
        self.total_length: int = int(self.stats["total_length"])
        self.avg_doc_length: float = float(self.stats["avg_doc_length"])
        self.num_terms: int = int(self.stats["num_terms"])
        self.num_buckets: int = int(self.stats["num_buckets"])
        self.forward_part_docs: int = int(self.stats.get("forward_part_docs", FORWARD_PART_DOCS))
        self.analyzer: Analyzer = Analyzer.from_dict(self.stats["analyzer"])

        docs = pq.read_table(self.path / "docs.parquet")
        self.docnos: np.ndarray = docs.column("docno").to_numpy(zero_copy_only=False)
        self.doc_lengths: np.ndarray = docs.column("length").to_numpy().astype(np.int32, copy=False)
        self.doc_unique_terms: np.ndarray = docs.column("unique_terms").to_numpy().astype(np.int32, copy=False)
        self._terms_table: pa.Table | None = None
        self._bucket_files: dict[int, tuple[pq.ParquetFile, np.ndarray]] = {}
        self._docno_index: dict[str, int] | None = None
        self._term_id_cache: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"IndexReader({str(self.path)!r}, num_docs={self.num_docs}, num_terms={self.num_terms})"

    # ------------------------------------------------------------------ terms
    def _term_table(self) -> pa.Table:
        """terms.parquet: a term's row is its id (terms sorted)."""
        if self._terms_table is None:
            table = pq.read_table(self.path / "terms.parquet")
            # one chunk per column: .chunk(0) is then the whole column
            self._terms_table = pa.Table.from_arrays(
                [pa.chunked_array([table.column(name).combine_chunks()]) for name in table.column_names],
                names=table.column_names,
            )
        return self._terms_table

    @property
    def vocabulary(self) -> list[str]:
        """All terms, sorted (a term's position is its id)."""
        return self._term_table().column("term").to_pylist()

    def term_ids(self, terms: Sequence[str]) -> np.ndarray:
        """The id of each term, -1 for a term not in the index (one hash lookup per term, in C++).

        Ids found are kept: ``index_in`` hashes the whole vocabulary at each call (0.1 s for 500k
        terms), and a query set's terms are looked up twice (statistics, then postings).
        """
        terms = list(terms)
        known = self._term_id_cache
        missing = [term for term in dict.fromkeys(terms) if term not in known]
        if missing:
            found = pc.index_in(pa.array(missing, pa.string()), value_set=self._term_table().column("term"))
            known.update(zip(missing, pc.fill_null(found, -1).to_numpy().astype(np.int64).tolist()))
        return np.array([known[term] for term in terms], dtype=np.int64)

    def term_stats(self, terms: Iterable[str]) -> dict[str, tuple[int, int]]:
        """``term -> (df, cf)`` for the terms of the index (absent terms omitted)."""
        terms = list(dict.fromkeys(terms))
        ids = self.term_ids(terms)
        table = self._term_table()
        df = table.column("df").to_numpy()
        cf = table.column("cf").to_numpy()
        return {t: (int(df[i]), int(cf[i])) for t, i in zip(terms, ids.tolist()) if i >= 0}

    # --------------------------------------------------------------- postings
    def bucket_path(self, bucket: int) -> Path:
        return self.path / "postings" / f"bucket-{bucket:04d}.parquet"

    def _bucket_file(self, bucket: int) -> tuple[pq.ParquetFile, np.ndarray]:
        """The bucket's Parquet file and the first row of each row group (plus the row count)."""
        found = self._bucket_files.get(bucket)
        if found is None:
            pf = pq.ParquetFile(self.bucket_path(bucket))
            rows = [pf.metadata.row_group(i).num_rows for i in range(pf.metadata.num_row_groups)]
            found = self._bucket_files[bucket] = (pf, np.concatenate([[0], np.cumsum(rows, dtype=np.int64)]))
        return found

    def _term_rows(self, terms: Iterable[str], columns: list[str]):
        """For each bucket holding some of ``terms``: ``(table, [(term, lo, hi), ...])``.

        terms.parquet gives each term's bucket, first row and df; the row groups
        overlapping those rows are read in one call per bucket, and ``lo:hi`` are
        the term's rows in the table read (absent terms are left out).
        """
        wanted = list(dict.fromkeys(terms))
        ids = self.term_ids(wanted)
        table = self._term_table()
        bucket_of_id = table.column("bucket").to_numpy()
        start_of_id = table.column("start").to_numpy()
        df_of_id = table.column("df").to_numpy()
        by_bucket: dict[int, list[tuple[str, int, int]]] = defaultdict(list)
        for term, i in zip(wanted, ids.tolist()):
            if i >= 0:
                by_bucket[int(bucket_of_id[i])].append((term, int(start_of_id[i]), int(df_of_id[i])))
        for bucket in sorted(by_bucket):
            pf, group_starts = self._bucket_file(bucket)
            spans = by_bucket[bucket]
            groups = sorted({
                g
                for _, start, df in spans
                for g in range(int(np.searchsorted(group_starts, start, side="right")) - 1,
                               int(np.searchsorted(group_starts, start + df, side="left")))
            })
            data = pf.read_row_groups(groups, columns=columns)
            # row r of the bucket is row `local[r]` of `data`: the groups read are concatenated
            group_rows = np.diff(group_starts)[groups]
            data_starts = np.concatenate([[0], np.cumsum(group_rows)])
            rows = []
            for term, start, df in spans:
                g = groups.index(int(np.searchsorted(group_starts, start, side="right")) - 1)
                lo = int(data_starts[g] + start - group_starts[groups[g]])
                rows.append((term, lo, lo + df))
            yield data, rows

    def postings(self, terms: Iterable[str], positions: bool = False) -> dict[str, Postings]:
        """Postings of ``terms`` (absent terms omitted), reading only the row groups that hold them."""
        columns = ["docid", "tf"] + (["positions"] if positions else [])
        out: dict[str, Postings] = {}
        for data, rows in self._term_rows(terms, columns):
            docids = data.column("docid").to_numpy().astype(np.int32, copy=False)
            tfs = data.column("tf").to_numpy().astype(np.int32, copy=False)
            if positions:
                pos = data.column("positions").combine_chunks()
                offsets = pos.offsets.to_numpy() - pos.offsets[0].as_py()
                values = pos.values.to_numpy().astype(np.int32, copy=False)
            else:
                # The terms' rows copied out of the row groups read (about a third of them): the
                # rest is freed before the next bucket is read, and its memory reused for that
                # read rather than fresh pages faulted in, which cost more than decoding them.
                docids = np.concatenate([docids[lo:hi] for _, lo, hi in rows] + [np.zeros(0, np.int32)])
                tfs = np.concatenate([tfs[lo:hi] for _, lo, hi in rows] + [np.zeros(0, np.int32)])
                ends = np.cumsum([hi - lo for _, lo, hi in rows]).tolist()
                rows = [(term, end - (hi - lo), end) for (term, lo, hi), end in zip(rows, ends)]
            for term, lo, hi in rows:
                plist = [values[offsets[i] : offsets[i + 1]] for i in range(lo, hi)] if positions else None
                out[term] = Postings(docids[lo:hi], tfs[lo:hi], plist)
        return out

    def positional_postings(self, terms: Iterable[str]) -> PositionalPostings:
        """Postings with positions of ``terms`` (absent terms omitted), in flat arrays (window counting)."""
        spans: dict[str, tuple[int, int]] = {}
        docids, tfs, offsets, positions = [], [], [], []
        rows_before = positions_before = 0
        for data, rows in self._term_rows(terms, ["docid", "tf", "positions"]):
            bucket_docids = data.column("docid").to_numpy().astype(np.int32, copy=False)
            bucket_tfs = data.column("tf").to_numpy().astype(np.int32, copy=False)
            pos = data.column("positions").combine_chunks()
            bucket_offsets = pos.offsets.to_numpy().astype(np.int64) - pos.offsets[0].as_py()
            values = pos.values.to_numpy().astype(np.int32, copy=False)
            for term, lo, hi in rows:
                spans[term] = (rows_before, rows_before + hi - lo)
                docids.append(bucket_docids[lo:hi])
                tfs.append(bucket_tfs[lo:hi])
                first, last = bucket_offsets[lo], bucket_offsets[hi]
                offsets.append(bucket_offsets[lo:hi] - first + positions_before)
                positions.append(values[first:last])
                rows_before += hi - lo
                positions_before += int(last - first)
        empty = np.zeros(0, np.int32)
        return PositionalPostings(
            spans,
            np.concatenate(docids) if docids else empty,
            np.concatenate(tfs) if tfs else empty,
            np.concatenate(offsets + [np.array([positions_before], dtype=np.int64)]),
            np.concatenate(positions) if positions else empty,
        )

    # ---------------------------------------------------------------- forward
    def forward(self, docids: Iterable[int]) -> list[list[str]]:
        """The analysed terms of each document, in document order (one list per docid given)."""
        docids = [int(d) for d in docids]
        for d in docids:
            if not 0 <= d < self.num_docs:
                raise IndexError(f"docid {d} out of range 0..{self.num_docs - 1}")
        by_part: dict[int, list[int]] = defaultdict(list)
        for d in dict.fromkeys(docids):
            by_part[d // self.forward_part_docs].append(d)
        vocabulary = self._term_table().column("term").chunk(0)
        found: dict[int, list[str]] = {}
        for part in sorted(by_part):
            table = pq.read_table(
                self.path / "forward" / f"part-{part:04d}.parquet", filters=[("docid", "in", by_part[part])]
            )
            terms = table.column("terms").combine_chunks()
            if len(terms):
                strings = pa.ListArray.from_arrays(
                    pc.subtract(terms.offsets, terms.offsets[0]), vocabulary.take(terms.flatten())
                )
                found.update(zip(table.column("docid").to_pylist(), strings.to_pylist()))
        return [found[d] for d in docids]

    # ------------------------------------------------------------------- docs
    def docids_of(self, docnos: Iterable[str]) -> dict[str, int]:
        """``docno -> docid`` for the given docnos (unknown docnos omitted)."""
        if self._docno_index is None:
            self._docno_index = {d: i for i, d in enumerate(self.docnos.tolist())}
        idx = self._docno_index
        return {d: idx[d] for d in docnos if d in idx}
