"""Test collections: the registry, raw-file resolution, format readers and Parquet writers.

Typical use (what the Snakemake rules do)::

    registry = load_registry("config/collections.yaml")
    spec = registry["cranfield"]
    files = resolve_files(spec)                    # mirror or verified download
    write_document_shards(spec, files, "results/cranfield/docs", num_shards=4)
    write_topics(spec, files, "text", "results/cranfield/topics/text.parquet")
    write_qrels(spec, files, "results/cranfield/qrels.parquet")

Reader modules, one per layout: :mod:`.smart` (SMART/Glasgow ``.I``/``.T``/``.W`` records),
:mod:`.npl` (``/``-terminated NPL records), :mod:`.qrels` (line-per-judgement qrels),
:mod:`.trec` (TREC SGML documents and topics), :mod:`.html_files` (HTML pages, one file or a
tar archive of them, as Anserini's HtmlCollection reads them), :mod:`.local` (JSONL/TSV), :mod:`.squad`
(SQuAD-format reading-comprehension JSON: paragraphs as documents), :mod:`.irds` (ir_datasets),
:mod:`.trecqa` (``trecqa``: TrecQA pseudo-XML with its dependency parses,
:mod:`.dependency_parse`) and :mod:`.answer_tsv` (``answer_tsv``: WikiQA-style TSV), whose
documents are the candidate sentences, deduplicated, with docnos made from the text. Each module
registers its format names (:mod:`.reading` says what a format is; :mod:`.formats` is the registry).
"""

from __future__ import annotations

from .readers import document_text, iter_documents, iter_qrels, iter_queries, query_text
from .records import Document, Qrel, Query
from .sources import ChecksumError, CollectionNotAvailable, resolve_files
from .spec import CollectionSpec, get_spec, load_registry
from .writers import DOCS_SCHEMA, QRELS_SCHEMA, TOPICS_SCHEMA, shard_bounds, write_document_shards, write_qrels, write_topics

__all__ = [
    "CollectionSpec",
    "ChecksumError",
    "CollectionNotAvailable",
    "Document",
    "Query",
    "Qrel",
    "DOCS_SCHEMA",
    "TOPICS_SCHEMA",
    "QRELS_SCHEMA",
    "load_registry",
    "get_spec",
    "resolve_files",
    "iter_documents",
    "iter_queries",
    "iter_qrels",
    "document_text",
    "query_text",
    "shard_bounds",
    "write_document_shards",
    "write_topics",
    "write_qrels",
]
