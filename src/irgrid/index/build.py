"""Build the Parquet inverted index with Dask.

Input: a directory of document shards ``part-*.parquet`` (columns ``docno``,
``text``) as written by :func:`irgrid.collections.write_document_shards`.

The task graph::

    analyze shard 0 ─┐                 ┌─ merge postings bucket 0 ─┐
    analyze shard 1 ─┼─ (all shards) ──┼─ ...                       ├─ terms.parquet
    ...             ─┘                 ├─ merge postings bucket B-1 ┘
                                       └─ docs.parquet

* Every shard task analyses its documents (docids are global: shard ``i`` starts at
  the sum of the row counts of the shards before it, read from the Parquet
  footers), and writes its postings split by bucket
  (``crc32(term) % num_buckets``) and its per-document statistics into ``pieces/``
  of the temporary directory.
  Large shards are flushed in several runs, so a task holds at most about
  ``RUN_POSTINGS`` postings in memory.
* Every bucket task concatenates the pieces of its bucket, sorts them by
  ``(term, docid)`` and writes ``postings/bucket-XXXX.parquet`` (docid, tf),
  ``positions/bucket-XXXX.parquet`` (a row per token) plus the ``(term, df, cf)``
  rows of its terms.
* The forward index (each document's terms in order) is not part of the index:
  :mod:`irgrid.index.forward` builds it from the finished index, for the indexes
  whose readers need it.
* The driver only handles file names, row counts and small summaries; it never
  holds the collection.

Everything is written to ``.<name>.<host>~<pid>~<token>.tmp`` beside ``out_dir`` and renamed to it
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
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from irgrid.analysis import Analyzer
from irgrid.errors import ConfigError, InputFormatError
from irgrid.index.format import FORMAT_VERSION, FORWARD_PART_DOCS
from irgrid.index.tasks import (
    SIMPLE_WORD,
    TOKENS_PER_BUCKET,
    analyze_shard,
    iter_batches,
    merge_bucket,
    merge_docs,
    merge_terms,
)
from irgrid.io import install_directory, parse_leftover, remove_dead_leftovers, remove_path, temporary_name

#: with ``num_buckets=None``, one postings bucket per TOKENS_PER_BUCKET tokens (estimated), at
#: least MIN_BUCKETS: a bucket task holds its tokens in memory (~40 bytes each while sorting), so
#: a collection ten times larger gets ten times the buckets, not ten times the memory.
MIN_BUCKETS = 16
#: documents read from the start of the collection to estimate its number of tokens
SAMPLE_DOCS = 2000

LOCAL_SCHEDULERS = ("processes", "threads", "sync", "synchronous", "single-threaded")

#: how long jemalloc keeps a local build's freed pages before returning them to the system
#: (:func:`purging_memory_pool`)
BUILD_JEMALLOC_DECAY_MS = 100



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


def _sample_words(paths) -> tuple[int, pa.Array]:
    """``(documents, words)`` of the first ``SAMPLE_DOCS`` documents of the shards at ``paths``:
    their whitespace-separated words, in order."""
    sampled_docs, words = 0, []
    for path in paths:
        for _, _, texts in iter_batches(str(path), batch_rows=SAMPLE_DOCS - sampled_docs):
            words.append(pc.list_flatten(pc.utf8_split_whitespace(pc.fill_null(texts, ""))))
            sampled_docs += len(texts)
            break
        if sampled_docs >= SAMPLE_DOCS:
            break
    return sampled_docs, pa.concat_arrays(words) if words else pa.array([], pa.string())


def automatic_num_buckets(shards: list[tuple[Path, int]], sample: tuple[int, pa.Array] | None = None) -> int:
    """Buckets for about ``TOKENS_PER_BUCKET`` tokens each, at least ``MIN_BUCKETS``.

    The tokens are estimated from the whitespace-separated words of the first
    ``SAMPLE_DOCS`` documents of the collection (whatever its sharding, so the
    same collection gets the same buckets, hence the same index bytes).
    """
    num_docs = sum(rows for _, rows in shards)
    sampled_docs, words = sample or _sample_words([path for path, _ in shards])
    if not sampled_docs:
        return MIN_BUCKETS
    estimated_tokens = num_docs * len(words) / sampled_docs
    return max(MIN_BUCKETS, int(-(-estimated_tokens // TOKENS_PER_BUCKET)))


# ---------------------------------------------------------------------- driver


#: Shards smaller than this in all are indexed on threads of the build's own process, not in
#: worker processes: starting and importing a worker costs more than a second core saves on a small
#: collection's analysis (pure Python, so threads share one core). The bytes are the same either
#: way (tests/test_index.py); the measurements are in benchmarks/HISTORY.md.
THREADS_BELOW_BYTES = 8 * 2**20


#: A larger collection is indexed on threads too when its analysis runs almost all in the
#: kernels that release the GIL: a word is analysed once per worker, by numba when it is a
#: plain ASCII alphanumeric word and no stemmer is set, else in Python (far dearer a word than
#: the GIL-free work a token). At most this share of the sampled words being distinct
#: Python-analysed words keeps Python a small part of the work; English collections (words with
#: punctuation) stay on processes. The measurements behind the threshold: benchmarks/HISTORY.md.
THREADS_MAX_PYTHON_WORDS = 0.002


def python_analysed_share(shard_paths, analyzer: Analyzer, sample: tuple[int, pa.Array] | None = None) -> float:
    """Of the first ``SAMPLE_DOCS`` documents' words, the share that are distinct words the
    analysis does in Python: words other than plain ASCII alphanumerics (all words with a stemmer).

    An upper bound of the collection's: its vocabulary grows slower than its words. ``sample``:
    :func:`_sample_words` of the shards when the caller has read it already.
    """
    _, words = sample or _sample_words(shard_paths)
    if not len(words):
        return 0.0
    in_python = words if analyzer.stemmer != "none" else words.filter(
        pc.invert(pc.match_substring_regex(words, SIMPLE_WORD)))
    return len(pc.unique(in_python)) / len(words)


def default_local_scheduler(shard_paths, analyzer: Analyzer | None = None,
                            sample: tuple[int, pa.Array] | None = None) -> str:
    """The local Dask scheduler of a build given no scheduler: ``threads`` for small shards, and for
    larger ones whose analysis is almost all GIL-free (``analyzer`` given), else ``processes``."""
    size = sum(os.stat(path).st_size for path in shard_paths)
    if size < THREADS_BELOW_BYTES:
        return "threads"
    if analyzer is not None and python_analysed_share(shard_paths, analyzer, sample) <= THREADS_MAX_PYTHON_WORDS:
        return "threads"
    return "processes"


def local_build_cores(docs_dir: str | os.PathLike, cores: int) -> int:
    """The cores a local build of ``docs_dir`` given no scheduler keeps busy: 1 on threads, else ``cores``.

    What the workflow's ``build_index`` job reserves: a small collection's build (threads, pure
    Python analysis) keeps one core busy, and reserving two left the other idle whenever the only
    jobs ready were index builds (the default run had minutes of one busy core). Before the shards
    exist (Snakemake planning its jobs) it is ``cores``; Snakemake asks again once the job is ready.
    """
    paths = list(Path(docs_dir).glob("part-*.parquet"))
    if not paths:
        return cores
    # a larger collection on threads (default_local_scheduler with its analyzer) keeps ``cores`` busy
    return 1 if default_local_scheduler(paths) == "threads" else cores


def _progress_lines(out, every_seconds: float):
    """A local build's progress in a log file: a line at most every ``every_seconds``, on task completion.

    Not dask's ProgressBar with a long redraw interval (the way to keep a log short): its timer
    thread sleeps that interval and the bar joins it when the build ends, so every build lasted
    up to the interval longer, most of a small index's time.
    """
    # deferred: dask and distributed are imported only when a build runs
    from dask.callbacks import Callback

    began = time.perf_counter()
    last = [began]

    def posttask(key, result, dsk, state, worker_id) -> None:
        now = time.perf_counter()
        if now - last[0] >= every_seconds:
            last[0] = now
            done = len(state["finished"])
            total = done + sum(len(state[k]) for k in ("ready", "waiting", "running"))
            print(f"index build: {done}/{total} tasks done after {now - began:.1f}s", file=out, flush=True)

    return Callback(posttask=posttask)


@contextlib.contextmanager
def purging_memory_pool():
    """Arrow's default memory pool while a build runs in this process: jemalloc, returning freed
    pages to the system after ``BUILD_JEMALLOC_DECAY_MS``; the previous pool again afterwards.

    pyarrow's default pool (mimalloc) keeps freed pages for reuse and reads its purge options only
    when ``pyarrow`` loads; in a threads build what it kept, on top of what the tasks hold, was
    part of the peak memory. jemalloc's decay is set at run time (``pa.jemalloc_set_decay_ms``,
    for every jemalloc arena of the process: pyarrow uses jemalloc only when asked to). Nothing
    changes when pyarrow has no jemalloc or the environment chose a pool
    (``ARROW_DEFAULT_MEMORY_POOL``); tasks in other processes keep their own pools.
    """
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        yield
        return
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        yield
        return
    previous = pa.default_memory_pool()
    pa.jemalloc_set_decay_ms(BUILD_JEMALLOC_DECAY_MS)
    pa.set_memory_pool(pool)
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def _resolve_scheduler(scheduler):
    """``(local_scheduler_name, client, owns_client)``."""
    if scheduler is None:
        return "processes", None, False
    if isinstance(scheduler, str):
        if scheduler in LOCAL_SCHEDULERS:
            return scheduler, None, False
        # deferred: dask and distributed are imported only when a build runs
        from distributed import Client

        return None, Client(scheduler), True
    if hasattr(scheduler, "submit") and hasattr(scheduler, "gather"):  # a distributed.Client
        return None, scheduler, False
    if hasattr(scheduler, "scheduler_address"):  # a (Local)Cluster object
        # deferred: dask and distributed are imported only when a build runs
        from distributed import Client

        return None, Client(scheduler), True
    raise ConfigError(
        f"scheduler must be None, one of {', '.join(LOCAL_SCHEDULERS)}, a dask.distributed address, "
        f"Client or cluster; got {scheduler!r}"
    )


def _results(*results):
    """The results of a phase's tasks, as one list: the task the next phase depends on."""
    return list(results)


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
    num_buckets: int | None = None,
    scheduler=None,
    progress: bool = True,
    num_workers: int | None = None,
) -> dict[str, Any]:
    """Index the document shards of ``docs_dir`` into ``out_dir``; returns the stats.

    ``scheduler``: ``None`` (local processes, or threads for a small collection or one
    analysed almost all by the GIL-free kernels: :func:`default_local_scheduler`),
    ``"processes"``, ``"threads"``, ``"sync"``, a ``dask.distributed`` scheduler address (``"tcp://host:8786"``), a ``Client`` or
    a cluster object.  With a distributed cluster, ``out_dir``'s parent and
    ``docs_dir`` must be on a file system all workers see.  ``num_workers`` caps
    the local schedulers' parallelism.  ``num_buckets``: postings files; ``None``
    picks one per ``TOKENS_PER_BUCKET`` tokens (estimated from the first documents),
    so a bucket task's memory does not grow with the collection.  The forward index is built
    from the finished index by :func:`irgrid.index.forward.build_forward_index`.
    """
    analyzer = Analyzer.from_dict(analyzer) if not isinstance(analyzer, Analyzer) else analyzer
    if num_buckets is not None and (not isinstance(num_buckets, int) or num_buckets < 1):
        raise ConfigError(f"num_buckets must be a positive integer or None (automatic), got {num_buckets!r}")
    docs_dir = Path(docs_dir).resolve()
    out_dir = Path(out_dir).resolve()
    shards = list_shards(docs_dir)
    paths = [path for path, _ in shards]
    # the first documents' words, read once for the buckets and the scheduler
    sample = _sample_words(paths) if num_buckets is None or scheduler is None else None
    if num_buckets is None:
        num_buckets = automatic_num_buckets(shards, sample)
    offsets = []
    n = 0
    for _, rows in shards:
        offsets.append(n)
        n += rows
    if n >= 2**31:
        raise ConfigError(f"{n} documents do not fit int32 docids")

    if scheduler is None:
        scheduler = default_local_scheduler(paths, analyzer, sample)
    local, client, owns_client = _resolve_scheduler(scheduler)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_leftovers(out_dir)  # what a killed build of this index left
    tmp = temporary_name(out_dir)
    futures = None
    try:
        # All directories exist before any task runs; tasks never create any, so
        # a straggler task of a failed build cannot resurrect a removed tmp dir.
        for sub in ["postings", "positions", "pieces/docs", "pieces/terms"]:
            (tmp / sub).mkdir(parents=True)
        for b in range(num_buckets):
            (tmp / "pieces" / f"bucket-{b:04d}").mkdir()

        # deferred: dask and distributed are imported only when a build runs
        import dask

        token = secrets.token_hex(6)
        tmp_s = str(tmp)
        shard_tasks = [
            dask.delayed(analyze_shard, pure=False)(
                i, str(path), offsets[i], tmp_s, analyzer, num_buckets,
                dask_key_name=(f"irgrid-analyze-{token}", i),
            )
            for i, (path, _) in enumerate(shards)
        ]
        # Each bucket needs every shard's result: one task gathers a phase's results and the next
        # phase depends on it alone, instead of every task on every task before it (shards x
        # buckets edges: tens of thousands at 10M documents, seconds of making the graph).
        shards_done = dask.delayed(_results, pure=False)(*shard_tasks, dask_key_name=f"irgrid-shards-{token}")
        bucket_tasks = [
            dask.delayed(merge_bucket, pure=False)(b, tmp_s, shards_done,
                                                   dask_key_name=(f"irgrid-postings-{token}", b))
            for b in range(num_buckets)
        ]
        docs_task = dask.delayed(merge_docs, pure=False)(
            tmp_s, str(docs_dir), shards_done, dask_key_name=f"irgrid-docs-{token}"
        )
        buckets_done = dask.delayed(_results, pure=False)(*bucket_tasks, dask_key_name=f"irgrid-buckets-{token}")
        terms_task = dask.delayed(merge_terms, pure=False)(tmp_s, buckets_done, dask_key_name=f"irgrid-terms-{token}")
        final = [docs_task, terms_task]

        if client is not None:
            futures = client.compute(final)
            if progress:
                # deferred: dask and distributed are imported only when a build runs
                from distributed import progress as dist_progress

                dist_progress(futures)
            results = client.gather(futures)
        else:
            kwargs = {"scheduler": local}
            if num_workers is not None and local in ("processes", "threads"):
                kwargs["num_workers"] = num_workers
            if progress and sys.stderr.isatty():
                # deferred: dask and distributed are imported only when a build runs
                from dask.diagnostics import ProgressBar

                bar = ProgressBar(out=sys.stderr, dt=0.1)
            elif progress:
                bar = _progress_lines(sys.stderr, every_seconds=5.0)
            else:
                bar = contextlib.nullcontext()
            with bar, purging_memory_pool():
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
            # the forward index is its own directory (irgrid.index.forward): these two keys say so
            # and keep the stats of indexes built before it moved out byte for byte
            "forward": False,
            "forward_part_docs": FORWARD_PART_DOCS,
            "analyzer": analyzer.to_dict(),
        }
        with open(tmp / "stats.json", "w", encoding="utf-8") as f:
            json.dump(stats, f, sort_keys=True, indent=2, ensure_ascii=False)
            f.write("\n")
        shutil.rmtree(tmp / "pieces")
        # a merge's run on a lost worker, killed mid-write, may have left a temporary beside its file
        for leftover in [p for p in tmp.rglob(".*") if parse_leftover(p) is not None]:
            remove_path(leftover)
        install_directory(tmp, out_dir)
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
