"""Collections served by ``ir_datasets`` (any dataset id, e.g. ``vaswani`` or ``cranfield``).

ir_datasets' records are named tuples whose first field is the id (``doc_id`` /
``query_id``); every other field holding a string becomes one of our fields, in the tuple's
order (non-text fields such as MS MARCO v2's passage spans are left out). ir_datasets is
imported only when such a collection is read: importing it is slow and touches its home
directory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .qrels import map_relevance
from .reading import Format
from .records import Document, Qrel, Query
from .textio import check_identifier, normalize_numeric_id


def load_dataset(dataset_id: str) -> Any:
    """``ir_datasets.load(dataset_id)``, imported lazily."""
    # deferred: ir_datasets is imported only for a collection read through it
    import ir_datasets

    return ir_datasets.load(dataset_id)


def _text_fields(record: Any, id_field: str) -> dict[str, str]:
    names = getattr(record, "_fields", None)
    if names is None:  # not a named tuple: fall back to the object's attributes
        names = [name for name in vars(record)]
    fields = {}
    for name in names:
        if name == id_field:
            continue
        value = getattr(record, name)
        if isinstance(value, str):
            fields[name] = value
    return fields


def iter_irds_documents(dataset_id: str) -> Iterator[Document]:
    """Documents of an ir_datasets dataset; the docno is ``doc_id`` unchanged."""
    source = f"ir_datasets:{dataset_id} docs"
    for index, record in enumerate(load_dataset(dataset_id).docs_iter(), start=1):
        docno = check_identifier(str(record.doc_id), source, index, "doc_id")
        yield Document(docno, _text_fields(record, "doc_id"))


def iter_irds_queries(dataset_id: str) -> Iterator[Query]:
    """Queries of an ir_datasets dataset; numeric qids lose leading zeros as in every reader."""
    source = f"ir_datasets:{dataset_id} queries"
    for index, record in enumerate(load_dataset(dataset_id).queries_iter(), start=1):
        qid = check_identifier(str(record.query_id), source, index, "query_id")
        yield Query(normalize_numeric_id(qid), _text_fields(record, "query_id"))


def iter_irds_qrels(dataset_id: str, relevance: Mapping[int, int] | None = None) -> Iterator[Qrel]:
    """Judgements of an ir_datasets dataset, relevance mapped through ``relevance``."""
    source = f"ir_datasets:{dataset_id} qrels"
    for index, record in enumerate(load_dataset(dataset_id).qrels_iter(), start=1):
        raw = int(record.relevance)
        line = f"{record.query_id} {record.doc_id} {record.relevance}"
        yield Qrel(normalize_numeric_id(str(record.query_id)), str(record.doc_id),
                   map_relevance(raw, relevance, source, index, line))


def _documents(spec, files):
    return iter_irds_documents(spec.irds_id)


def _queries(spec, files):
    return iter_irds_queries(spec.irds_id)


def _qrels(spec, files, numeric_docnos):
    return iter_irds_qrels(spec.irds_id, spec.relevance)


FORMATS = {"ir_datasets": Format(documents=_documents, queries=_queries, qrels=_qrels, qrels_format="ir_datasets",
                                 querysets={"text": None})}
