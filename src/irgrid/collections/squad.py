"""Reader for reading-comprehension sets in the SQuAD 1.x JSON layout (SQuAD, DRCD, CMRC...).

One file holds::

    {"version": "1.3",
     "data": [{"title": "...", "id": "1147",
               "paragraphs": [{"id": "1147-5", "context": "...",
                               "qas": [{"id": "1147-5-1", "question": "...",
                                        "answers": [{"text": "...", "answer_start": 1}]}]}]}]}

Used for retrieval, a collection of such files (the registry's ``files``, role -> file) gives

- documents: the paragraphs of every file pooled, in ``files`` order then source order; the
  docno is the paragraph's ``id`` or, when it has none (SQuAD itself), ``<article id or
  title>-<0-based paragraph index>``; one field, ``context``. The article title is *not*
  part of the text: each question was written while reading its paragraph alone, so the
  paragraph is the unit a question is about, and a title shared by every paragraph of an
  article would only add the same words to all of them;
- queries: every question of every file; the qid is the question's ``id``; the question text
  is stored in a field named after the file's role, so the query set ``dev`` (fields
  ``[dev]``) holds the questions of the ``dev`` file only (writers leave out queries with none
  of a set's fields);
- qrels: each question judged relevant (raw value 1) on its own paragraph, whether or not it
  has answers (SQuAD 2.0's unanswerable questions still were written from that paragraph);
  every other paragraph is unjudged.

Paragraph ids must be unique over all the files, and so must question ids: a repeated id is
an :class:`~irgrid.errors.InputFormatError` naming both places. Syntax errors name the file,
line and column; structure errors the JSON path (``data[3].paragraphs[2]``).
"""

from __future__ import annotations

import io
import json
import lzma
import os
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InputFormatError
from .qrels import map_relevance
from .reading import Format, role_paths
from .records import Document, Qrel, Query
from .textio import is_encodable_text, normalize_numeric_id, open_binary, read_compressed_error

# The one document field: the paragraph text (see the module docstring for why not the title).
CONTEXT_FIELD = "context"


class JSONStructureError(InputFormatError):
    """A JSON value is not where or what the layout expects; names the file and the JSON path.

    ``path.json: data[3].paragraphs[2]: expected a 'context' string``.
    """

    def __init__(self, path: str | os.PathLike, json_path: str, expected: str, found: str | None = None):
        self.json_path = json_path
        super().__init__(path, None, expected, found)
        # Same message as the base class, with the JSON path where a line number would be.
        message = f"{self.path}: {json_path}: expected {expected}"
        if found is not None:
            shown = found if len(found) <= 120 else found[:117] + "..."
            message += f", found {shown!r}"
        self.args = (message,)

    def __reduce__(self):
        return (type(self), (self.path, self.json_path, self.expected, self.found))


class Paragraph(NamedTuple):
    """One paragraph of one file, with its questions ``(qid, question, JSON path)``."""

    role: str
    path: Path
    json_path: str
    docno: str
    context: str
    questions: list[tuple[str, str, str]]


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:200]


