"""spaCy dependency parses of the sentences that lack one, made in parallel over shards and cached as Parquet.

A sentence collection may come with its own parses (TrecQA's, say); those are
*carried* as they are.  Every other sentence (a document, or a query) is parsed
here with the installed spaCy pipeline (:func:`irgrid.parsing.pipeline.load_pipeline`,
never downloaded) into a :class:`~irgrid.collections.dependency_parse.Parse` over all the
tokens of its text: when spaCy reads a text as several sentences, each
sentence's root gets head ``-1`` (a forest), and heads are token indices within
the whole text.

Parquet layout of parses (:data:`PARSES_SCHEMA`), one row per sentence:

``id`` (string)
    the sentence's key: the ``docno`` of a document, the ``qid`` of a query.  One
    column name for both, so documents and queries are read by the same code.
``tokens`` (list<string>), ``heads`` (list<int32>), ``labels`` (list<string>)
    the parse: heads 0-based, ``-1`` for a root; labels spaCy's ``token.dep_``
    (``ROOT`` on a root) or the data set's own.
``source`` (string)
    ``"carried"`` for a parse that came with the data, ``"spacy:<package>==<version>"``
    (the pipeline's package and version, e.g. ``spacy:en_core_web_sm==3.8.0``)
    for one made here.

Document parses sit next to the documents: ``docs/part-NNNN.parquet`` gives
``<out_dir>/part-NNNN.parquet`` with the same rows in the same order
(:func:`parse_document_shards`).  Shards are parsed in parallel by local Dask
worker processes (spaCy holds the GIL, so threads would not help; each process
loads the pipeline once); the whole directory is written to a temporary sibling
and renamed into place, so a killed run leaves the previous complete directory
or none, never a partial one.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os
import pickle
import secrets
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..collections.dependency_parse import ROOT, Parse, ParseError, shard_paths
from ..errors import ConfigError, InputFormatError
from ..io import publish_mode, replace_dir, temporary_dir_for, temporary_name
from ..parsing.pipeline import DEFAULT_PIPELINE, PYPI_MIRRORS, load_pipeline

log = logging.getLogger(__name__)

#: the ``source`` of a parse that came with the data
CARRIED = "carried"

PARSES_SCHEMA = pa.schema([
    pa.field("id", pa.string()),
    pa.field("tokens", pa.list_(pa.string())),
    pa.field("heads", pa.list_(pa.int32())),
    pa.field("labels", pa.list_(pa.string())),
    pa.field("source", pa.string()),
])


class TextTooLong(ValueError):
    """A text longer than the spaCy pipeline's ``max_length``: not a sentence (``index``: its position)."""

    def __init__(self, message: str, index: int = -1):
        super().__init__(message)
        self.index = index

    def __reduce__(self):
        return (type(self), (str(self), self.index))


class ParseRow(NamedTuple):
    """One row of a parses file: the sentence's id, its parse and where the parse came from."""

    id: str
    parse: Parse
    source: str


# ---------------------------------------------------------------------- spaCy


def pipeline_source(pipeline: str = DEFAULT_PIPELINE) -> str:
    """``"spacy:<package>==<version>"`` of the installed pipeline ``pipeline`` (loads it, cached per process)."""
    meta = load_pipeline(pipeline).meta
    return f"spacy:{meta['lang']}_{meta['name']}=={meta['version']}"


def drop_space_tokens(tokens: Sequence[str], heads: Sequence[int], labels: Sequence[str],
                      dropped: Sequence[bool]) -> Parse:
    """The parse without the tokens marked ``dropped``; heads 0-based, -1 for a root.

    A kept token whose head is a dropped token gets that token's head instead,
    recursively (up to the first kept token, or -1 when the chain ends at a root),
    so the result is still a forest over the kept tokens.
    """
    n = len(tokens)
    new_index = [-1] * n
    kept = []
    for i in range(n):
        if not dropped[i]:
            new_index[i] = len(kept)
            kept.append(i)
    new_heads = []
    for i in kept:
        head, steps = heads[i], 0
        while head != ROOT and dropped[head]:
            head, steps = heads[head], steps + 1
            if steps > n:  # a cycle through dropped tokens: let Parse say what is wrong
                raise ParseError(f"a cycle in the heads through the dropped token {head + 1}")
        new_heads.append(ROOT if head == ROOT else new_index[head])
    return Parse(tuple(tokens[i] for i in kept), tuple(new_heads), tuple(labels[i] for i in kept))


