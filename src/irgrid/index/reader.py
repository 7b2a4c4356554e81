"""Read an index written by :func:`irgrid.index.build_index`."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from irgrid.analysis import Analyzer
from irgrid.errors import InputFormatError

from .build import FORMAT_VERSION, FORWARD_PART_DOCS, bucket_of


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
        self._term_dict: dict[str, tuple[int, int]] | None = None
        self._docno_index: dict[str, int] | None = None

    def __repr__(self) -> str:
        return f"IndexReader({str(self.path)!r}, num_docs={self.num_docs}, num_terms={self.num_terms})"

    # ------------------------------------------------------------------ terms
    def _terms(self) -> dict[str, tuple[int, int]]:
        if self._term_dict is None:
            t = pq.read_table(self.path / "terms.parquet")
            self._term_dict = dict(
                zip(t.column("term").to_pylist(), zip(t.column("df").to_pylist(), t.column("cf").to_pylist()))
            )
        return self._term_dict

    @property
    def vocabulary(self) -> list[str]:
        """All terms, sorted."""
        return list(self._terms())

    def term_stats(self, terms: Iterable[str]) -> dict[str, tuple[int, int]]:
        """``term -> (df, cf)`` for the terms of the index (absent terms omitted)."""
        d = self._terms()
        return {t: d[t] for t in terms if t in d}

    # --------------------------------------------------------------- postings
    def bucket_path(self, bucket: int) -> Path:
        return self.path / "postings" / f"bucket-{bucket:04d}.parquet"

    def postings(self, terms: Iterable[str], positions: bool = False) -> dict[str, Postings]:
        """Postings of ``terms`` (absent terms omitted), reading only their buckets.

        Each bucket file is read with the filter ``term in [...]``, which skips the
        row groups whose ``term`` statistics cannot contain the terms.
        """
        wanted = list(dict.fromkeys(terms))
        if self._term_dict is not None:  # already loaded: skip unknown terms for free
            wanted = [t for t in wanted if t in self._term_dict]
        by_bucket: dict[int, list[str]] = defaultdict(list)
        for t in wanted:
            by_bucket[bucket_of(t, self.num_buckets)].append(t)
        columns = ["term", "docid", "tf"] + (["positions"] if positions else [])
        out: dict[str, Postings] = {}
        for b in sorted(by_bucket):
            table = pq.read_table(self.bucket_path(b), columns=columns, filters=[("term", "in", by_bucket[b])])
            if table.num_rows == 0:
                continue
            table = table.take(pc.sort_indices(table, sort_keys=[("term", "ascending"), ("docid", "ascending")]))
            # per-term row counts, in the table's (sorted) term order; only the
            # distinct terms become Python strings
            counts = pc.value_counts(table.column("term"))
            groups = sorted(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()))
            docids = table.column("docid").to_numpy().astype(np.int32, copy=False)
            tfs = table.column("tf").to_numpy().astype(np.int32, copy=False)
            if positions:
                pos = table.column("positions").combine_chunks()
                offsets = pos.offsets.to_numpy()
                values = pos.values.to_numpy().astype(np.int32, copy=False)
            start = 0
            for term, count in groups:
                end = start + count
                plist = None
                if positions:
                    plist = [values[offsets[i] : offsets[i + 1]] for i in range(start, end)]
                out[term] = Postings(docids[start:end], tfs[start:end], plist)
                start = end
        return out

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
        found: dict[int, list[str]] = {}
        for part in sorted(by_part):
            table = pq.read_table(
                self.path / "forward" / f"part-{part:04d}.parquet", filters=[("docid", "in", by_part[part])]
            )
            found.update(zip(table.column("docid").to_pylist(), table.column("terms").to_pylist()))
        return [found[d] for d in docids]

    # ------------------------------------------------------------------- docs
    def docids_of(self, docnos: Iterable[str]) -> dict[str, int]:
        """``docno -> docid`` for the given docnos (unknown docnos omitted)."""
        if self._docno_index is None:
            self._docno_index = {d: i for i, d in enumerate(self.docnos.tolist())}
        idx = self._docno_index
        return {d: idx[d] for d in docnos if d in idx}