def _load_json(path: Path, encoding: str) -> Any:
    with open_binary(path) as handle:
        try:
            raw = handle.read()
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as error:
            if isinstance(handle, io.BufferedReader):  # not compressed: a real read error
                raise
            raise read_compressed_error(path, None, error) from None
    if encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        encoding = "utf-8-sig"  # tolerate a byte-order mark
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise InputFormatError(path, line, f"text encoded as {encoding} (set 'encoding' for this collection "
                                           "in the registry)", found=repr(raw[max(0, error.start - 20): error.end + 20])
                               ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        # The DRCD files are one line of 2 MB: show the text around the column, not the line.
        near = text[max(0, error.pos - 40): error.pos + 40]
        raise InputFormatError(path, error.lineno, f"SQuAD JSON (column {error.colno}: {error.msg})",
                               found=near) from None


def _identifier(value: Any) -> str | None:
    """A usable id: a non-empty string or an integer without inner blanks, as a stripped string; else None.

    An id becomes one field of a TREC run line (``qid Q0 docno rank score tag``): inner blanks
    would split it.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()
    if any(character.isspace() for character in text) or not is_encodable_text(text):
        return None
    return text or None


def _require(container: Mapping[str, Any], key: str, kind: type, path: Path, where: str, what: str,
             default: Any = None) -> Any:
    """``container[key]`` if it has type ``kind``; ``default`` if absent and a default is given.

    A string must be writable as UTF-8: a JSON escape of a lone surrogate (``\\ud800``) is no character.
    """
    if key not in container and default is not None:
        return default
    value = container.get(key)
    if not isinstance(value, kind):
        raise JSONStructureError(path, where, what, found=None if key not in container else _shown(value))
    if isinstance(value, str) and not is_encodable_text(value):
        raise JSONStructureError(path, where, f"{what} of characters (a \\ud800-\\udfff escape outside a "
                                              "surrogate pair is no character)", found=ascii(value)[:120])
    return value


def iter_squad_paragraphs(path: str | os.PathLike, role: str, encoding: str = "utf-8") -> Iterator[Paragraph]:
    """The paragraphs of one SQuAD file in source order, checked for the layout."""
    path = Path(path)
    data = _load_json(path, encoding)
    if not isinstance(data, dict):
        raise JSONStructureError(path, "(top level)", "an object with a 'data' list of articles",
                                 found=_shown(data))
    articles = _require(data, "data", list, path, "(top level)", "a 'data' list of articles")
    for a, article in enumerate(articles):
        where_article = f"data[{a}]"
        if not isinstance(article, dict):
            raise JSONStructureError(path, where_article, "an article object", found=_shown(article))
        paragraphs = _require(article, "paragraphs", list, path, where_article, "a 'paragraphs' list")
        title = article.get("title")
        # a title names paragraphs without ids; its blanks become '_' (SQuAD's titles already have none)
        title = "_".join(title.split()) if isinstance(title, str) else title
        article_name = _identifier(article.get("id")) or _identifier(title)
        for p, paragraph in enumerate(paragraphs):
            where = f"{where_article}.paragraphs[{p}]"
            if not isinstance(paragraph, dict):
                raise JSONStructureError(path, where, "a paragraph object", found=_shown(paragraph))
            context = _require(paragraph, "context", str, path, where, "a 'context' string")
            if "id" in paragraph:
                docno = _identifier(paragraph["id"])
                if docno is None:
                    raise JSONStructureError(path, where, "an 'id' (non-empty string or integer, no blanks)",
                                             found=_shown(paragraph["id"]))
            elif article_name is not None:
                docno = f"{article_name}-{p}"
            else:
                raise JSONStructureError(path, where, "an 'id', or an 'id' or 'title' on its article "
                                                      "to name the paragraph by")
            qas = _require(paragraph, "qas", list, path, where, "a 'qas' list", default=[])
            questions = []
            for q, qa in enumerate(qas):
                where_qa = f"{where}.qas[{q}]"
                if not isinstance(qa, dict):
                    raise JSONStructureError(path, where_qa, "a question object", found=_shown(qa))
                qid = _identifier(qa.get("id"))
                if qid is None:
                    raise JSONStructureError(path, where_qa, "an 'id' (non-empty string or integer, no blanks)",
                                             found=_shown(qa["id"]) if "id" in qa else None)
                question = _require(qa, "question", str, path, where_qa, "a 'question' string")
                _require(qa, "answers", list, path, where_qa, "an 'answers' list", default=[])
                questions.append((normalize_numeric_id(qid), question.strip(), where_qa))
            yield Paragraph(role, path, where, docno, context, questions)


def iter_squad_collection(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8") -> Iterator[Paragraph]:
    """The paragraphs of every file (role -> path) in ``files`` order; ids checked unique over all files."""
    # id -> (role, file, JSON path) of its first use
    docnos: dict[str, tuple[str, Path, str]] = {}
    qids: dict[str, tuple[str, Path, str]] = {}
    for role, path in files.items():
        for paragraph in iter_squad_paragraphs(path, role, encoding):
            here = (role, paragraph.path, paragraph.json_path)
            first = docnos.setdefault(paragraph.docno, here)
            if first != here:
                raise JSONStructureError(paragraph.path, paragraph.json_path,
                                         f"a paragraph id not used before; {paragraph.docno!r} is also the id of "
                                         f"{first[1]}: {first[2]}")
            for qid, _, where in paragraph.questions:
                here = (role, paragraph.path, where)
                first = qids.setdefault(qid, here)
                if first != here:
                    raise JSONStructureError(paragraph.path, where, f"a question id not used before; {qid!r} is "
                                                                    f"also the id of {first[1]}: {first[2]}")
            yield paragraph


def iter_squad_documents(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8") -> Iterator[Document]:
    """Every paragraph of every file as a document (one field, ``context``)."""
    for paragraph in iter_squad_collection(files, encoding):
        yield Document(paragraph.docno, {CONTEXT_FIELD: paragraph.context})


def iter_squad_queries(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8") -> Iterator[Query]:
    """Every question of every file; its text in a field named after the file's role."""
    for paragraph in iter_squad_collection(files, encoding):
        for qid, question, _ in paragraph.questions:
            yield Query(qid, {paragraph.role: question})


def iter_squad_qrels(files: Mapping[str, str | os.PathLike], relevance: Mapping[int, int] | None = None,
                     encoding: str = "utf-8") -> Iterator[Qrel]:
    """Each question relevant (raw 1, mapped through ``relevance``) on its own paragraph."""
    for paragraph in iter_squad_collection(files, encoding):
        for qid, _, where in paragraph.questions:
            yield Qrel(qid, paragraph.docno,
                       map_relevance(1, relevance, paragraph.path, None, f"{where} (question {qid})"))


def _documents(spec, files):
    return iter_squad_documents(role_paths(spec, files), spec.encoding)


def _queries(spec, files):
    return iter_squad_queries(role_paths(spec, files), spec.encoding)


def _qrels(spec, files, numeric_docnos):
    return iter_squad_qrels(role_paths(spec, files), spec.relevance, spec.encoding)


FORMATS = {"squad": Format(documents=_documents, queries=_queries, qrels=_qrels, bundled=True)}
