"""Reader for the NPL (Vaswani) layout: ``doc-text``, ``query-text`` and ``rlv-ass``.

Every file is a sequence of records, each an id line, body lines, and a line holding only
``/`` (indented in ``doc-text`` and ``rlv-ass``)::

    1
    compact memories have flexible capacities  a digital data storage
    system with capacity up to bits and random and or sequential access
    is described
       /

In ``rlv-ass`` the body lists the ids of the relevant documents, whitespace separated and
wrapped over several lines; relevance is binary. Documents and queries have a single field,
``text``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from ..errors import InputFormatError
from .qrels import map_relevance
from .reading import Format, role_path
from .records import Document, Qrel, Query, located
from .textio import iter_lines, normalize_numeric_id


class NplRecord(NamedTuple):
    """One raw record: its id, its body lines and the line numbers of id and body lines."""

    record_id: str
    lines: list[str]
    line_no: int
    body_line_nos: list[int]


def iter_npl_records(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[NplRecord]:
    """Yield the ``/``-terminated records of an NPL file.

    The id line must hold one integer; a file must not end inside a record (the last
    record's ``/`` is missing when a download was cut short).
    """
    record_id: str | None = None
    record_line = 0
    body: list[str] = []
    body_line_nos: list[int] = []
    last_line = 0
    for line_no, line in iter_lines(path, encoding):
        last_line = line_no
        stripped = line.strip()
        if record_id is None:
            if not stripped:
                continue
            if not stripped.isdigit():
                raise InputFormatError(path, line_no, "a record id (one integer on its own line)", found=line)
            record_id, record_line, body, body_line_nos = normalize_numeric_id(stripped), line_no, [], []
        elif stripped == "/":
            yield NplRecord(record_id, body, record_line, body_line_nos)
            record_id = None
        else:
            body.append(line.rstrip())
            body_line_nos.append(line_no)
    if record_id is not None:
        raise InputFormatError(path, last_line, f"a line '/' ending record {record_id} (started on line {record_line})",
                               found="end of file")


def iter_npl_documents(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[Document]:
    """Documents of ``doc-text``: docno = record id, one field ``text``."""
    for record in iter_npl_records(path, encoding):
        yield located(Document(record.record_id, {"text": "\n".join(record.lines).strip()}), path, record.line_no)


def iter_npl_queries(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[Query]:
    """Queries of ``query-text``: qid = record id, one field ``text``."""
    for record in iter_npl_records(path, encoding):
        yield located(Query(record.record_id, {"text": "\n".join(record.lines).strip()}), path, record.line_no)


def iter_npl_qrels(path: str | os.PathLike, relevance: Mapping[int, int] | None = None,
                   encoding: str = "utf-8") -> Iterator[Qrel]:
    """Judgements of ``rlv-ass``: every listed document is relevant (raw value 1)."""
    for record in iter_npl_records(path, encoding):
        for line_no, line in zip(record.body_line_nos, record.lines):
            for token in line.split():
                if not token.isdigit():
                    raise InputFormatError(path, line_no, f"relevant document ids (integers) for query {record.record_id}",
                                           found=line)
                graded = map_relevance(1, relevance, path, line_no, line)
                yield Qrel(record.record_id, normalize_numeric_id(token), graded)


def _documents(spec, files):
    return iter_npl_documents(role_path(spec, files, "docs"), spec.encoding)


def _queries(spec, files):
    return iter_npl_queries(role_path(spec, files, "queries"), spec.encoding)


def _qrels(spec, files, numeric_docnos):
    return iter_npl_qrels(role_path(spec, files, "qrels"), spec.relevance, spec.encoding)


FORMATS = {"npl": Format(documents=_documents, queries=_queries, qrels=_qrels, qrels_format="npl",
                         querysets={"text": ("text",)}, numeric_docnos=True)}
