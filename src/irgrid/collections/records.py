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


class LocatedDocument(Document, _Located):
    """A :class:`Document` with the file and line it starts on (``.source``, ``.line``)."""


class LocatedQuery(Query, _Located):
    """A :class:`Query` with the file and line it starts on (``.source``, ``.line``)."""


def located(record, source, line: int | None):
    """``record`` (a Document or Query) carrying the file and line it was read from."""
    kind = LocatedDocument if isinstance(record, Document) else LocatedQuery
    copy = kind(*record)
    copy.source, copy.line = str(source), line
    return copy


def location(record) -> tuple[str | None, int | None]:
    """``(file, line)`` a record was read from, ``(None, None)`` when the reader did not say."""
    return getattr(record, "source", None), getattr(record, "line", None)


class Qrel(NamedTuple):
    """One relevance judgement, relevance already mapped to the collection's graded scale."""

    qid: str
    docno: str
    relevance: int