def parse_of_doc(doc) -> Parse:
    """A spaCy ``Doc`` as a :class:`Parse` over all its tokens (every sentence root -1, SPACE tokens dropped)."""
    tokens, heads, labels, dropped = [], [], [], []
    for token in doc:
        tokens.append(token.text)
        heads.append(ROOT if token.head.i == token.i else token.head.i)
        labels.append(token.dep_)
        dropped.append(token.is_space)
    return drop_space_tokens(tokens, heads, labels, dropped)


def parse_texts(texts: Sequence[str], pipeline: str = DEFAULT_PIPELINE, batch_size: int = 256) -> list[Parse]:
    """One :class:`Parse` per text, by spaCy's ``nlp.pipe`` with the installed pipeline ``pipeline``.

    A parse covers all the tokens of its text: when spaCy splits a text into
    several sentences, each sentence's root gets head -1 (the parse is a forest)
    and heads are token indices within the whole text.  Labels are spaCy's
    ``token.dep_``.  Whitespace-only tokens (spaCy's SPACE tokens: a double
    space, a trailing space or newline) are dropped; a token whose head was a
    dropped token gets that token's head, recursively, so heads stay a forest over
    the remaining tokens.  An empty (or whitespace-only) text gives an empty
    Parse.  Raises :class:`~irgrid.parsing.pipeline.ParserNotInstalled` when the
    pipeline is not installed, and :class:`TextTooLong` (a ValueError) for a text
    longer than the pipeline's ``max_length``.
    """
    texts = ["" if text is None else str(text) for text in texts]
    if not texts:
        return []
    nlp = load_pipeline(pipeline)
    for i, text in enumerate(texts):
        if len(text) > nlp.max_length:
            raise TextTooLong(f"text {i + 1} of {len(texts)} has {len(text):,} characters, more than the "
                              f"max_length {nlp.max_length:,} of the spaCy pipeline {pipeline!r}: not a sentence", i)
    return [parse_of_doc(doc) for doc in nlp.pipe(texts, batch_size=batch_size)]


def _require_pipeline(pipeline: str) -> None:
    """Stop with ParserNotInstalled before any work when spaCy or ``pipeline`` is not installed.

    Looks at the installed distributions only, as :func:`spacy.util.is_package` does, without
    importing spaCy: the worker processes load it, the driver need not.
    """
    def installed(name: str | None) -> bool:
        try:
            return bool(name) and importlib.metadata.distribution(name) is not None
        except importlib.metadata.PackageNotFoundError:
            return False

    if importlib.util.find_spec("spacy") is None or not (installed(pipeline) or installed(PYPI_MIRRORS.get(pipeline))):
        load_pipeline(pipeline)  # raises ParserNotInstalled saying what to install


# ---------------------------------------------------------------------- Parquet


def _parses_table(rows: Iterable[ParseRow]) -> pa.Table:
    ids, tokens, heads, labels, sources = [], [], [], [], []
    for row in rows:
        ids.append(str(row.id))
        tokens.append(list(row.parse.tokens))
        heads.append(list(row.parse.heads))
        labels.append(list(row.parse.labels))
        sources.append(str(row.source))
    return pa.table([ids, tokens, heads, labels, sources], schema=PARSES_SCHEMA)


