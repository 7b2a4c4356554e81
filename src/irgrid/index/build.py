"""Build the Parquet inverted index with Dask.

Input: a directory of document shards ``part-*.parquet`` (columns ``docno``,
``text``) as written by :func:`irgrid.collections.write_document_shards`.

The task graph::

    analyze shard 0 ─┐                 ┌─ merge postings bucket 0 ─┐
    analyze shard 1 ─┼─ (all shards) ──┼─ ...                       ├─ terms.parquet
    ...             ─┘                 ├─ merge postings bucket B-1 ┘
                                       ├─ merge forward part 0..P-1
                                       └─ docs.parquet

* Every shard task analyses its documents (docids are global: shard ``i`` starts at
  the sum of the row counts of the shards before it, read from the Parquet
  footers), and writes its postings split by bucket
  (``crc32(term) % num_buckets``), its forward-index rows split by forward part
  and its per-document statistics into ``pieces/`` of the temporary directory.
  Large shards are flushed in several runs, so a task holds at most about
  ``RUN_POSTINGS`` postings in memory.
* Every bucket task concatenates the pieces of its bucket, sorts them by
  ``(term, docid)`` and writes ``postings/bucket-XXXX.parquet`` plus the
  ``(term, df, cf)`` rows of its terms.
* The driver only handles file names, row counts and small summaries; it never
  holds the collection.

Everything is written to ``<out_dir>.tmp-<random>`` and renamed to ``out_dir``
only when complete.  Parquet files are written deterministically (combined
chunks, fixed row-group sizes, explicit schemas without pandas metadata), so the
same collection and analyzer give byte-identical files whatever the number of
input shards, the scheduler or the number of workers.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import time
import sys
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from irgrid.analysis import Analyzer
from irgrid.errors import ConfigError, InputFormatError

FORMAT_VERSION = 1

POSTINGS_SCHEMA = pa.schema(
    [
        pa.field("term", pa.string(), nullable=False),
        pa.field("docid", pa.int32(), nullable=False),
        pa.field("tf", pa.int32(), nullable=False),
        pa.field("positions", pa.list_(pa.int32()), nullable=False),
    ]
)
FORWARD_SCHEMA = pa.schema(
    [
        pa.field("docid", pa.int32(), nullable=False),
        pa.field("terms", pa.list_(pa.string()), nullable=False),
    ]
)
DOCS_SCHEMA = pa.schema(
    [
        pa.field("docid", pa.int32(), nullable=False),
        pa.field("docno", pa.string(), nullable=False),
        pa.field("length", pa.int32(), nullable=False),
        pa.field("unique_terms", pa.int32(), nullable=False),
    ]
)
TERMS_SCHEMA = pa.schema(
    [
        pa.field("term", pa.string(), nullable=False),
        pa.field("df", pa.int32(), nullable=False),
        pa.field("cf", pa.int64(), nullable=False),
    ]
)

#: rows per row group of the term-sorted postings: small enough that a filter on
#: ``term`` skips most of a bucket, large enough to keep the footers small.
POSTINGS_ROW_GROUP = 65536
#: documents per ``forward/part-XXXX.parquet`` (fixed, so independent of the input shards)
FORWARD_PART_DOCS = 65536
FORWARD_ROW_GROUP = 4096
TERMS_ROW_GROUP = 65536
DOCS_ROW_GROUP = 1 << 20
#: a shard task flushes its postings buffers to disk after this many postings
RUN_POSTINGS = 2_000_000
READ_BATCH_ROWS = 1024

LOCAL_SCHEDULERS = ("processes", "threads", "sync", "synchronous", "single-threaded")


class ShardFormatError(InputFormatError):
    """An :class:`InputFormatError` raised inside a Dask task; picklable, so it reaches the driver intact."""

    def __reduce__(self):
        return (type(self), (self.path, self.line, self.expected, self.found))


def bucket_of(term: str, num_buckets: int) -> int:
    """The postings bucket of ``term``: ``crc32(utf-8) % num_buckets``."""
    return zlib.crc32(term.encode("utf-8")) % num_buckets


def write_parquet(table: pa.Table, path: str | os.PathLike, row_group_size: int, sorting_columns=None) -> None:
    """Write ``table`` so that equal tables give equal bytes."""
    table = table.replace_schema_metadata(None).combine_chunks()
    pq.write_table(
        table,
        path,
        row_group_size=row_group_size,
        compression="zstd",
        compression_level=3,
        use_dictionary=True,
        write_statistics=True,
        store_schema=True,
        sorting_columns=sorting_columns,
    )


# ---------------------------------------------------------------------- input


def _shard_sort_key(path: Path):
    nums = re.findall(r"\d+", path.stem)
    return (int(nums[-1]) if nums else -1, path.name)


def list_shards(docs_dir: str | os.PathLike) -> list[tuple[Path, int]]:
    """``(path, num_rows)`` of the document shards in order; validates their schema."""
    docs_dir = Path(docs_dir)
    if not docs_dir.is_dir():
        raise InputFormatError(docs_dir, None, "a directory of part-*.parquet document shards", "no such directory")
    paths = sorted(docs_dir.glob("part-*.parquet"), key=_shard_sort_key)
    if not paths:
        raise InputFormatError(docs_dir, None, "part-*.parquet document shards", "none")
    shards = []
    for p in paths:
        try:
            pf = pq.ParquetFile(p)
        except Exception as exc:  # unreadable footer
            raise InputFormatError(p, None, "a Parquet file", f"{type(exc).__name__}: {exc}") from exc
        schema = pf.schema_arrow
        for col in ("docno", "text"):
            if col not in schema.names:
                raise InputFormatError(p, None, "columns docno, text", ", ".join(schema.names))
            if not (pa.types.is_string(schema.field(col).type) or pa.types.is_large_string(schema.field(col).type)):
                raise InputFormatError(p, None, f"column {col} of type string", str(schema.field(col).type))
        shards.append((p, pf.metadata.num_rows))
        del pf
    return shards


# ---------------------------------------------------------------------- tasks


def _postings_piece(terms, docids, tfs, pos_values, pos_offsets) -> pa.Table:
    positions = pa.ListArray.from_arrays(
        pa.array(pos_offsets, type=pa.int32()), pa.array(pos_values, type=pa.int32())
    )
    return pa.Table.from_arrays(
        [
            pa.array(terms, type=pa.string()),
            pa.array(docids, type=pa.int32()),
            pa.array(tfs, type=pa.int32()),
            positions,
        ],
        schema=POSTINGS_SCHEMA,
    )


def _forward_piece(docids, terms, offsets) -> pa.Table:
    return pa.Table.from_arrays(
        [
            pa.array(docids, type=pa.int32()),
            pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), pa.array(terms, type=pa.string())),
        ],
        schema=FORWARD_SCHEMA,
    )


def _iter_shard(path: str):
    """``(docno, text)`` rows of a shard; a read failure becomes a :class:`ShardFormatError`."""
    row = 0
    try:
        pf = pq.ParquetFile(path)
        batches = pf.iter_batches(batch_size=READ_BATCH_ROWS, columns=["docno", "text"])
        for batch in batches:
            docnos = batch.column(0).to_pylist()
            texts = batch.column(1).to_pylist()
            # errors of the consumer are raised in its own frame, not here, so
            # only reading errors are caught below
            for pair in zip(docnos, texts):
                row += 1
                yield pair
    except (pa.ArrowException, OSError, ValueError) as exc:
        if isinstance(exc, InputFormatError):
            raise
        raise ShardFormatError(path, row + 1, "a readable Parquet document shard",
                               f"{type(exc).__name__}: {exc}") from exc


def analyze_shard(
    shard: int,
    path: str,
    offset: int,
    tmp: str,
    analyzer: Analyzer,
    num_buckets: int,
    forward_part_docs: int = FORWARD_PART_DOCS,
    run_postings: int = RUN_POSTINGS,
) -> dict[str, int]:
    """Analyse one document shard and write its postings / forward / docs pieces."""
    pieces = Path(tmp) / "pieces"
    analyze = analyzer.analyze_with_positions
    bucket_cache: dict[str, int] = {}
    crc32 = zlib.crc32
    nb = num_buckets

    def new_buffers():
        return ([[] for _ in range(nb)], [[] for _ in range(nb)], [[] for _ in range(nb)],
                [[] for _ in range(nb)], [[0] for _ in range(nb)])

    b_terms, b_docids, b_tfs, b_pos, b_offs = new_buffers()
    buffered = 0
    run = 0
    total_postings = 0

    def flush_postings():
        nonlocal b_terms, b_docids, b_tfs, b_pos, b_offs, buffered, run
        for b in range(nb):
            if b_terms[b]:
                table = _postings_piece(b_terms[b], b_docids[b], b_tfs[b], b_pos[b], b_offs[b])
                pq.write_table(table, pieces / f"bucket-{b:04d}" / f"shard-{shard:06d}-run-{run:04d}.parquet",
                               compression="none")
        b_terms, b_docids, b_tfs, b_pos, b_offs = new_buffers()
        buffered = 0
        run += 1

    f_part = None
    f_docids: list[int] = []
    f_terms: list[str] = []
    f_offs: list[int] = [0]

    def flush_forward():
        nonlocal f_docids, f_terms, f_offs
        if f_docids:
            pq.write_table(_forward_piece(f_docids, f_terms, f_offs),
                           pieces / f"forward-{f_part:04d}" / f"shard-{shard:06d}.parquet", compression="none")
        f_docids, f_terms, f_offs = [], [], [0]

    d_docids: list[int] = []
    d_docnos: list[str] = []
    d_lengths: list[int] = []
    d_unique: list[int] = []

    docid = offset
    row = 0
    for docno, text in _iter_shard(path):
        row += 1
        if docno is None or docno == "":
            raise ShardFormatError(path, row, "a non-empty docno (rows counted from 1)", repr(docno))
        terms, positions = analyze(text or "")
        occ: dict[str, list[int]] = {}
        for t, p in zip(terms, positions):
            lst = occ.get(t)
            if lst is None:
                occ[t] = [p]
            else:
                lst.append(p)
        for t, ps in occ.items():
            b = bucket_cache.get(t)
            if b is None:
                b = bucket_cache[t] = crc32(t.encode("utf-8")) % nb
            b_terms[b].append(t)
            b_docids[b].append(docid)
            b_tfs[b].append(len(ps))
            pos = b_pos[b]
            pos.extend(ps)
            b_offs[b].append(len(pos))
        buffered += len(occ)
        total_postings += len(occ)

        part = docid // forward_part_docs
        if part != f_part:
            flush_forward()
            f_part = part
        f_docids.append(docid)
        f_terms.extend(terms)
        f_offs.append(len(f_terms))

        d_docids.append(docid)
        d_docnos.append(docno)
        d_lengths.append(len(terms))
        d_unique.append(len(occ))
        docid += 1
        if buffered >= run_postings:
            flush_postings()
            if len(bucket_cache) > 4 * run_postings:
                bucket_cache.clear()
    if buffered:
        flush_postings()
    flush_forward()
    docs = pa.Table.from_arrays(
        [
            pa.array(d_docids, type=pa.int32()),
            pa.array(d_docnos, type=pa.string()),
            pa.array(d_lengths, type=pa.int32()),
            pa.array(d_unique, type=pa.int32()),
        ],
        schema=DOCS_SCHEMA,
    )
    pq.write_table(docs, pieces / "docs" / f"shard-{shard:06d}.parquet", compression="none")
    return {"shard": shard, "docs": docid - offset, "postings": total_postings}


def _read_pieces(directory: Path, schema: pa.Schema) -> pa.Table:
    files = sorted(directory.glob("*.parquet"))
    if not files:
        return schema.empty_table()
    return pa.concat_tables([pq.read_table(f, schema=schema) for f in files])


def merge_bucket(bucket: int, tmp: str, shard_results: list) -> dict[str, int]:
    """Sort the pieces of one bucket into ``postings/bucket-XXXX.parquet`` and its term statistics."""
    tmp_path = Path(tmp)
    piece_dir = tmp_path / "pieces" / f"bucket-{bucket:04d}"
    table = _read_pieces(piece_dir, POSTINGS_SCHEMA)
    order = pc.sort_indices(table, sort_keys=[("term", "ascending"), ("docid", "ascending")])
    table = table.take(order)
    write_parquet(
        table,
        tmp_path / "postings" / f"bucket-{bucket:04d}.parquet",
        POSTINGS_ROW_GROUP,
        sorting_columns=[pq.SortingColumn(0), pq.SortingColumn(1)],
    )
    stats = table.select(["term", "tf"]).group_by("term", use_threads=False).aggregate(
        [("tf", "count"), ("tf", "sum")]
    )
    terms = pa.Table.from_arrays(
        [
            stats.column("term"),
            pc.cast(stats.column("tf_count"), pa.int32()),
            pc.cast(stats.column("tf_sum"), pa.int64()),
        ],
        schema=TERMS_SCHEMA,
    )
    pq.write_table(terms, tmp_path / "pieces" / "terms" / f"bucket-{bucket:04d}.parquet", compression="none")
    rows = table.num_rows
    del table
    shutil.rmtree(piece_dir, ignore_errors=True)
    return {"bucket": bucket, "postings": rows, "terms": terms.num_rows}


def merge_forward(part: int, tmp: str, shard_results: list) -> int:
    """Write ``forward/part-XXXX.parquet`` from the pieces of the shards overlapping it."""
    tmp_path = Path(tmp)
    piece_dir = tmp_path / "pieces" / f"forward-{part:04d}"
    table = _read_pieces(piece_dir, FORWARD_SCHEMA)
    table = table.take(pc.sort_indices(table, sort_keys=[("docid", "ascending")]))
    write_parquet(table, tmp_path / "forward" / f"part-{part:04d}.parquet", FORWARD_ROW_GROUP,
                  sorting_columns=[pq.SortingColumn(0)])
    shutil.rmtree(piece_dir, ignore_errors=True)
    return table.num_rows


def merge_docs(tmp: str, docs_dir: str, shard_results: list) -> dict[str, int]:
    """Write ``docs.parquet``; returns the collection totals."""
    tmp_path = Path(tmp)
    table = _read_pieces(tmp_path / "pieces" / "docs", DOCS_SCHEMA)
    table = table.take(pc.sort_indices(table, sort_keys=[("docid", "ascending")]))
    n = table.num_rows
    docids = table.column("docid")
    if n and (pc.min(docids).as_py() != 0 or pc.max(docids).as_py() != n - 1):  # pragma: no cover
        raise RuntimeError("internal error: docids are not 0..N-1")
    if pc.count_distinct(table.column("docno")).as_py() != n:
        counts = pc.value_counts(table.column("docno"))
        dups = [v["values"] for v in counts.to_pylist() if v["counts"] > 1][:5]
        raise ShardFormatError(docs_dir, None, "unique docnos", "duplicates " + ", ".join(map(repr, dups)))
    write_parquet(table, tmp_path / "docs.parquet", DOCS_ROW_GROUP, sorting_columns=[pq.SortingColumn(0)])
    total = pc.sum(table.column("length")).as_py() or 0
    return {"num_docs": n, "total_length": int(total)}


def merge_terms(tmp: str, bucket_results: list) -> int:
    """Write ``terms.parquet`` (all terms sorted) from the buckets' term statistics."""
    tmp_path = Path(tmp)
    table = _read_pieces(tmp_path / "pieces" / "terms", TERMS_SCHEMA)
    table = table.take(pc.sort_indices(table, sort_keys=[("term", "ascending")]))
    write_parquet(table, tmp_path / "terms.parquet", TERMS_ROW_GROUP, sorting_columns=[pq.SortingColumn(0)])
    return table.num_rows


