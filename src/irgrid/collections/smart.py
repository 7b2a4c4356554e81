"""Reader for the SMART / Glasgow record layout (Cranfield, CACM, CISI, MED, ADI).

A record starts with a line ``.I <id>``; each field starts with a line holding only its tag
(``.T`` title, ``.A`` author, ``.B`` source, ``.W`` text, ``.K`` keywords, ``.C`` categories,
``.N`` note, ``.X`` citations) and its text runs up to the next tag line::

    .I 1
    .T
    experimental investigation of the aerodynamics of a
    wing in a slipstream .
    .A
    brenckman,m.

Quirks handled here (see the collections MANIFEST):

- CRLF and LF files (CISI, MED, ADI are CRLF), and tag lines with trailing blanks (``.T ``).
- A tag repeated in one record: CISI gives each author its own ``.A``, and a few corrupt
  Cranfield records (240, 576, 578) repeat ``.W``/``.A``/``.B`` inside the abstract. The
  repeated field's text is appended to the first one, so no text is lost and the field order
  is that of first appearance.
- Query ids are either the record's ``.I`` id or, for Cranfield, the record's position,
  because ``cranqrel`` numbers queries 1..225 by position while ``cran.qry`` ids skip numbers.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import NamedTuple

from ..errors import InputFormatError
from .reading import Format, role_path
from .records import Document, Query, located
from .textio import iter_lines, normalize_numeric_id

# ".I 12" (record start) or ".T" (field start). A field tag may carry text on the same line in
# some SMART variants; it is kept as the field's first line.
_TAG_LINE = re.compile(r"^\.([A-Z])(?:[ \t]+(.*?))?[ \t]*$")


class SmartRecord(NamedTuple):
    """One raw record: its ``.I`` id, its fields (tag -> text) and the line it starts on."""

    record_id: str
    fields: dict[str, str]
    line_no: int


def iter_smart_records(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[SmartRecord]:
    """Yield the records of a SMART file in file order.

    Raises :class:`InputFormatError` for text before the first ``.I`` line, an ``.I`` line
    without exactly one id, and non-blank text between ``.I`` and the first field tag (it
    would belong to no field, and silently dropping it would hide a broken file).
    """
    record_id: str | None = None
    record_line = 0
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None  # the lines of the field being read

    def finish() -> SmartRecord:
        joined = {tag: "\n".join(lines).strip() for tag, lines in fields.items()}
        return SmartRecord(record_id, joined, record_line)

    for line_no, line in iter_lines(path, encoding):
        match = _TAG_LINE.match(line)
        if match and match.group(1) == "I":
            if record_id is not None:
                yield finish()
            parts = (match.group(2) or "").split()
            if len(parts) != 1:
                raise InputFormatError(path, line_no, "a record start '.I <id>' with one id", found=line)
            record_id, record_line = parts[0], line_no
            fields, current = {}, None
        elif match:
            if record_id is None:
                raise InputFormatError(path, line_no, "a record start '.I <id>' before the first field", found=line)
            # A repeated tag continues the existing field (see the module docstring).
            current = fields.setdefault(match.group(1), [])
            if match.group(2):
                current.append(match.group(2))
        elif current is not None:
            current.append(line.rstrip())
        elif line.strip():
            expected = "a field tag line such as '.T' or '.W'" if record_id is not None else "a record start '.I <id>'"
            raise InputFormatError(path, line_no, expected, found=line)
    if record_id is not None:
        yield finish()


def iter_smart_documents(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[Document]:
    """Documents of a SMART file; the docno is the ``.I`` id without leading zeros."""
    for record in iter_smart_records(path, encoding):
        yield located(Document(normalize_numeric_id(record.record_id), record.fields), path, record.line_no)


def iter_smart_queries(path: str | os.PathLike, query_id: str = "record",
                       encoding: str = "utf-8") -> Iterator[Query]:
    """Queries of a SMART file.

    ``query_id="record"``: the qid is the ``.I`` id without leading zeros.
    ``query_id="position"``: the qid is the 1-based position of the record in the file
    (Cranfield: the n-th query of ``cran.qry`` is query n of ``cranqrel``).
    """
    if query_id not in ("record", "position"):
        raise ValueError(f"query_id must be 'record' or 'position', not {query_id!r}")
    for position, record in enumerate(iter_smart_records(path, encoding), start=1):
        if query_id == "position":  # the qrels' ids are positions: the .I id is no form of the qid
            yield located(Query(str(position), record.fields), path, record.line_no)
        else:
            yield located(Query(normalize_numeric_id(record.record_id), record.fields), path, record.line_no,
                          written_id=record.record_id)


def _documents(spec, files):
    return iter_smart_documents(role_path(spec, files, "docs"), spec.encoding)


def _queries(spec, files):
    return iter_smart_queries(role_path(spec, files, "queries"), spec.query_id, spec.encoding)


# SMART files number their records: judgements naming them are read as numbers too.
FORMATS = {"smart": Format(documents=_documents, queries=_queries, querysets={"text": ("W",)}, numeric_docnos=True)}