def _rows_of_frame(frame: pd.DataFrame) -> list[ParseRow]:
    missing = [name for name in PARSES_SCHEMA.names if name not in frame.columns]
    if missing:
        raise ValueError(f"a parses table needs the columns {', '.join(PARSES_SCHEMA.names)}; "
                         f"missing {', '.join(missing)}")
    rows = []
    for id_, tokens, heads, labels, source in zip(frame["id"], frame["tokens"], frame["heads"], frame["labels"],
                                                   frame["source"]):
        try:
            parse = Parse(tuple(tokens), tuple(int(h) for h in heads), tuple(labels))
        except ParseError as error:
            raise ValueError(f"the parse of {id_!r}: {error}") from None
        rows.append(ParseRow(str(id_), parse, str(source)))
    return rows


def _write_table(table: pa.Table, path: Path) -> None:
    """Write ``table`` to a hidden temporary sibling of ``path``, then rename it onto ``path``.

    Creates no directory: a task of a failed run cannot bring back a temporary
    directory the driver removed.
    """
    temp_name = str(temporary_name(path))
    try:
        pq.write_table(table, temp_name)
        publish_mode(temp_name)
        os.replace(temp_name, path)
    finally:
        if os.path.exists(temp_name):
            os.unlink(temp_name)


def write_parses(rows: pd.DataFrame | Iterable[ParseRow | tuple[str, Parse, str]], path: str | os.PathLike) -> Path:
    """Write parses to the Parquet file ``path`` (:data:`PARSES_SCHEMA`), atomically; returns the path.

    ``rows``: ``(id, Parse, source)`` rows (:class:`ParseRow`), or a table with
    the columns of :data:`PARSES_SCHEMA` such as :func:`parse_topic_sentences`
    gives (each row checked to be a parse; ValueError naming the id if not).  The
    file is written to a temporary sibling and renamed into place, so ``path``
    is either the previous file or the complete new one.
    """
    path = Path(path)
    if isinstance(rows, pd.DataFrame):
        rows = _rows_of_frame(rows)
    else:
        rows = [row if isinstance(row, ParseRow) else ParseRow(*row) for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_table(_parses_table(rows), path)
    return path


# ---------------------------------------------------------------------- documents and queries


def _document_shards(docs_dir: Path) -> list[Path]:
    """The documents' shards in order, each checked to have string columns docno and text."""
    shards = shard_paths(docs_dir, "document shards")
    for shard in shards:
        try:
            schema = pq.read_schema(shard)
        except Exception as error:
            raise InputFormatError(shard, None, "a Parquet file", f"{type(error).__name__}: {error}") from None
        for column in ("docno", "text"):
            if column not in schema.names:
                raise InputFormatError(shard, None, "columns docno, text", ", ".join(schema.names))
            if not (pa.types.is_string(schema.field(column).type) or pa.types.is_large_string(schema.field(column).type)):
                raise InputFormatError(shard, None, f"column {column} of type string", str(schema.field(column).type))
    return shards


def _parse_rows(ids: Sequence[str], texts: Sequence[str], carried: Mapping[str, Parse], pipeline: str,
                batch_size: int, where: str) -> list[ParseRow]:
    """A row per id, in order: the carried parse when there is one, else spaCy's (one ``parse_texts`` call)."""
    missing = [i for i, id_ in enumerate(ids) if id_ not in carried]
    made: dict[int, Parse] = {}
    source = ""
    if missing:
        try:
            made = dict(zip(missing, parse_texts([texts[i] for i in missing], pipeline, batch_size)))
        except TextTooLong as error:
            if not 0 <= error.index < len(missing):
                raise
            i = missing[error.index]
            raise TextTooLong(f"{where}: the text of {ids[i]!r} has {len(texts[i]):,} characters, more than the "
                              f"spaCy pipeline's max_length: not a sentence", i) from None
        source = pipeline_source(pipeline)
    return [ParseRow(id_, made[i], source) if i in made else ParseRow(id_, carried[id_], CARRIED)
            for i, id_ in enumerate(ids)]


def _parse_shard(shard: str, out: str, carried_pickle: bytes, pipeline: str, batch_size: int) -> dict:
    """Parse one documents shard into ``out`` (a Dask task; the pipeline is loaded once per process)."""
    started, start = time.time(), time.perf_counter()
    table = pq.read_table(shard, columns=["docno", "text"])
    docnos = table.column("docno").to_pylist()
    texts = table.column("text").to_pylist()
    carried = pickle.loads(carried_pickle)
    rows = _parse_rows(docnos, texts, carried, pipeline, batch_size, shard)
    _write_table(_parses_table(rows), Path(out))
    return {"shard": Path(shard).name, "rows": len(rows), "carried": sum(id_ in carried for id_ in docnos),
            "seconds": time.perf_counter() - start, "started": started, "pid": os.getpid()}


_replace_dir = replace_dir


def _remove_tree(path: Path, timeout_seconds: float = 60.0) -> None:
    """Remove a failed run's temporary directory (again, while a straggler task still writes into it)."""
    deadline = time.monotonic() + timeout_seconds
    while path.exists() and time.monotonic() < deadline:
        shutil.rmtree(path, ignore_errors=True)
        if path.exists():
            time.sleep(0.1)


def _compute_in_processes(tasks: list, workers: int) -> tuple:
    """``dask.compute`` of ``tasks`` on Dask's local process scheduler with ``workers`` processes.

    The pool is Dask's own (spawned processes, Dask's worker initializer), made here
    for two reasons: ``chunksize=1`` (Dask's default hands up to 6 ready tasks to
    one process, which leaves the other workers idle on a few large shards); and,
    once every task has succeeded, the workers exit in the background instead of
    the call waiting for their interpreters (holding the pipeline) to tear down.
    After a failure the call does wait, so no task still writes into a temporary
    directory the driver removes.
    """
    # deferred: dask is imported only when parses are made in parallel
    import dask
    from dask.multiprocessing import get_context, initialize_worker_process

    pool = ProcessPoolExecutor(workers, mp_context=get_context(), initializer=initialize_worker_process)
    done = False
    try:
        results = dask.compute(*tasks, scheduler="processes", pool=pool, chunksize=1)
        done = True
        return results
    finally:
        pool.shutdown(wait=not done, cancel_futures=True)


def parse_document_shards(docs_dir: str | os.PathLike, out_dir: str | os.PathLike,
                          carried: Mapping[str, Parse] | None = None, pipeline: str = DEFAULT_PIPELINE,
                          workers: int | None = None, batch_size: int = 256) -> list[Path]:
    """Write ``out_dir/part-NNNN.parquet`` with a parse of every document of ``docs_dir/part-NNNN.parquet``.

    Rows (:data:`PARSES_SCHEMA`, ``id`` = docno) are in the shard's order: the
    parse of ``carried`` when it has the docno (source ``carried``), else
    spaCy's (:func:`parse_texts`).  Shards are parsed in parallel by local Dask
    worker processes, ``workers`` of them (default: the machine's cores, as Dask
    counts them; never more than the shards to parse); each process loads the
    pipeline once.  ``workers=1`` parses in this process (Dask's synchronous
    scheduler).  Only the carried parses of a shard's own documents go to its task.

    ``out_dir`` is written as a temporary sibling directory renamed into place at
    the end: a failed or killed run leaves the previous complete ``out_dir`` (or
    none), never a partial one.  Returns the shard paths in order.  Raises
    :class:`~irgrid.errors.InputFormatError` naming ``docs_dir`` when it holds no
    ``part-*.parquet`` shards, and ParserNotInstalled (before any work) when a
    document needs parsing and the pipeline is not installed.
    """
    started, start = time.time(), time.perf_counter()
    docs_dir, out_dir = Path(docs_dir), Path(out_dir)
    if workers is None:
        # deferred: dask is imported only when parses are made in parallel
        from dask.system import CPU_COUNT

        workers = CPU_COUNT
    if not isinstance(workers, int) or workers < 1:
        raise ConfigError(f"workers must be a positive integer or None (the machine's cores), got {workers!r}")
    shards = _document_shards(docs_dir)
    if out_dir.resolve() == docs_dir.resolve():
        raise ConfigError(f"the parses would replace the documents: out_dir {out_dir} is docs_dir")
    carried = {} if carried is None else carried
    payloads, num_docs, num_carried, shards_to_parse = [], 0, 0, 0
    for shard in shards:
        docnos = pq.read_table(shard, columns=["docno"]).column("docno").to_pylist()
        if None in docnos:
            raise InputFormatError(shard, None, "a docno on every row", f"row {docnos.index(None) + 1}: none")
        own = {docno: carried[docno] for docno in docnos if docno in carried}
        payloads.append(pickle.dumps(own, protocol=pickle.HIGHEST_PROTOCOL))
        num_docs += len(docnos)
        num_carried += sum(docno in own for docno in docnos)
        shards_to_parse += len(docnos) > len(own)
    if num_docs > num_carried:
        _require_pipeline(pipeline)
    workers = max(1, min(workers, shards_to_parse))

    # deferred: dask is imported only when parses are made in parallel
    import dask

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_dir_for(out_dir)
    try:
        token = secrets.token_hex(6)
        tasks = [dask.delayed(_parse_shard, pure=False)(str(shard), str(tmp / shard.name), payload, pipeline,
                                                        batch_size, dask_key_name=(f"irgrid-parse-{token}", i))
                 for i, (shard, payload) in enumerate(zip(shards, payloads))]
        if workers == 1:
            stats = dask.compute(*tasks, scheduler="sync")
        else:
            stats = _compute_in_processes(tasks, workers)
        _replace_dir(tmp, out_dir)
    except BaseException:
        _remove_tree(tmp)
        raise
    seconds = time.perf_counter() - start
    parsed = num_docs - num_carried
    processes = len({s["pid"] for s in stats})
    log.info("%s: %d sentences in %d shards: %d carried, %d parsed with spaCy (%s) in %.1f s: %.0f sentences/s "
             "(%d worker process%s)", out_dir, num_docs, len(shards), num_carried, parsed, pipeline, seconds,
             parsed / seconds if seconds > 0 else 0.0, processes, "" if processes == 1 else "es")
    for s in stats:
        log.debug("%s: %d rows (%d carried) in %.2f s from %.2f s (pid %d)", s["shard"], s["rows"], s["carried"],
                  s["seconds"], s["started"] - started, s["pid"])
    return [out_dir / shard.name for shard in shards]


def parse_topic_sentences(topics: pd.DataFrame, carried: Mapping[str, Parse] | None = None,
                          pipeline: str = DEFAULT_PIPELINE, batch_size: int = 256) -> pd.DataFrame:
    """The parses of the queries of ``topics`` (columns qid, text), in order: a table of :data:`PARSES_SCHEMA`.

    ``id`` is the qid; a query in ``carried`` keeps that parse (source ``carried``),
    every other one is parsed by spaCy in this process.  Write it with
    :func:`write_parses`.
    """
    start = time.perf_counter()
    for column in ("qid", "text"):
        if column not in topics.columns:
            raise ValueError(f"topics need the columns qid, text; missing {column}")
    qids = [str(qid) for qid in topics["qid"]]
    carried = {} if carried is None else carried
    rows = _parse_rows(qids, list(topics["text"]), carried, pipeline, batch_size, "topics")
    parsed = sum(row.source != CARRIED for row in rows)
    seconds = time.perf_counter() - start
    log.info("%d queries: %d carried, %d parsed with spaCy (%s) in %.1f s: %.0f sentences/s", len(rows),
             len(rows) - parsed, parsed, pipeline, seconds, parsed / seconds if seconds > 0 else 0.0)
    return pd.DataFrame({
        "id": [row.id for row in rows],
        "tokens": [list(row.parse.tokens) for row in rows],
        "heads": [list(row.parse.heads) for row in rows],
        "labels": [list(row.parse.labels) for row in rows],
        "source": [row.source for row in rows],
    }, columns=PARSES_SCHEMA.names)
