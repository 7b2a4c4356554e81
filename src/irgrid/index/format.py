"""The on-disk format of the index: the schemas, row-group sizes and bucket function that
:mod:`irgrid.index.build` writes and :mod:`irgrid.index.reader` reads.

Any change here changes the bytes of every index: bump ``FORMAT_VERSION`` with it (the workflow
rebuilds indexes of another version).
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from irgrid.errors import InputFormatError

FORMAT_VERSION = 4

#: postings/bucket-XXXX.parquet: a term's postings, docids ascending. No positions: a query that
#: needs none reads only these two small columns.
POSTINGS_SCHEMA = pa.schema(
    [
        pa.field("docid", pa.int32(), nullable=False),
        pa.field("tf", pa.int32(), nullable=False),
    ]
)
#: positions/bucket-XXXX.parquet: one row per token, in the order of the postings (a term's
#: postings after each other, a posting's positions ascending). A term's positions start at the
#: sum of the cf of the terms before it in the bucket, a posting's at the running sum of the tfs
#: before it: no list offsets are stored.
POSITIONS_SCHEMA = pa.schema([pa.field("position", pa.int32(), nullable=False)])
FORWARD_SCHEMA = pa.schema(
    [
        pa.field("docid", pa.int32(), nullable=False),
        pa.field("terms", pa.list_(pa.int32()), nullable=False),  # term ids: rows of terms.parquet
    ]
)
#: a shard's documents, as its indexing task writes them (docs.parquet's columns but the docno rank)
SHARD_DOCS_SCHEMA = pa.schema(
    [
        pa.field("docid", pa.int32(), nullable=False),
        pa.field("docno", pa.string(), nullable=False),
        pa.field("length", pa.int32(), nullable=False),
        pa.field("unique_terms", pa.int32(), nullable=False),
    ]
)
#: docs.parquet: a row per document in docid order. ``docno_rank``: the document's position among
#: the docnos sorted (the rankers' tie-break key), stored so that a process that ranks reads neither
#: the docno strings nor sorts them before its first ranking.
DOCS_SCHEMA = SHARD_DOCS_SCHEMA.append(pa.field("docno_rank", pa.int32(), nullable=False))
#: the columns of docs.parquet a process that ranks reads when it opens the index (``unique_terms``, which
#: no fused kernel reads, on first use)
DOCS_OPEN_COLUMNS = ["length", "docno_rank"]
TERMS_SCHEMA = pa.schema(
    [
        pa.field("term", pa.string(), nullable=False),
        pa.field("df", pa.int32(), nullable=False),
        pa.field("cf", pa.int64(), nullable=False),
        pa.field("bucket", pa.int32(), nullable=False),  # postings/bucket-XXXX.parquet holding the term
        pa.field("start", pa.int64(), nullable=False),   # its first row there; df rows follow
    ]
)

#: rows per row group of the postings: a reader reads whole row groups, so small ones
#: waste little around a term's rows; large enough to keep the footers small.
POSTINGS_ROW_GROUP = 8192
#: tokens per row group of the positions file
POSITIONS_ROW_GROUP = 65536
#: Parquet encodings of the postings and positions: DELTA_BINARY_PACKED stores the bit-packed
#: differences of consecutive values, which within a term (docids) or a posting (positions) are
#: the gaps. No compression on top: zstd saved little of these files and slowed their reading
#: (benchmarks/HISTORY.md, "Index format 3").
POSTINGS_ENCODING = {"docid": "DELTA_BINARY_PACKED"}
POSTINGS_DICTIONARY = ["tf"]  # few distinct values: dictionary indices, bit-packed
POSITIONS_ENCODING = {"position": "DELTA_BINARY_PACKED"}
#: documents per ``forward/part-XXXX.parquet`` (fixed, so independent of the input shards)
FORWARD_PART_DOCS = 65536
FORWARD_ROW_GROUP = 4096
TERMS_ROW_GROUP = 65536
#: terms sorted within a bucket share prefixes (DELTA_BYTE_ARRAY stores the suffixes); start, cf
#: and df grow or repeat. Half the bytes of dictionary-encoded terms, which are all distinct.
TERMS_ENCODING = {"term": "DELTA_BYTE_ARRAY", "df": "DELTA_BINARY_PACKED", "cf": "DELTA_BINARY_PACKED",
                  "bucket": "DELTA_BINARY_PACKED", "start": "DELTA_BINARY_PACKED"}
DOCS_ROW_GROUP = 1 << 20
#: the docno ranks are a permutation of the docids (the identity when docnos sort as the documents
#: come): stored as bit-packed differences, not dictionary-encoded (every value is distinct)
DOCS_DICTIONARY = ["docid", "docno", "length", "unique_terms"]
DOCS_ENCODING = {"docno_rank": "DELTA_BINARY_PACKED"}

def bucket_of(term: str, num_buckets: int) -> int:
    """The postings bucket of ``term``: ``crc32(utf-8) % num_buckets``."""
    return zlib.crc32(term.encode("utf-8")) % num_buckets


def docno_ranks(docnos: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Each document's position among the docnos sorted (int32, docid order): docs.parquet's
    ``docno_rank``, the rankers' tie-break key.

    pyarrow's sort of the strings themselves (stable; numpy's fixed-width unicode copy would cost
    N times the longest docno), inverted.
    """
    ranks = np.empty(len(docnos), dtype=np.int32)
    ranks[pc.sort_indices(docnos).to_numpy()] = np.arange(len(docnos), dtype=np.int32)
    return ranks


def write_parquet(table: pa.Table, path: str | os.PathLike, row_group_size: int, sorting_columns=None,
                  dictionary_columns: list[str] | bool = True, column_encoding: dict[str, str] | None = None) -> None:
    """Write ``table`` so that equal tables give equal bytes.

    ``dictionary_columns``: the columns worth dictionary-encoding (repeated
    values); docids and positions are not, and hashing them costs build time.
    ``column_encoding``: the encodings of columns not dictionary-encoded.
    """
    table = table.replace_schema_metadata(None).combine_chunks()
    pq.write_table(
        table,
        path,
        row_group_size=row_group_size,
        compression="zstd",
        compression_level=3,
        use_dictionary=dictionary_columns,
        write_statistics=True,
        store_schema=True,
        sorting_columns=sorting_columns,
        column_encoding=column_encoding,
    )


def read_index_stats(index_dir: str | os.PathLike) -> dict:
    """An index's ``stats.json``, checked for this format's version (the reader's and the forward
    index builder's first step)."""
    index_dir = Path(index_dir)
    stats_path = index_dir / "stats.json"
    if not stats_path.is_file():
        raise InputFormatError(index_dir, None, "an index directory with stats.json (see irgrid.index.build_index)",
                               "no stats.json")
    with open(stats_path, encoding="utf-8") as f:
        stats: dict = json.load(f)
    version = stats.get("format_version")
    if version != FORMAT_VERSION:
        raise InputFormatError(stats_path, None, f"format_version {FORMAT_VERSION}", repr(version))
    return stats
