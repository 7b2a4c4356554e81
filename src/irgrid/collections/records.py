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


class Qrel(NamedTuple):
    """One relevance judgement, relevance already mapped to the collection's graded scale."""

    qid: str
    docno: str
    relevance: int
