"""Writing a collection into the Parquet files the rest of the workflow reads.

All writes are atomic: shards go to a temporary sibling directory renamed into place at the
end, single files to a temporary sibling file, so a killed job never leaves output that
Snakemake (or a person) could take for a finished one.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import ConfigError, InputFormatError
from ..io import atomic_path, replace_dir, temporary_dir_for
from .readers import document_text, iter_documents, iter_qrels, iter_queries, query_text
from .records import location, written_id
from .spec import CollectionSpec
from .textio import check_visible_identifier

log = logging.getLogger(__name__)

DOCS_SCHEMA = pa.schema([("docno", pa.string()), ("text", pa.string())])
TOPICS_SCHEMA = pa.schema([("qid", pa.string()), ("text", pa.string())])
#: a topics column with each qid as the queries file writes it ("001" for the qid "1"), present only
#: where a reader changed an id: exported TREC runs write these (irgrid export-trec)
SOURCE_QID_COLUMN = "source_qid"
QRELS_SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("relevance", pa.int32())])


class EmptyInputError(InputFormatError):
    """A raw file with nothing of what a step reads from it (no documents, no text, no query of the
    set, no judgement): a problem of the whole file, so no line is named. Refused where the raw file
    is read, since later steps would name the Parquet made from it or finish with a table of zeros."""


# Rows buffered before a record batch is written: bounds memory on large collections.
_BATCH_ROWS = 10_000


def shard_bounds(num_docs: int, num_shards: int) -> list[tuple[int, int]]:
    """``[start, stop)`` document ranges of each shard: contiguous, sizes differing by at most one."""
    if num_shards < 1:
        raise ConfigError(f"num_shards must be at least 1, not {num_shards}")
    cuts = [(i * num_docs) // num_shards for i in range(num_shards + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def shard_name(index: int) -> str:
    return f"part-{index:04d}.parquet"


def write_document_shards(spec: CollectionSpec, files: Mapping[str, Path], out_dir: str | os.PathLike,
                          num_shards: int) -> list[Path]:
    """Write the documents as ``out_dir/part-{i:04d}.parquet`` (``docno``, ``text``), i = 0..num_shards-1.

    Shard i holds a contiguous run of the collection in source order, so concatenating the
    shards gives the collection back. Shards may be empty when there are fewer documents than
    shards (every shard file exists, for Snakemake). The collection is read twice (count,
    then write) rather than held in memory. Returns the shard paths.
    """
    out_dir = Path(out_dir)
    num_docs = sum(1 for _ in iter_documents(spec, files))
    if num_docs == 0:
        # an index of no documents fails later, blaming the qrels, or scores every query 0
        raise EmptyInputError(_source_of(spec, files, "docs"), None, f"documents of collection {spec.id!r}",
                               found="no documents (an empty file, or no record the reader knows)")
    bounds = shard_bounds(num_docs, num_shards)
    with_text = 0
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    temp_dir = temporary_dir_for(out_dir)
    try:
        documents = iter_documents(spec, files)
        seen: set[str] = set()  # docnos: a repeated one would make two documents of one id in the index
        for index, (start, stop) in enumerate(bounds):
            with pq.ParquetWriter(temp_dir / shard_name(index), DOCS_SCHEMA) as writer:
                docnos: list[str] = []
                texts: list[str] = []
                for _ in range(stop - start):
                    document = next(documents, None)
                    if document is None:
                        raise RuntimeError(f"collection {spec.id!r}: the documents changed while being written")
                    if document.docno in seen:
                        raise _repeated_id(spec, files, "docs", document, iter_documents(spec, files),
                                           f"each document id once in collection {spec.id!r}",
                                           f"document {document.docno!r}")
                    _check_id(spec, files, "docs", document, "document id")
                    seen.add(document.docno)
                    docnos.append(document.docno)
                    texts.append(document_text(spec, document))
                    with_text += bool(texts[-1].strip())
                    if len(docnos) >= _BATCH_ROWS:
                        writer.write_table(pa.table([docnos, texts], schema=DOCS_SCHEMA))
                        docnos, texts = [], []
                # An empty shard still gets a (zero-row) table so its schema is written.
                if docnos or start == stop:
                    writer.write_table(pa.table([docnos, texts], schema=DOCS_SCHEMA))
        if next(documents, None) is not None:
            raise RuntimeError(f"collection {spec.id!r}: the documents changed while being written")
        if not with_text:
            fields = ", ".join(spec.doc_fields) if spec.doc_fields else "every field"
            raise EmptyInputError(_source_of(spec, files, "docs"), None,
                                   f"documents with text in the indexed fields ({fields})",
                                   found=f"{num_docs} documents, every one with empty text")
        _replace_dir(temp_dir, out_dir)
    finally:
        if temp_dir.exists():
            shutil.rmtree(temp_dir)
    return [out_dir / shard_name(index) for index in range(num_shards)]


_replace_dir = replace_dir


def _write_table(columns: Iterable[list], schema: pa.Schema, out_path: str | os.PathLike) -> None:
    with atomic_path(out_path) as tmp:
        pq.write_table(pa.table(list(columns), schema=schema), tmp)


def _repeated_id(spec: CollectionSpec, files: Mapping[str, Path], role: str, record, records, expected: str,
                 what: str) -> InputFormatError:
    """The error for a record whose id came before: at the record's file and line, naming the first one.

    The first occurrence is found by reading the records again (from ``records``, a fresh
    iterator), only on this error path: remembering every id's line would cost memory on every
    run for the benefit of a failing one.
    """
    identifier = record[0]
    first = next((earlier for earlier in records if earlier[0] == identifier), None)
    source, line = location(record)
    first_source, first_line = location(first) if first is not None else (None, None)
    if first_line is not None:
        place = f"line {first_line}" if first_source == source else f"{first_source}:{first_line}"
        expected += f"; {what} is also on {place}"
    return InputFormatError(source or _source_of(spec, files, role), line, expected, found=f"{what} again")


def _check_id(spec: CollectionSpec, files: Mapping[str, Path], role: str, record, what: str) -> None:
    """A record's id with a control or zero-width character: the error at the record's file and line."""
    source, line = location(record)
    check_visible_identifier(record[0], source or _source_of(spec, files, role), line, what)


def _source_of(spec: CollectionSpec, files: Mapping[str, Path], role: str) -> str:
    """The file (or files) a collection reads for ``role``, to name in an error."""
    if role in files:
        return str(files[role])
    return ", ".join(str(path) for path in files.values()) or spec.id


def in_queryset(fields: Mapping[str, str], names: tuple[str, ...] | None) -> bool:
    """Whether a query with ``fields`` belongs to a query set of fields ``names``.

    It does unless it has none of the named fields at all (absent, not merely empty): SQuAD
    collections keep each file's questions in a field named after the file, so the query set
    ``dev`` is the questions that have a ``dev`` field. None (every field) takes every query.
    """
    return names is None or any(name in fields for name in names)


def write_topics(spec: CollectionSpec, files: Mapping[str, Path], queryset: str,
                 out_path: str | os.PathLike) -> None:
    """Write every query of ``queryset`` (judged or not) in source order: ``qid``, ``text``.

    Queries with none of the set's fields are not in the set and are left out (see
    :func:`in_queryset`); a query whose fields are present but empty is kept, with empty text.
    """
    names = spec.queryset_fields(queryset)  # fail before reading if the query set does not exist
    qids, texts, written = [], [], []
    seen: set[str] = set()
    read = 0
    for query in iter_queries(spec, files):
        read += 1
        _check_id(spec, files, "queries", query, "query id")
        if not in_queryset(query.fields, names):
            continue
        if query.qid in seen:
            # kept, the later query would silently replace the earlier one in every run
            earlier = (q for q in iter_queries(spec, files) if in_queryset(q.fields, names))
            raise _repeated_id(spec, files, "queries", query, earlier, f"each query id once in query set "
                               f"{queryset!r} of collection {spec.id!r}", f"query {query.qid!r}")
        seen.add(query.qid)
        qids.append(query.qid)
        written.append(written_id(query))
        texts.append(query_text(spec, query, queryset))
    if not qids:
        # named here, as the raw file: later steps would name the topics Parquet made from it
        found = "no queries" if not read else f"{read} queries, none with a field of query set {queryset!r} ({names})"
        raise EmptyInputError(_source_of(spec, files, "queries"), None,
                               f"queries of query set {queryset!r} of collection {spec.id!r}", found=found)
    if written != qids:
        _write_table([qids, texts, written], TOPICS_SCHEMA.append(pa.field(SOURCE_QID_COLUMN, pa.string())), out_path)
    else:
        _write_table([qids, texts], TOPICS_SCHEMA, out_path)


def read_docnos(docs_dir: str | os.PathLike) -> set[str]:
    """The docnos of a collection's document shards (``part-*.parquet`` under ``docs_dir``)."""
    shards = sorted(Path(docs_dir).glob("part-*.parquet"))
    if not shards:
        raise FileNotFoundError(f"{docs_dir}: no document shards (part-*.parquet)")
    return {docno for shard in shards for docno in pq.read_table(shard, columns=["docno"]).column("docno").to_pylist()}