# ---------------------------------------------------------------------- driver


def _resolve_scheduler(scheduler):
    """``(local_scheduler_name, client, owns_client)``."""
    if scheduler is None:
        return "processes", None, False
    if isinstance(scheduler, str):
        if scheduler in LOCAL_SCHEDULERS:
            return scheduler, None, False
        from distributed import Client

        return None, Client(scheduler), True
    if hasattr(scheduler, "submit") and hasattr(scheduler, "gather"):  # a distributed.Client
        return None, scheduler, False
    if hasattr(scheduler, "scheduler_address"):  # a (Local)Cluster object
        from distributed import Client

        return None, Client(scheduler), True
    raise ConfigError(
        f"scheduler must be None, one of {', '.join(LOCAL_SCHEDULERS)}, a dask.distributed address, "
        f"Client or cluster; got {scheduler!r}"
    )


def _install(tmp: Path, out_dir: Path) -> None:
    """Move the finished ``tmp`` to ``out_dir``, replacing a previous index."""
    if out_dir.exists() or out_dir.is_symlink():
        old = out_dir.with_name(f"{out_dir.name}.old-{secrets.token_hex(4)}")
        os.rename(out_dir, old)
        os.rename(tmp, out_dir)
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink()
    else:
        os.rename(tmp, out_dir)


