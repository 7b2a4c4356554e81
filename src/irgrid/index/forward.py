"""The forward index: each document's analysed terms in order, built from a postings index.

Its own directory, made after the postings index by :func:`build_forward_index` for the indexes
whose readers need it (the counting of axiom violations), so that the postings index is the same
whoever reads it::

    out_dir/
      part-{i:04d}.parquet   docid: int32, terms: list<int32> (term ids, rows of the index's
                             terms.parquet, in document order); FORWARD_PART_DOCS documents a part
      stats.json             format_version, forward_part_docs, and the index's num_docs, num_terms,
                             total_length and analyzer (the reader checks they match its index)

The terms of a document in order are its tokens sorted by position: the index's positions count
every token (stop words included), so a document's positions are distinct and follow the text.
The build reads each postings bucket once, splits its tokens by forward part (kept in memory when
there is one part, else written to piece files), then sorts each part's tokens by (docid, position):
no text is analysed again.
"""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from irgrid.errors import InputFormatError
from irgrid.index.format import (
    FORMAT_VERSION,
    FORWARD_PART_DOCS,
    FORWARD_ROW_GROUP,
    FORWARD_SCHEMA,
    read_index_stats,
    write_parquet,
)
from irgrid.io import install_directory, remove_dead_leftovers, temporary_name

#: the keys of the index's stats.json a forward index copies: the reader refuses a forward index
#: whose values differ from its index's (one built from another index: its term ids mean other terms)
INDEX_IDENTITY = ("num_docs", "num_terms", "total_length", "analyzer")


def forward_index_dir(index_dir: str | os.PathLike) -> Path:
    """Where the forward index of ``index_dir`` is by default: ``results/{collection}/forward/{analyzer}``
    for the index ``results/{collection}/index/{analyzer}`` (the workflow's layout)."""
    index_dir = Path(index_dir)
    return index_dir.parent.parent / "forward" / index_dir.name


