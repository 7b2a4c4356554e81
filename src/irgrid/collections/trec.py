"""Readers for TREC SGML documents, TREC topics and (re-exported) TREC qrels.

Documents (disks 1-5, AQUAINT, ...)::

    <DOC>
    <DOCNO> FT911-3 </DOCNO>
    <HEADLINE> ... </HEADLINE>
    <TEXT> ... <P> ... </P> ... </TEXT>
    </DOC>

Each top-level element of a ``<DOC>`` becomes a field named by its upper-cased tag, in source
order; a repeated tag is appended to the first. Tags nested inside an element (``<P>``,
``<F P=105>``) and SGML comments are removed from the text. A docs "file" may also be a
directory (every file under it, sorted) and files may be gzip/bzip2/xz compressed, whatever
their suffix (disks 4-5 use ``.0z``, ``.1z``...).

Topics (TREC-1..8 style)::

    <top>
    <num> Number: 301
    <title> International Organized Crime
    <desc> Description:
    Identify organizations that participate in ...
    <narr> Narrative:
    A relevant document must ...
    </top>

Fields are named by the lower-cased tag (``title``, ``desc``, ``narr``, and ``dom``, ``con``,
``smry``... in early topics), with the "Number:", "Topic:", "Description:", "Narrative:"...
labels removed and blanks collapsed.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterator

from ..errors import InputFormatError
from .qrels import iter_trec_qrels
from .reading import Format, role_path
from .records import Document, Query, located
from .textio import iter_files, iter_lines, normalize_numeric_id

__all__ = ["iter_trec_documents", "iter_trec_topics", "iter_trec_qrels", "DEFAULT_TOPIC_QUERYSETS"]

# Query sets a TREC topic file provides when the registry names none.
DEFAULT_TOPIC_QUERYSETS = {
    "title": ["title"],
    "desc": ["desc"],  # the verbose queries of the term-dependence papers
    "title_desc": ["title", "desc"],
    "title_desc_narr": ["title", "desc", "narr"],
}

# Fields that identify or describe a document rather than hold its text: left out of the
# indexed text when the registry gives no explicit doc_fields.
TREC_METADATA_FIELDS = frozenset({"DOCNO", "DOCOLDNO", "DOCID", "DOCHDR"})

_DOC_OPEN = re.compile(r"<DOC(?:\s[^>]*)?>", re.IGNORECASE)
_DOC_CLOSE = re.compile(r"</DOC\s*>", re.IGNORECASE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ELEMENT_OPEN = re.compile(r"<([A-Za-z][\w.-]*)(?:\s[^>]*)?>")
_ANY_TAG = re.compile(r"<[^>]*>")


def _clean_text(markup: str) -> str:
    """Text of an element: nested tags removed, entities decoded, outer blank lines dropped."""
    text = _ANY_TAG.sub(" ", markup)
    return html.unescape(text).strip()


def _parse_doc_body(body: str) -> dict[str, str]:
    """Split the inside of one ``<DOC>`` into its top-level elements (TAG -> text)."""
    body = _COMMENT.sub(" ", body)
    fields: dict[str, list[str]] = {}
    position = 0
    while True:
        opening = _ELEMENT_OPEN.search(body, position)
        if opening is None:
            break
        name = opening.group(1)
        closing = re.compile(rf"</{re.escape(name)}\s*>", re.IGNORECASE).search(body, opening.end())
        if closing is None:
            # An unclosed top-level tag (e.g. a stray <P>): skip the tag, keep scanning after it.
            position = opening.end()
            continue
        fields.setdefault(name.upper(), []).append(_clean_text(body[opening.end():closing.start()]))
        position = closing.end()
    return {name: "\n".join(part for part in parts if part) for name, parts in fields.items()}


def _iter_trec_file(path: os.PathLike, encoding: str) -> Iterator[Document]:
    inside = False
    start_line = 0
    chunks: list[str] = []
    for line_no, line in iter_lines(path, encoding):
        rest = line
        # A line may hold several boundaries (one-line documents), so consume it piecewise.
        while rest or inside:
            if not inside:
                opening = _DOC_OPEN.search(rest)
                if opening is None:
                    break  # text between documents (headers, blank lines) carries nothing
                inside, start_line, chunks = True, line_no, []
                rest = rest[opening.end():]
                continue
            closing = _DOC_CLOSE.search(rest)
            nested = _DOC_OPEN.search(rest)
            if nested is not None and (closing is None or nested.start() < closing.start()):
                raise InputFormatError(path, line_no, f"'</DOC>' closing the document opened on line {start_line} "
                                                      "before the next '<DOC>'", found=line)
            if closing is None:
                chunks.append(rest)
                break
            chunks.append(rest[:closing.start()])
            rest = rest[closing.end():]
            inside = False
            yield _make_document(path, start_line, "\n".join(chunks))
    if inside:
        raise InputFormatError(path, start_line, "'</DOC>' closing the document opened on this line",
                               found="end of file")


def _make_document(path: os.PathLike, start_line: int, body: str) -> Document:
    fields = _parse_doc_body(body)
    docno = fields.pop("DOCNO", "").strip()
    if not docno or len(docno.split()) != 1:
        raise InputFormatError(path, start_line, "a <DOCNO> element holding one id in the document opened on this line",
                               found=docno or "no DOCNO")
    return located(Document(docno, fields), path, start_line)


def iter_trec_documents(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[Document]:
    """Documents of a TREC SGML file, or of every file under a directory in sorted order."""
    for file_path in iter_files(path):
        yield from _iter_trec_file(file_path, encoding)


_TOPIC_OPEN = re.compile(r"<top>", re.IGNORECASE)
_TOPIC_CLOSE = re.compile(r"</top>", re.IGNORECASE)
_TOPIC_TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)(?:\s[^>]*)?>")
# Labels that older topic files put at the start of a field's text.
_TOPIC_LABELS = {
    "num": re.compile(r"^Number:\s*", re.IGNORECASE),
    "title": re.compile(r"^Topic:\s*", re.IGNORECASE),
    "desc": re.compile(r"^Description:\s*", re.IGNORECASE),
    "narr": re.compile(r"^Narrative:\s*", re.IGNORECASE),
    "smry": re.compile(r"^Summary:\s*", re.IGNORECASE),
    "dom": re.compile(r"^Domain:\s*", re.IGNORECASE),
    "con": re.compile(r"^Concept\(s\):\s*", re.IGNORECASE),
    "fac": re.compile(r"^Factor\(s\):\s*", re.IGNORECASE),
    "def": re.compile(r"^Definition\(s\):\s*", re.IGNORECASE),
}


def _parse_topic(path: os.PathLike, start_line: int, lines: list[tuple[int, str]]) -> Query:
    """Turn the lines between ``<top>`` and ``</top>`` into a :class:`Query`."""
    fields: dict[str, list[str]] = {}
    field_lines: dict[str, int] = {}
    current: list[str] | None = None
    for line_no, line in lines:
        position = 0
        for tag in _TOPIC_TAG.finditer(line):
            if current is not None:
                current.append(line[position:tag.start()])
            position = tag.end()
            if tag.group(1):  # a closing tag (</title> in some files) ends the field
                current = None
            else:
                name = tag.group(2).lower()
                current = fields.setdefault(name, [])
                field_lines.setdefault(name, line_no)
        if current is not None:
            current.append(line[position:])
    texts = {}
    for name, parts in fields.items():
        text = " ".join(" ".join(parts).split())
        label = _TOPIC_LABELS.get(name)
        texts[name] = label.sub("", text) if label else text
    number = texts.pop("num", "")
    if len(number.split()) != 1:
        raise InputFormatError(path, field_lines.get("num", start_line),
                               "a topic number ('<num> Number: 301') in the topic opened on line "
                               f"{start_line}", found=number or "no <num>")
    return located(Query(normalize_numeric_id(number), texts), path, start_line, written_id=number)


def iter_trec_topics(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[Query]:
    """Topics of a TREC ``<top>`` file in file order."""
    inside = False
    start_line = 0
    lines: list[tuple[int, str]] = []
    for line_no, line in iter_lines(path, encoding):
        if not inside:
            opening = _TOPIC_OPEN.search(line)
            if opening is None:
                continue
            inside, start_line, lines = True, line_no, []
            line = line[opening.end():]
        if _TOPIC_OPEN.search(line):
            raise InputFormatError(path, line_no, f"'</top>' closing the topic opened on line {start_line} "
                                                  "before the next '<top>'", found=line)
        closing = _TOPIC_CLOSE.search(line)
        if closing is None:
            lines.append((line_no, line))
            continue
        lines.append((line_no, line[:closing.start()]))
        inside = False
        yield _parse_topic(path, start_line, lines)
    if inside:
        raise InputFormatError(path, start_line, "'</top>' closing the topic opened on this line", found="end of file")


def _documents(spec, files):
    return iter_trec_documents(role_path(spec, files, "docs"), spec.encoding)


def _queries(spec, files):
    return iter_trec_topics(role_path(spec, files, "queries"), spec.encoding)


# Documents name their fields by the upper-cased tag, topics by the lower-cased one; TREC qrels
# are a layout of :mod:`.qrels`.
FORMATS = {"trec": Format(documents=_documents, queries=_queries, qrels_format="trec",
                          querysets={name: tuple(fields) for name, fields in DEFAULT_TOPIC_QUERYSETS.items()},
                          metadata_fields=TREC_METADATA_FIELDS, upper_case_fields=True,
                          lower_case_query_fields=True)}
