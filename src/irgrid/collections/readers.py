"""A collection's documents, queries and qrels as records, whatever the layout.

``files`` is what :func:`irgrid.collections.resolve_files` returned (role -> local path). The
entry's format names pick the readers in the registry (:mod:`.formats`). Each format reads its
files by role: ``docs``, ``queries`` and ``qrels``, except the bundled ones (``squad``,
``trecqa``, ``answer_tsv``), which read every role's file for all three.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from .formats import FORMATS, get_format
from .records import Document, Qrel, Query
from .spec import CollectionSpec


def iter_documents(spec: CollectionSpec, files: Mapping[str, Path]) -> Iterator[Document]:
    """The collection's documents in source order."""
    return get_format(spec.format, "documents").documents(spec, files)


def iter_queries(spec: CollectionSpec, files: Mapping[str, Path]) -> Iterator[Query]:
    """The collection's queries (topics) in source order, judged or not."""
    return get_format(spec.queries_format, "queries").queries(spec, files)


def iter_qrels(spec: CollectionSpec, files: Mapping[str, Path]) -> Iterator[Qrel]:
    """The collection's judgements in file order, relevance mapped through ``spec.relevance``, each docno
    written into ``spec.qrels_docno`` where the entry gives one (judgements naming documents by number,
    documents named by file)."""
    numeric_docnos = FORMATS[spec.format].numeric_docnos
    qrels = get_format(spec.qrels_format, "qrels").qrels(spec, files, numeric_docnos)
    if not spec.qrels_docno:
        return qrels
    template = spec.qrels_docno
    return (Qrel(qrel.qid, template.format(docno=qrel.docno), qrel.relevance) for qrel in qrels)


def _join(fields: Mapping[str, str], names: tuple[str, ...] | None, skip: frozenset[str] = frozenset()) -> str:
    """The named fields' texts joined by newlines, in ``names`` order (None: every field in source order)."""
    if names is None:
        names = tuple(name for name in fields if name not in skip)
    return "\n".join(fields[name] for name in names if fields.get(name))


def document_text(spec: CollectionSpec, document: Document) -> str:
    """The indexed text of a document: its ``doc_fields`` joined by ``"\\n"``.

    Without explicit ``doc_fields`` every field is used, except, for TREC documents, the
    identifier/header fields (DOCNO, DOCOLDNO, DOCID, DOCHDR). Missing or empty fields are
    skipped rather than leaving blank lines.
    """
    return _join(document.fields, spec.doc_fields, FORMATS[spec.format].metadata_fields)


def query_text(spec: CollectionSpec, query: Query, queryset: str) -> str:
    """The text of ``query`` in ``queryset``: the set's fields joined by ``"\\n"``."""
    return _join(query.fields, spec.queryset_fields(queryset))