def _remove_tree(path: Path, timeout_seconds: float = 60.0) -> None:
    """Remove a failed build's directory, even while straggler tasks still write into it.

    A local scheduler re-raises the first task error while other tasks of the pool
    keep running; one of them can add a file to a directory that rmtree is
    emptying, which then stays. Tasks never create directories, so once ``path``
    itself is gone nothing can bring it back: repeat until it is.
    """
    deadline = time.monotonic() + timeout_seconds
    while path.exists() and time.monotonic() < deadline:
        shutil.rmtree(path, ignore_errors=True)
        if path.exists():
            time.sleep(0.1)


def build_index(
    docs_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    analyzer: Analyzer | dict | None = None,
    num_buckets: int = 16,
    scheduler=None,
    progress: bool = True,
    num_workers: int | None = None,
) -> dict[str, Any]:
    """Index the document shards of ``docs_dir`` into ``out_dir``; returns the stats.

    ``scheduler``: ``None`` (local processes), ``"threads"``, ``"sync"``, a
    ``dask.distributed`` scheduler address (``"tcp://host:8786"``), a ``Client`` or
    a cluster object.  With a distributed cluster, ``out_dir``'s parent and
    ``docs_dir`` must be on a file system all workers see.  ``num_workers`` caps
    the local schedulers' parallelism.
    """
    analyzer = Analyzer.from_dict(analyzer) if not isinstance(analyzer, Analyzer) else analyzer
    if not isinstance(num_buckets, int) or num_buckets < 1:
        raise ConfigError(f"num_buckets must be a positive integer, got {num_buckets!r}")
    docs_dir = Path(docs_dir).resolve()
    out_dir = Path(out_dir).resolve()
    shards = list_shards(docs_dir)
    offsets = []
    n = 0
    for _, rows in shards:
        offsets.append(n)
        n += rows
    if n >= 2**31:
        raise ConfigError(f"{n} documents do not fit int32 docids")
    num_forward = max(1, -(-n // FORWARD_PART_DOCS))

    local, client, owns_client = _resolve_scheduler(scheduler)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f"{out_dir.name}.tmp-{secrets.token_hex(6)}")
    futures = None
    try:
        # All directories exist before any task runs; tasks never create any, so
        # a straggler task of a failed build cannot resurrect a removed tmp dir.
        for sub in ["postings", "forward", "pieces/docs", "pieces/terms"]:
            (tmp / sub).mkdir(parents=True)
        for b in range(num_buckets):
            (tmp / "pieces" / f"bucket-{b:04d}").mkdir()
        for p in range(num_forward):
            (tmp / "pieces" / f"forward-{p:04d}").mkdir()

        import dask

        token = tmp.name.rsplit("-", 1)[-1]
        tmp_s = str(tmp)
        shard_tasks = [
            dask.delayed(analyze_shard, pure=False)(
                i, str(path), offsets[i], tmp_s, analyzer, num_buckets,
                dask_key_name=(f"irgrid-analyze-{token}", i),
            )
            for i, (path, _) in enumerate(shards)
        ]
        bucket_tasks = [
            dask.delayed(merge_bucket, pure=False)(b, tmp_s, shard_tasks, dask_key_name=(f"irgrid-postings-{token}", b))
            for b in range(num_buckets)
        ]
        forward_tasks = [
            dask.delayed(merge_forward, pure=False)(p, tmp_s, shard_tasks, dask_key_name=(f"irgrid-forward-{token}", p))
            for p in range(num_forward)
        ]
        docs_task = dask.delayed(merge_docs, pure=False)(
            tmp_s, str(docs_dir), shard_tasks, dask_key_name=f"irgrid-docs-{token}"
        )
        terms_task = dask.delayed(merge_terms, pure=False)(tmp_s, bucket_tasks, dask_key_name=f"irgrid-terms-{token}")
        final = [docs_task, terms_task, *forward_tasks]

        if client is not None:
            futures = client.compute(final)
            if progress:
                from distributed import progress as dist_progress

                dist_progress(futures)
            results = client.gather(futures)
        else:
            kwargs = {"scheduler": local}
            if num_workers is not None and local in ("processes", "threads"):
                kwargs["num_workers"] = num_workers
            if progress:
                from dask.diagnostics import ProgressBar

                # In a log file (no terminal) every redraw is a new stretch of
                # text: redraw rarely there.
                bar = ProgressBar(out=sys.stderr, dt=0.1 if sys.stderr.isatty() else 5.0)
            else:
                bar = contextlib.nullcontext()
            with bar:
                results = dask.compute(*final, **kwargs)
        doc_totals, num_terms = results[0], results[1]

        num_docs = doc_totals["num_docs"]
        total_length = doc_totals["total_length"]
        stats = {
            "format_version": FORMAT_VERSION,
            "num_docs": num_docs,
            "total_length": total_length,
            "avg_doc_length": (total_length / num_docs) if num_docs else 0.0,
            "num_terms": num_terms,
            "num_buckets": num_buckets,
            "forward_part_docs": FORWARD_PART_DOCS,
            "analyzer": analyzer.to_dict(),
        }
        with open(tmp / "stats.json", "w", encoding="utf-8") as f:
            json.dump(stats, f, sort_keys=True, indent=2, ensure_ascii=False)
            f.write("\n")
        shutil.rmtree(tmp / "pieces")
        _install(tmp, out_dir)
        return stats
    except BaseException:
        if futures is not None and client is not None:
            with contextlib.suppress(Exception):
                client.cancel(futures)
        _remove_tree(tmp)
        raise
    finally:
        if owns_client:
            with contextlib.suppress(Exception):
                client.close()