def _bucket_tokens(index_dir: Path, bucket: int, term_rows: np.ndarray, dfs: np.ndarray, num_parts: int,
                   pieces: Path | None) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The tokens of one postings bucket as ``(docids, positions, term ids)`` per forward part: written to
    ``pieces`` (``{}`` returned), or returned when ``pieces`` is None."""
    postings = pq.read_table(index_dir / "postings" / f"bucket-{bucket:04d}.parquet")
    positions = pq.read_table(index_dir / "positions" / f"bucket-{bucket:04d}.parquet").column("position")
    docids = postings.column("docid").to_numpy()
    tfs = postings.column("tf").to_numpy()
    if len(docids) != int(dfs.sum()) or len(positions) != int(tfs.sum()):  # pragma: no cover - a damaged index
        raise InputFormatError(index_dir / "postings" / f"bucket-{bucket:04d}.parquet", None,
                               "as many postings as the bucket's terms' df and positions as their tf",
                               f"{len(docids)} postings, {len(positions)} positions")
    token_docids = np.repeat(docids, tfs)
    token_terms = np.repeat(np.repeat(term_rows.astype(np.int32), dfs), tfs)
    token_positions = positions.to_numpy()
    if num_parts == 1:
        by_part = {0: (token_docids, token_positions, token_terms)}
    else:
        parts = token_docids // FORWARD_PART_DOCS
        order = np.argsort(parts, kind="stable")
        bounds = np.searchsorted(parts[order], np.arange(num_parts + 1))
        by_part = {}
        for part in range(num_parts):
            rows = order[bounds[part]:bounds[part + 1]]
            if len(rows):
                by_part[part] = (token_docids[rows], token_positions[rows], token_terms[rows])
    if pieces is None:
        return by_part
    for part, (part_docids, part_positions, part_terms) in by_part.items():
        with open(pieces / f"part-{part:04d}" / f"bucket-{bucket:06d}.npz", "wb") as f:
            np.savez(f, docids=part_docids, positions=part_positions, terms=part_terms)
    return {}


def _load_pieces(pieces: Path, part: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    loaded = []
    for f in sorted((pieces / f"part-{part:04d}").glob("bucket-*.npz")):
        with np.load(f) as arrays:
            loaded.append((arrays["docids"], arrays["positions"], arrays["terms"]))
    return loaded


def _write_part(out: Path, part: int, num_docs: int, tokens: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
    """Sort one part's tokens (``(docids, positions, term ids)`` pieces) by (docid, position) into
    ``part-XXXX.parquet``, a row per document."""
    first = part * FORWARD_PART_DOCS
    count = min(FORWARD_PART_DOCS, num_docs - first) if num_docs else 0
    docids = np.concatenate([t[0] for t in tokens]) if tokens else np.zeros(0, np.int32)
    positions = np.concatenate([t[1] for t in tokens]) if tokens else np.zeros(0, np.int32)
    terms = np.concatenate([t[2] for t in tokens]) if tokens else np.zeros(0, np.int32)
    # (docid, position) is unique: any sort of one int64 key gives the one order, cheaper than a lexsort
    order = np.argsort(((docids.astype(np.int64) - first) << 32) | positions.astype(np.int64))
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(docids - first, minlength=count), out=offsets[1:])
    table = pa.Table.from_arrays(
        [
            pa.array(np.arange(first, first + count, dtype=np.int32), pa.int32()),
            pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(terms[order], pa.int32())),
        ],
        schema=FORWARD_SCHEMA,
    )
    write_parquet(table, out / f"part-{part:04d}.parquet", FORWARD_ROW_GROUP,
                  sorting_columns=[pq.SortingColumn(0)], dictionary_columns=False)


def build_forward_index(index_dir: str | os.PathLike, out_dir: str | os.PathLike, workers: int = 1) -> dict[str, Any]:
    """Write the forward index of the postings index ``index_dir`` to ``out_dir``; returns its stats.

    ``out_dir``: where :class:`irgrid.index.IndexReader` looks by default is
    :func:`forward_index_dir` of ``index_dir`` (the workflow's layout). ``workers``: threads (the reading, the
    splitting and the sorting are numpy and Arrow, which release the GIL). Each thread holds a
    bucket's tokens, then a part's (at most FORWARD_PART_DOCS documents'). Written to a temporary directory beside ``out_dir`` and
    renamed to it at the end, so a killed build leaves no half forward index.
    """
    index_stats = read_index_stats(index_dir)
    index_dir = Path(index_dir).resolve()
    out_dir = Path(out_dir).resolve()
    num_docs = int(index_stats["num_docs"])
    num_buckets = int(index_stats["num_buckets"])
    num_parts = max(1, -(-num_docs // FORWARD_PART_DOCS))
    terms = pq.read_table(index_dir / "terms.parquet", columns=["df", "bucket"])
    term_buckets = terms.column("bucket").to_numpy()
    dfs = terms.column("df").to_numpy()
    # a bucket's terms are consecutive rows of terms.parquet, in the order of its postings
    term_order = np.argsort(term_buckets, kind="stable")
    bucket_bounds = np.searchsorted(term_buckets[term_order], np.arange(num_buckets + 1))

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_leftovers(out_dir)  # what a killed build of this forward index left
    tmp = temporary_name(out_dir)
    try:
        tmp.mkdir()
        # one part (up to FORWARD_PART_DOCS documents): its tokens stay in memory, as its sort holds them
        # all anyway; several: each bucket's tokens go to piece files per part, read back part by part
        pieces = tmp / "pieces" if num_parts > 1 else None
        for part in range(num_parts if pieces else 0):
            (pieces / f"part-{part:04d}").mkdir(parents=True)

        def bucket_tokens(bucket: int):
            rows = term_order[bucket_bounds[bucket]:bucket_bounds[bucket + 1]]
            return _bucket_tokens(index_dir, bucket, rows, dfs[rows], num_parts, pieces)

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            in_memory = [tokens[0] for tokens in pool.map(bucket_tokens, range(num_buckets)) if tokens]
            list(pool.map(lambda p: _write_part(tmp, p, num_docs, _load_pieces(pieces, p) if pieces else in_memory),
                          range(num_parts)))
        if pieces:
            shutil.rmtree(pieces)
        stats = {"format_version": FORMAT_VERSION, "forward_part_docs": FORWARD_PART_DOCS,
                 **{key: index_stats[key] for key in INDEX_IDENTITY}}
        with open(tmp / "stats.json", "w", encoding="utf-8") as f:
            json.dump(stats, f, sort_keys=True, indent=2, ensure_ascii=False)
            f.write("\n")
        install_directory(tmp, out_dir)
        return stats
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class ForwardIndex:
    """Reads a forward index: the terms of documents in order, as ids or (with the vocabulary) strings.

    ``index_stats``: the stats of the postings index whose term ids it holds; a forward index built
    from another index (other stats) is refused naming its stats.json.
    """

    def __init__(self, path: str | os.PathLike, index_stats: dict | None = None):
        self.path = Path(path)
        stats_path = self.path / "stats.json"
        if not stats_path.is_file():
            raise InputFormatError(self.path, None, "a forward index directory with stats.json (irgrid forward-index, "
                                   "irgrid.index.forward.build_forward_index)", "no stats.json")
        with open(stats_path, encoding="utf-8") as f:
            self.stats: dict = json.load(f)
        if self.stats.get("format_version") != FORMAT_VERSION:
            raise InputFormatError(stats_path, None, f"format_version {FORMAT_VERSION}",
                                   repr(self.stats.get("format_version")))
        if index_stats is not None:
            differ = [key for key in INDEX_IDENTITY if self.stats.get(key) != index_stats.get(key)]
            if differ:
                raise InputFormatError(stats_path, None, "the forward index of the index it is read with (same "
                                       + ", ".join(INDEX_IDENTITY) + "): rebuild it with irgrid forward-index",
                                       ", ".join(f"{key} {self.stats.get(key)!r} (index: {index_stats.get(key)!r})"
                                                 for key in differ))
        self.num_docs = int(self.stats["num_docs"])
        self.part_docs = int(self.stats["forward_part_docs"])

    def read(self, docids) -> pa.Table:
        """The rows (``docid``, ``terms``: term ids in order) of the distinct docids given, part after part."""
        docids = [int(d) for d in docids]
        for d in docids:
            if not 0 <= d < self.num_docs:
                raise IndexError(f"docid {d} out of range 0..{self.num_docs - 1}")
        by_part: dict[int, list[int]] = {}
        for d in dict.fromkeys(docids):
            by_part.setdefault(d // self.part_docs, []).append(d)
        tables = [pq.read_table(self.path / f"part-{part:04d}.parquet", filters=[("docid", "in", by_part[part])],
                                schema=FORWARD_SCHEMA)
                  for part in sorted(by_part)]
        return pa.concat_tables(tables) if tables else FORWARD_SCHEMA.empty_table()