#: more than this share of the judged documents unknown to the collection: the qrels belong to another one
MAX_UNKNOWN_SHARE = 0.5
_EXAMPLES = 5


def check_judged_docnos(source: str, collection_id: str, judged: Iterable[str], known: set[str]) -> list[str]:
    """The judged docnos the collection does not have, in first-judged order, each once; logged with examples.

    A few are common (a document withdrawn after judging) and count as non-relevant-and-unretrievable;
    more than half (:data:`MAX_UNKNOWN_SHARE`) of the distinct judged documents unknown means the qrels
    file is paired with the wrong collection (or the docnos are written differently), an
    :class:`~irgrid.errors.InputFormatError` naming ``source``.
    """
    distinct = list(dict.fromkeys(judged))
    unknown = [docno for docno in distinct if docno not in known]
    if not unknown:
        log.info("%s: all %d judged documents are in collection %r", source, len(distinct), collection_id)
        return unknown
    examples = ", ".join(repr(docno) for docno in unknown[:_EXAMPLES]) + (", ..." if len(unknown) > _EXAMPLES else "")
    if len(unknown) > MAX_UNKNOWN_SHARE * len(distinct):
        raise InputFormatError(source, None, f"judgements of documents of collection {collection_id!r} "
                               f"({len(known)} documents; are these the qrels of another collection?)",
                               found=f"{len(unknown)} of {len(distinct)} judged documents not in it, e.g. {examples}")
    log.warning("%s: %d of %d judged documents are not in collection %r (kept: judged, never retrieved), e.g. %s",
                source, len(unknown), len(distinct), collection_id, examples)
    return unknown


def write_qrels(spec: CollectionSpec, files: Mapping[str, Path], out_path: str | os.PathLike,
                known_docnos: set[str] | None = None) -> None:
    """Write the judgements in file order: ``qid``, ``docno``, ``relevance`` (int32, already graded).

    With ``known_docnos`` (the collection's docnos, :func:`read_docnos`) the judged documents are
    checked against them first (:func:`check_judged_docnos`); nothing is written if that fails.
    """
    qids, docnos, grades = [], [], []
    for qrel in iter_qrels(spec, files):
        qids.append(qrel.qid)
        docnos.append(qrel.docno)
        grades.append(qrel.relevance)
    if not qids:
        # named here, as the raw file: the evaluation would name the qrels Parquet made from it
        raise EmptyInputError(_source_of(spec, files, "qrels"), None,
                               f"relevance judgements of collection {spec.id!r}", found="no judgements")
    if known_docnos is not None:
        check_judged_docnos(_source_of(spec, files, "qrels"), spec.id, docnos, known_docnos)
    _write_table([qids, docnos, grades], QRELS_SCHEMA, out_path)
