"""Record types shared by every collection reader (after ir_datasets' Generic*)."""

from __future__ import annotations

from typing import NamedTuple


class Document(NamedTuple):
    """One document: its identifier and its fields in source order (name -> text)."""

    docno: str
    fields: dict[str, str]


class Query(NamedTuple):
    """One topic: its identifier and its fields (e.g. title, desc, narr, or text)."""

    qid: str
    fields: dict[str, str]


class _Located:
    """Where a record was read: ``source`` (file) and ``line`` (1-based, where the record starts).

    Kept outside the tuple, so a located record still equals the same record built by hand;
    writers name this place when they refuse a record (a repeated id).
    """

    source: str | None = None
    line: int | None = None
    #: the id as the file writes it, where the reader changed it ("001" read as "1"), else None
    written_id: str | None = None


class LocatedDocument(Document, _Located):
    """A :class:`Document` with the file and line it starts on (``.source``, ``.line``)."""


class LocatedQuery(Query, _Located):
    """A :class:`Query` with the file and line it starts on (``.source``, ``.line``)."""


def located(record, source, line: int | None, written_id: str | None = None):
    """``record`` (a Document or Query) carrying the file and line it was read from, and the id as
    the file writes it where the reader normalised it (``written_id``; exports write that form)."""
    kind = LocatedDocument if isinstance(record, Document) else LocatedQuery
    copy = kind(*record)
    copy.source, copy.line = str(source), line
    if written_id is not None and written_id != record[0]:
        copy.written_id = written_id
    return copy


def written_id(record) -> str:
    """The record's id as its file writes it (``"001"`` where the id is ``"1"``)."""
    return getattr(record, "written_id", None) or record[0]


def location(record) -> tuple[str | None, int | None]:
    """``(file, line)`` a record was read from, ``(None, None)`` when the reader did not say."""
    return getattr(record, "source", None), getattr(record, "line", None)


class Qrel(NamedTuple):
    """One relevance judgement, relevance already mapped to the collection's graded scale."""

    qid: str
    docno: str
    relevance: int
