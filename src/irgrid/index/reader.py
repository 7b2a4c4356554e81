"""Read an index written by :func:`irgrid.index.build_index`."""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from irgrid.analysis import Analyzer
from irgrid.io import read_parquet_file

from .format import DOCS_OPEN_COLUMNS, POSITIONS_ROW_GROUP, POSTINGS_ROW_GROUP, read_index_stats
from .forward import ForwardIndex, forward_index_dir

if TYPE_CHECKING:
    from irgrid.features.windows import PositionalPostings

    from .pages import PostingsPages


#: rows of every row group but the last of a bucket's file of each kind (the build writes them so)
ROW_GROUP_ROWS = {"postings": POSTINGS_ROW_GROUP, "positions": POSITIONS_ROW_GROUP}


def _group_starts(metadata: pq.FileMetaData, rows_per_group: int) -> np.ndarray:
    """The first row of each row group of a Parquet file, plus its row count.

    A bucket's row groups hold ``rows_per_group`` rows each but the last, so their starts are
    multiples of it: computed, without a Python object per group's metadata at every open. A
    file whose groups do not count up so (an index built with another size, as a test's) is
    read group by group.
    """
    groups, rows = metadata.num_row_groups, metadata.num_rows
    last_rows = rows - (groups - 1) * rows_per_group
    if groups == -(-rows // rows_per_group) and (groups == 0 or metadata.row_group(groups - 1).num_rows == last_rows):
        starts = np.arange(groups + 1, dtype=np.int64) * rows_per_group
        starts[-1] = rows
        return starts
    counts = [metadata.row_group(i).num_rows for i in range(groups)]
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])


