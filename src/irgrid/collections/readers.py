"""Format dispatch: a collection's documents, queries and qrels as records, whatever the layout.

``files`` is what :func:`irgrid.collections.resolve_files` returned (role -> local path). Each
format reads its files by role: ``docs``, ``queries`` and ``qrels``, except ``squad``,
``trecqa`` and ``answer_tsv``, which read every role's file for all three (see :mod:`.squad`,
:mod:`irgrid.sentences.trecqa`, :mod:`irgrid.sentences.answer_tsv`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from ..errors import ConfigError
from .records import Document, Qrel, Query
from .spec import CollectionSpec


def _path(spec: CollectionSpec, files: Mapping[str, Path], role: str) -> Path:
    spec.file_for(role)  # ConfigError if the registry entry has no such role
    try:
        return Path(files[role])
    except KeyError:
        raise ConfigError(f"collection {spec.id!r}: no local path for its {role!r} file; "
                          "pass the result of resolve_files(spec)") from None


def _all_paths(spec: CollectionSpec, files: Mapping[str, Path]) -> dict[str, Path]:
    """Every role's local path, in the registry's ``files`` order (SQuAD: every file is read)."""
    return {role: _path(spec, files, role) for role in spec.files}


def _columns(spec: CollectionSpec) -> dict[str, str] | None:
    """answer_tsv: the registry's column names (None: the defaults)."""
    return dict(spec.columns) or None


def iter_documents(spec: CollectionSpec, files: Mapping[str, Path]) -> Iterator[Document]:
    """The collection's documents in source order."""
    fmt = spec.format
    if fmt == "ir_datasets":
        from .irds import iter_irds_documents

        return iter_irds_documents(spec.irds_id)
    if fmt == "squad":
        from .squad import iter_squad_documents

        return iter_squad_documents(_all_paths(spec, files), spec.encoding)
    if fmt == "trecqa":
        from ..sentences.trecqa import iter_trecqa_documents

        return iter_trecqa_documents(_all_paths(spec, files), spec.encoding)
    if fmt == "answer_tsv":
        from ..sentences.answer_tsv import iter_answer_tsv_documents

        return iter_answer_tsv_documents(_all_paths(spec, files), spec.encoding, _columns(spec))
    path = _path(spec, files, "docs")
    if fmt == "smart":
        from .smart import iter_smart_documents

        return iter_smart_documents(path, spec.encoding)
    if fmt == "npl":
        from .npl import iter_npl_documents

        return iter_npl_documents(path, spec.encoding)
    if fmt == "trec":
        from .trec import iter_trec_documents

        return iter_trec_documents(path, spec.encoding)
    if fmt == "html":
        from .html_files import iter_html_documents

        return iter_html_documents(path, spec.encoding)
    from .local import iter_local_documents

    return iter_local_documents(path, fmt, spec.docno_field, spec.encoding)


def iter_queries(spec: CollectionSpec, files: Mapping[str, Path]) -> Iterator[Query]:
    """The collection's queries (topics) in source order, judged or not."""
    fmt = spec.queries_format
    if fmt == "ir_datasets":
        from .irds import iter_irds_queries

        return iter_irds_queries(spec.irds_id)
    if fmt == "squad":
        from .squad import iter_squad_queries

        return iter_squad_queries(_all_paths(spec, files), spec.encoding)
    if fmt == "trecqa":
        from ..sentences.trecqa import iter_trecqa_queries

        return iter_trecqa_queries(_all_paths(spec, files), spec.encoding)
    if fmt == "answer_tsv":
        from ..sentences.answer_tsv import iter_answer_tsv_queries

        return iter_answer_tsv_queries(_all_paths(spec, files), spec.encoding, _columns(spec))
    path = _path(spec, files, "queries")
    if fmt == "smart":
        from .smart import iter_smart_queries

        return iter_smart_queries(path, spec.query_id, spec.encoding)
    if fmt == "npl":
        from .npl import iter_npl_queries

        return iter_npl_queries(path, spec.encoding)
    if fmt == "trec":
        from .trec import iter_trec_topics

        return iter_trec_topics(path, spec.encoding)
    from .local import iter_local_queries

    return iter_local_queries(path, fmt, spec.qid_field, spec.encoding)


def iter_qrels(spec: CollectionSpec, files: Mapping[str, Path]) -> Iterator[Qrel]:
    """The collection's judgements in file order, relevance mapped through ``spec.relevance``, each docno
    written into ``spec.qrels_docno`` where the entry gives one (judgements naming documents by number,
    documents named by file)."""
    qrels = _iter_qrels_as_read(spec, files)
    if not spec.qrels_docno:
        return qrels
    template = spec.qrels_docno
    return (Qrel(qrel.qid, template.format(docno=qrel.docno), qrel.relevance) for qrel in qrels)


def _iter_qrels_as_read(spec: CollectionSpec, files: Mapping[str, Path]) -> Iterator[Qrel]:
    layout = spec.qrels_format
    if layout == "ir_datasets":
        from .irds import iter_irds_qrels

        return iter_irds_qrels(spec.irds_id, spec.relevance)
    if layout == "squad":
        from .squad import iter_squad_qrels

        return iter_squad_qrels(_all_paths(spec, files), spec.relevance, spec.encoding)
    if layout == "trecqa":
        from ..sentences.trecqa import iter_trecqa_qrels

        return iter_trecqa_qrels(_all_paths(spec, files), spec.relevance, spec.encoding)
    if layout == "answer_tsv":
        from ..sentences.answer_tsv import iter_answer_tsv_qrels

        return iter_answer_tsv_qrels(_all_paths(spec, files), spec.relevance, spec.encoding, _columns(spec))
    path = _path(spec, files, "qrels")
    from .qrels import iter_trec_qrels, qrels_reader

    if layout == "trec":
        # The numbered Glasgow collections (MED.REL) write docnos as numbers, like their docs.
        numeric = spec.format in ("smart", "npl")
        return iter_trec_qrels(path, spec.relevance, spec.encoding, numeric_docnos=numeric)
    return qrels_reader(layout)(path, spec.relevance, spec.encoding)


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
    skip = frozenset()
    if spec.format == "trec":
        from .trec import TREC_METADATA_FIELDS

        skip = TREC_METADATA_FIELDS
    return _join(document.fields, spec.doc_fields, skip)


def query_text(spec: CollectionSpec, query: Query, queryset: str) -> str:
    """The text of ``query`` in ``queryset``: the set's fields joined by ``"\\n"``."""
    return _join(query.fields, spec.queryset_fields(queryset))
