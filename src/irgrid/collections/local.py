"""Readers for user-supplied collections in JSON Lines or tab-separated files.

JSONL documents, one object a line::

    {"docno": "d1", "title": "...", "text": "..."}

The id is taken from the registry's ``id_field`` if given, else from the first present of
``docno``, ``id``, ``doc_id``, ``docid``, ``_id`` (queries: ``qid``, ``query_id``, ``id``,
``_id``). Every other key becomes a field in source order: strings as they are, numbers
written out, lists of strings joined by newlines; ``null``, booleans and nested objects are
not text and are left out.

TSV documents ``docno<TAB>text`` and queries ``qid<TAB>text`` (one field ``text``; the text
may itself contain tabs). A first line whose id column is literally ``docno``/``id``/``qid``...
is a header and is skipped.

The registry says which layout each file has (``format`` for documents, ``queries_format``
for topics), so a JSONL collection can come with TSV topics.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputFormatError
from .reading import Format, role_path
from .records import Document, Query, located
from .textio import check_identifier, is_encodable_text, iter_files, iter_lines, normalize_numeric_id

DOCNO_KEYS = ("docno", "id", "doc_id", "docid", "_id")
QID_KEYS = ("qid", "query_id", "id", "_id")
LAYOUTS = ("jsonl", "tsv")


def _text_value(value: object) -> str | None:
    """The text of a JSON value, or None if it is not text (see the module docstring)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(value)
    return None


def _all_encodable(value: object) -> bool:
    """Whether every string in a decoded JSON value (keys too) can be written as UTF-8."""
    if isinstance(value, str):
        return is_encodable_text(value)
    if isinstance(value, dict):
        return all(_all_encodable(key) and _all_encodable(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_all_encodable(item) for item in value)
    return True


def _tsv_hint(path: os.PathLike, line: str, layout_key: str) -> str:
    """What to set when a file read as JSON Lines is plainly tab-separated (a tab outside any JSON
    text, or a .tsv name), else nothing: a TSV file read as JSONL fails at its first line with
    "expected a JSON object", which says nothing about the registry key that chooses the layout."""
    tab_separated = "\t" in line and not line.lstrip().startswith(("{", "["))
    if tab_separated or Path(path).name.lower().endswith((".tsv", ".tsv.gz", ".tab")):
        return (f"; the file looks tab-separated: set '{layout_key}: tsv' in its registry entry "
                f"({'docno' if layout_key == 'format' else 'qid'}<TAB>text lines)")
    return ""


def _iter_jsonl_records(path: os.PathLike, id_keys: tuple[str, ...], id_field: str | None,
                        encoding: str, layout_key: str = "format") -> Iterator[tuple[str, dict[str, str], int]]:
    """``layout_key``: the registry key choosing this file's layout (``format`` for documents,
    ``queries_format`` for queries), named when the file looks tab-separated."""
    keys = (id_field,) if id_field else id_keys
    for line_no, line in iter_lines(path, encoding):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputFormatError(path, line_no, f"a JSON object ({error.msg}){_tsv_hint(path, line, layout_key)}",
                                   found=line) from None
        if not isinstance(record, dict):
            raise InputFormatError(path, line_no, f"a JSON object{_tsv_hint(path, line, layout_key)}", found=line)
        if not _all_encodable(record):
            raise InputFormatError(path, line_no, "JSON strings of characters (a \\ud800-\\udfff escape that is "
                                                  "not part of a surrogate pair is no character)", found=line)
        key = next((k for k in keys if k in record), None)
        identifier = record.get(key) if key else None
        if isinstance(identifier, bool) or not isinstance(identifier, (str, int)) or str(identifier).strip() == "":
            raise InputFormatError(path, line_no, f"an id (string or integer) under one of the keys {list(keys)}",
                                   found=line)
        check_identifier(str(identifier).strip(), path, line_no, f"id under key {key!r}", found=line)
        fields = {}
        for name, value in record.items():
            if name == key:
                continue
            text = _text_value(value)
            if text is not None:
                fields[name] = text
        yield str(identifier).strip(), fields, line_no


def _iter_tsv_records(path: os.PathLike, what: str, header_ids: tuple[str, ...],
                      encoding: str) -> Iterator[tuple[str, dict[str, str], int]]:
    first = True
    for line_no, line in iter_lines(path, encoding):
        if not line.strip():
            continue
        identifier, tab, text = line.partition("\t")
        if first and identifier.strip().lower() in header_ids:
            first = False
            continue
        first = False
        if not tab or not identifier.strip():
            raise InputFormatError(path, line_no, f"'{what}<TAB>text'", found=line)
        check_identifier(identifier.strip(), path, line_no, what, found=line)
        yield identifier.strip(), {"text": text.strip()}, line_no


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")


def iter_local_documents(path: str | os.PathLike, layout: str = "jsonl", id_field: str | None = None,
                         encoding: str = "utf-8") -> Iterator[Document]:
    """Documents of a JSONL or TSV file (or of every file under a directory, sorted)."""
    _check_layout(layout)
    for file_path in iter_files(path):
        if layout == "jsonl":
            records = _iter_jsonl_records(file_path, DOCNO_KEYS, id_field, encoding)
        else:
            records = _iter_tsv_records(file_path, "docno", DOCNO_KEYS, encoding)
        for docno, fields, line_no in records:
            yield located(Document(docno, fields), file_path, line_no)


def iter_local_queries(path: str | os.PathLike, layout: str = "jsonl", id_field: str | None = None,
                       encoding: str = "utf-8") -> Iterator[Query]:
    """Queries of a JSONL or TSV file; numeric qids lose leading zeros like everywhere else."""
    _check_layout(layout)
    if layout == "jsonl":
        records = _iter_jsonl_records(Path(path), QID_KEYS, id_field, encoding, layout_key="queries_format")
    else:
        records = _iter_tsv_records(Path(path), "qid", QID_KEYS, encoding)
    for qid, fields, line_no in records:
        yield located(Query(normalize_numeric_id(qid), fields), path, line_no, written_id=qid)


def _format(layout: str, querysets) -> Format:
    def documents(spec, files):
        return iter_local_documents(role_path(spec, files, "docs"), layout, spec.docno_field, spec.encoding)

    def queries(spec, files):
        return iter_local_queries(role_path(spec, files, "queries"), layout, spec.qid_field, spec.encoding)

    return Format(documents=documents, queries=queries, qrels_format="trec", querysets=querysets)


# A TSV's text is its ``text`` column; a JSON object's every field, in order.
FORMATS = {"jsonl": _format("jsonl", {"text": None}), "tsv": _format("tsv", {"text": ("text",)})}