def _groups_of(group_starts: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row groups (ascending, distinct) that hold some of the spans' rows ``start .. start+count-1``,
    and each span's first group."""
    # each span's first row group and one past its last (numpy over the spans: a bucket holds thousands)
    first_group = np.searchsorted(group_starts, starts, side="right") - 1
    end_group = np.searchsorted(group_starts, starts + counts, side="left")
    held = counts > 0
    num_groups = (end_group - first_group)[held]
    # the groups first_group .. end_group - 1 of every span: each span's first, plus 0, 1, ... within it
    within = np.arange(num_groups.sum()) - np.repeat(np.cumsum(num_groups) - num_groups, num_groups)
    return np.unique(np.repeat(first_group[held], num_groups) + within), first_group


class Postings(NamedTuple):
    """The postings of one term, in increasing docid order."""

    docids: np.ndarray  # int32
    tfs: np.ndarray  # int32
    positions: list[np.ndarray] | None  # one int32 array per posting, or None if not asked for


class IndexReader:
    """Stats and the documents' lengths and docno ranks are loaded eagerly; their unique-term counts,
    the docno strings and the term dictionary on first use; postings on demand.

    ``forward_path``: the forward index of this index (:mod:`irgrid.index.forward`), read by
    :meth:`forward`; by default :func:`irgrid.index.forward.forward_index_dir` of ``path``.
    """

    def __init__(self, path: str | os.PathLike, forward_path: str | os.PathLike | None = None):
        self.path = Path(path)
        self._forward_path = Path(forward_path) if forward_path is not None else None
        self._forward_index = None
        self.stats: dict = read_index_stats(self.path)
        self.num_docs: int = int(self.stats["num_docs"])
        self.total_length: int = int(self.stats["total_length"])
        self.avg_doc_length: float = float(self.stats["avg_doc_length"])
        self.num_terms: int = int(self.stats["num_terms"])
        self.num_buckets: int = int(self.stats["num_buckets"])
        self.analyzer: Analyzer = Analyzer.from_dict(self.stats["analyzer"])

        # the columns a ranking needs; the docno strings are read on first use (docnos_arrow). Memory-mapped:
        # the columns are decoded from the page cache, without a fresh buffer of the file's bytes first
        docs = read_parquet_file(self.path / "docs.parquet", DOCS_OPEN_COLUMNS, memory_map=True)
        self.doc_lengths: np.ndarray = docs.column("length").to_numpy().astype(np.int32, copy=False)
        #: each document's position among the docnos sorted (distinct): the rankers' tie-break key
        self.docno_rank: np.ndarray = docs.column("docno_rank").to_numpy().astype(np.int32, copy=False)
        self._terms_table: pa.Table | None = None
        self._bucket_files: dict[tuple[str, int], tuple[pq.ParquetFile, np.ndarray]] = {}
        self._pages: dict[int, PostingsPages] = {}
        self._positions_starts: np.ndarray | None = None
        self._docno_index: dict[str, int] | None = None
        self._term_id_cache: dict[str, int] = {}

    @functools.cached_property
    def doc_unique_terms(self) -> np.ndarray:
        """Each document's number of distinct terms, int32, in docid order (read on first use: no fused
        kernel reads it)."""
        docs = read_parquet_file(self.path / "docs.parquet", ["unique_terms"])
        return docs.column("unique_terms").to_numpy().astype(np.int32, copy=False)

    @functools.cached_property
    def docnos_arrow(self) -> pa.Array:
        """The docnos in docid order as one Arrow string array (read on first use: a process that
        ranks needs them only to write its runs)."""
        docs = read_parquet_file(self.path / "docs.parquet", ["docno"])
        return docs.column("docno").combine_chunks().cast(pa.string())

    @functools.cached_property
    def docnos(self) -> np.ndarray:
        """The docnos in docid order (a numpy array of Python strings: made on first use, as a
        process that only ranks never needs the million strings of a large collection)."""
        return self.docnos_arrow.to_numpy(zero_copy_only=False)

    def __repr__(self) -> str:
        return f"IndexReader({str(self.path)!r}, num_docs={self.num_docs}, num_terms={self.num_terms})"

    # ------------------------------------------------------------------ terms
    def _term_table(self) -> pa.Table:
        """terms.parquet: a term's row is its id (terms sorted)."""
        if self._terms_table is None:
            # memory-mapped: the file's pages are decoded from the page cache, not from a copy
            table = read_parquet_file(self.path / "terms.parquet", memory_map=True)
            # one chunk per column: .chunk(0) is then the whole column. A whole file's read gives that
            # already, and a combine would copy every column (fresh pages as large as the table)
            if any(table.column(name).num_chunks != 1 for name in table.column_names):
                table = pa.Table.from_arrays(
                    [pa.chunked_array([table.column(name).combine_chunks()]) for name in table.column_names],
                    names=table.column_names,
                )
            self._terms_table = table
        return self._terms_table

    @property
    def vocabulary(self) -> list[str]:
        """All terms, sorted (a term's position is its id)."""
        return self._term_table().column("term").to_pylist()

    def term_ids(self, terms: Sequence[str]) -> np.ndarray:
        """The id of each term, -1 for a term not in the index (one hash lookup per vocabulary term, in C++).

        The terms asked for are hashed and the vocabulary probed against them: hashing the
        vocabulary instead (``index_in(terms, value_set=vocabulary)``) cost 12 times more for
        a query set's 3,000 terms in a vocabulary of 400k. Ids found are kept: a query set's
        terms are looked up twice (statistics, then postings).
        """
        terms = list(terms)
        known = self._term_id_cache
        missing = [term for term in dict.fromkeys(terms) if term not in known]
        if missing:
            vocabulary = self._term_table().column("term").chunk(0)
            asked = pc.index_in(vocabulary, value_set=pa.array(missing, pa.string()))  # row -> index in missing
            rows = np.flatnonzero(asked.is_valid().to_numpy(zero_copy_only=False))
            ids = np.full(len(missing), -1, dtype=np.int64)
            ids[asked.take(pa.array(rows)).to_numpy()] = rows  # terms are unique: one row per term at most
            known.update(zip(missing, ids.tolist()))
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
    def bucket_path(self, bucket: int, kind: str = "postings") -> Path:
        """``kind``: ``"postings"`` (docid, tf) or ``"positions"`` (a row per token)."""
        return self.path / kind / f"bucket-{bucket:04d}.parquet"

    def _positions_start(self) -> np.ndarray:
        """Each term's first row in its bucket's positions file: the cf of the bucket's terms before it."""
        if self._positions_starts is None:
            table = self._term_table()
            cf = table.column("cf").to_numpy()
            bucket = table.column("bucket").to_numpy()
            before = np.zeros(len(cf) + 1, dtype=np.int64)
            np.cumsum(cf, out=before[1:])
            # terms.parquet holds the buckets one after the other: a bucket's first term is where its number starts
            first_of_bucket = np.searchsorted(bucket, bucket, side="left")
            self._positions_starts = before[:-1] - before[first_of_bucket]
        return self._positions_starts

    def _bucket_file(self, bucket: int, kind: str) -> tuple[pq.ParquetFile, np.ndarray]:
        """The bucket's Parquet file and the first row of each row group (plus the row count)."""
        found = self._bucket_files.get((kind, bucket))
        if found is None:
            # memory-mapped: the pages read are decoded from the page cache without a copy
            pf = pq.ParquetFile(self.bucket_path(bucket, kind), memory_map=True)
            found = self._bucket_files[(kind, bucket)] = (pf, _group_starts(pf.metadata, ROW_GROUP_ROWS[kind]))
        return found

    def _read_spans(self, bucket: int, kind: str, spans: list[tuple[int, int]]
                    ) -> tuple[list[np.ndarray], list[int | None]]:
        """The columns (int32) of the row groups of the bucket's ``kind`` file that overlap the spans
        ``(start, count)``, and where each span's rows begin in them (None for an empty span).

        One read for all the spans; the caller copies the rows out, so the rest of the groups read is
        freed before the next bucket is read, and its memory reused for that read rather than fresh
        pages faulted in, which cost more than decoding them.
        """
        pf, group_starts = self._bucket_file(bucket, kind)
        starts = np.fromiter((start for start, _ in spans), dtype=np.int64, count=len(spans))
        counts = np.fromiter((count for _, count in spans), dtype=np.int64, count=len(spans))
        groups, first_group = _groups_of(group_starts, starts, counts)
        data = pf.read_row_groups(groups.tolist())
        # row r of the file is row r - group_starts[g] + data_starts[i] of `data` for the i-th group read, g
        group_rows = np.diff(group_starts)[groups]
        data_starts = np.concatenate([[0], np.cumsum(group_rows)]).astype(np.int64)
        local = np.full(len(group_starts), -1, dtype=np.int64)
        local[groups] = data_starts[:-1] - group_starts[groups]
        columns = [data.column(name).to_numpy().astype(np.int32, copy=False) for name in data.column_names]
        firsts = [first if count else None
                  for first, count in zip((starts + local[np.maximum(first_group, 0)]).tolist(), counts.tolist())]
        return columns, firsts

    def _postings_pages(self, bucket: int) -> PostingsPages:
        """The bucket's postings file for :mod:`irgrid.index.pages`, made on first use."""
        found = self._pages.get(bucket)
        if found is None:
            # deferred: irgrid.index.pages loads numba, which a build's driver does without
            from .pages import PostingsPages

            found = self._pages[bucket] = PostingsPages(self.bucket_path(bucket))
        return found

    def _decode_postings(self, bucket: int, starts: np.ndarray, counts: np.ndarray, dests: np.ndarray,
                         docids: np.ndarray, tfs: np.ndarray) -> bool:
        """Rows ``starts[i] .. starts[i]+counts[i]-1`` of the bucket's postings into ``docids`` and ``tfs`` from
        ``dests[i]`` on, decoded from the file's pages (:func:`irgrid.index.pages.read_rows`). False if the file
        holds what that reader does not read (compression, another encoding...): the caller reads it with
        pyarrow, which writes every row again."""
        from .pages import OK, read_rows  # deferred: numba (as in _postings_pages)

        if docids.dtype != np.int32 or tfs.dtype != np.int32:  # the kernels are compiled (and cached) for int32
            return False
        pages = self._postings_pages(bucket)
        groups, _ = _groups_of(pages.group_starts, starts, counts)
        status, _ = read_rows(pages, groups, starts, counts, dests, docids, tfs)
        return status == OK

    def _read_rows(self, bucket: int, kind: str, spans: list[tuple[int, int]]) -> list[np.ndarray]:
        """Rows ``start .. start+count-1`` of the bucket's ``kind`` file for each ``(start, count)``, per column
        (concatenated, in the order given)."""
        if kind == "postings":
            starts = np.array([start for start, _ in spans], dtype=np.int64).reshape(-1)
            counts = np.array([count for _, count in spans], dtype=np.int64).reshape(-1)
            dests = np.zeros(len(spans), dtype=np.int64)
            np.cumsum(counts[:-1], out=dests[1:])
            docids = np.empty(int(counts.sum()), np.int32)
            tfs = np.empty(len(docids), np.int32)
            if self._decode_postings(bucket, starts, counts, dests, docids, tfs):
                return [docids, tfs]
        columns, firsts = self._read_spans(bucket, kind, spans)
        return [np.concatenate([values[first:first + count] for first, (_, count) in zip(firsts, spans) if count]
                               + [np.zeros(0, np.int32)])
                for values in columns]

    def _read_postings(self, terms: Iterable[str], positions: bool):
        """For each bucket holding some of ``terms``: ``(terms found, row ends, docids, tfs, positions or None)``.

        terms.parquet gives each term's bucket, first row and df (and cf: its positions); term
        ``found[i]``'s postings are rows ``ends[i]:ends[i+1]`` of the docids and tfs read, their
        positions the next ``tfs`` rows of the positions read, one posting after the other.
        """
        wanted = list(dict.fromkeys(terms))
        ids = self.term_ids(wanted)
        table = self._term_table()
        bucket_of_id = table.column("bucket").to_numpy()
        start_of_id = table.column("start").to_numpy()
        df_of_id = table.column("df").to_numpy()
        cf_of_id = table.column("cf").to_numpy() if positions else None
        positions_start = self._positions_start() if positions else None
        by_bucket: dict[int, list[tuple[str, int]]] = defaultdict(list)
        for term, i in zip(wanted, ids.tolist()):
            if i >= 0:
                by_bucket[int(bucket_of_id[i])].append((term, i))
        for bucket in sorted(by_bucket):
            found = by_bucket[bucket]
            term_ids = [i for _, i in found]
            docids, tfs = self._read_rows(bucket, "postings", [(int(start_of_id[i]), int(df_of_id[i])) for i in term_ids])
            ends = np.zeros(len(found) + 1, dtype=np.int64)
            np.cumsum(df_of_id[term_ids], out=ends[1:])
            values = None
            if positions:
                (values,) = self._read_rows(bucket, "positions",
                                            [(int(positions_start[i]), int(cf_of_id[i])) for i in term_ids])
            yield [term for term, _ in found], ends, docids, tfs, values

    def postings_into(self, placements: Mapping[str, Sequence[int]], docids: np.ndarray, tfs: np.ndarray) -> None:
        """Copy each term's postings into ``docids`` and ``tfs`` at each offset ``placements[term]`` lists
        (its df rows from there): a query set's flat arrays filled straight from the decoded pages
        (:mod:`irgrid.index.pages`; pyarrow's row groups for a file it does not read), without a
        term's own arrays in between. Every term must be in the index."""
        terms = list(placements)
        ids = self.term_ids(terms)
        if (ids < 0).any():
            raise KeyError(f"not in the index: {terms[int(np.flatnonzero(ids < 0)[0])]!r}")
        table = self._term_table()
        bucket_of_id = table.column("bucket").to_numpy()
        start_of_id = table.column("start").to_numpy()
        df_of_id = table.column("df").to_numpy()
        by_bucket: dict[int, list[tuple[str, int]]] = defaultdict(list)
        for term, i in zip(terms, ids.tolist()):
            by_bucket[int(bucket_of_id[i])].append((term, i))
        for bucket in sorted(by_bucket):
            found = by_bucket[bucket]
            # a copy per placement of each term: its rows, to its offset
            copies = [(i, at) for term, i in found for at in placements[term]]
            term_of_copy = np.array([i for i, _ in copies], dtype=np.int64).reshape(-1)
            dests = np.array([at for _, at in copies], dtype=np.int64).reshape(-1)
            if self._decode_postings(bucket, start_of_id[term_of_copy].astype(np.int64),
                                     df_of_id[term_of_copy].astype(np.int64), dests, docids, tfs):
                continue
            spans = [(int(start_of_id[i]), int(df_of_id[i])) for _, i in found]
            (bucket_docids, bucket_tfs), firsts = self._read_spans(bucket, "postings", spans)
            for (term, _), first, (_, count) in zip(found, firsts, spans):
                for at in placements[term] if count else ():
                    docids[at:at + count] = bucket_docids[first:first + count]
                    tfs[at:at + count] = bucket_tfs[first:first + count]

    def postings(self, terms: Iterable[str], positions: bool = False) -> dict[str, Postings]:
        """Postings of ``terms`` (absent terms omitted), reading only the row groups that hold them."""
        out: dict[str, Postings] = {}
        for found, ends, docids, tfs, values in self._read_postings(terms, positions):
            offsets = None
            if positions:
                offsets = np.zeros(len(tfs) + 1, dtype=np.int64)
                np.cumsum(tfs, out=offsets[1:])
            for term, lo, hi in zip(found, ends[:-1].tolist(), ends[1:].tolist()):
                plist = [values[offsets[i]:offsets[i + 1]] for i in range(lo, hi)] if positions else None
                out[term] = Postings(docids[lo:hi], tfs[lo:hi], plist)
        return out

    def positional_postings(self, terms: Iterable[str]) -> PositionalPostings:
        """Postings with positions of ``terms`` (absent terms omitted), in flat arrays (window counting)."""
        # deferred: irgrid.features.windows loads numba, which a build's driver does without
        from irgrid.features.windows import PositionalPostings

        spans: dict[str, tuple[int, int]] = {}
        docids, tfs, positions = [], [], []
        rows_before = 0
        for found, ends, bucket_docids, bucket_tfs, values in self._read_postings(terms, positions=True):
            for term, lo, hi in zip(found, ends[:-1].tolist(), ends[1:].tolist()):
                spans[term] = (rows_before + lo, rows_before + hi)
            rows_before += len(bucket_docids)
            docids.append(bucket_docids)
            tfs.append(bucket_tfs)
            positions.append(values)
        empty = np.zeros(0, np.int32)
        all_tfs = np.concatenate(tfs) if tfs else empty
        # a posting's positions follow those of the postings before it: the running sum of the tfs
        offsets = np.zeros(len(all_tfs) + 1, dtype=np.int64)
        np.cumsum(all_tfs, out=offsets[1:])
        return PositionalPostings(
            spans,
            np.concatenate(docids) if docids else empty,
            all_tfs,
            offsets,
            np.concatenate(positions) if positions else empty,
        )

    # ---------------------------------------------------------------- forward
    @property
    def forward_path(self) -> Path:
        """The directory of this index's forward index (which need not exist)."""
        return self._forward_path if self._forward_path is not None else forward_index_dir(self.path)

    def forward(self, docids: Iterable[int]) -> list[list[str]]:
        """The analysed terms of each document, in document order (one list per docid given), read from
        the forward index at :attr:`forward_path`."""
        if self._forward_index is None:
            self._forward_index = ForwardIndex(self.forward_path, self.stats)
        docids = [int(d) for d in docids]
        table = self._forward_index.read(docids)
        terms = table.column("terms").combine_chunks()
        found: dict[int, list[str]] = {}
        if len(terms):
            vocabulary = self._term_table().column("term").chunk(0)
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
