"""Reader for the answer-sentence TSV layout QA data sets ship (WikiQA and the like).

One file holds a header line and one question-sentence pair a line, tab-separated::

    QuestionID  Question                       DocumentID  DocumentTitle  SentenceID  Sentence            Label
    Q1          how are glacier caves formed?  D1          Glacier cave   D1-0        A partly submerged  0
    Q1          how are glacier caves formed?  D1          Glacier cave   D1-3        A glacier cave is   1

Columns are found by name in the header; the four that are read default to WikiQA's
(:data:`DEFAULT_COLUMNS`: ``QuestionID``, ``Question``, ``Sentence``, ``Label``) and the
registry's ``columns`` (``{qid: ..., question: ..., sentence: ..., label: ...}``) renames any
of them; other columns are ignored. Lines are split on tabs only: these files are not
CSV-quoted, so a ``"`` is text. Every line has as many fields as the header; blank lines are
skipped; surrounding whitespace of a question or sentence is dropped.

Used for retrieval, a collection of such files (the registry's ``files``, role -> file) gives

- documents: the distinct sentence texts of every file pooled, in order of first occurrence;
  the docno is ``"s" + sha1(text)[:16]`` (:func:`~irgrid.collections.trecqa.sentence_docno`, as
  for TrecQA), *not* the file's sentence id: WikiQA's sentence ids follow the order of the
  sentences in their Wikipedia summary, where answers sit early, and ties are broken by docno.
  One field, ``sentence``;
- queries: every question id, in order of first occurrence; its text in a field named after
  the file's role (query set ``dev`` = the questions of the ``dev`` file), all-digit ids
  without leading zeros;
- qrels: every pair judged, the raw value the integer label (> 0 relevant), mapped through the
  registry's ``relevance``. A sentence listed twice for one question gives one judgement,
  where it first occurs, with the highest of its labels (a positive wins over a negative).

A question id's lines may be spread over a file, but every line must give the same question
text, and one id may not be used in two files. Everything wrong is an
:class:`~irgrid.errors.InputFormatError` naming the file and 1-based line: a column missing
from the header (all missing ones named, the header's columns listed), a line with another
number of fields than the header, a label that is not an integer, an empty question id, bytes
not in the encoding, one question id with two question texts or in two files.

The files carry no parses: sentences are parsed later (:mod:`irgrid.sentences.parsing`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from ..errors import InputFormatError
from .qrels import map_relevance
from .reading import Format, role_paths
from .records import Document, Qrel, Query
from .textio import check_identifier, iter_lines, normalize_numeric_id
from .trecqa import SENTENCE_FIELD, SentenceDocnos, SplitStatistics, sentence_docno

# What is read -> the header name it has unless the registry's ``columns`` says otherwise (WikiQA's).
DEFAULT_COLUMNS = {"qid": "QuestionID", "question": "Question", "sentence": "Sentence", "label": "Label"}
_INTEGER = re.compile(r"[+-]?[0-9]+")


class Pair(NamedTuple):
    """One line: a question and a candidate sentence with its label."""

    role: str
    path: Path
    line: int
    qid: str
    question: str
    sentence: str
    label: int


def column_names(columns: Mapping[str, str] | None = None) -> dict[str, str]:
    """:data:`DEFAULT_COLUMNS` with ``columns`` (what -> header name) laid over it; unknown keys are an error."""
    unknown = sorted(set(columns or {}) - set(DEFAULT_COLUMNS))
    if unknown:
        raise ValueError(f"answer_tsv columns are {sorted(DEFAULT_COLUMNS)}, not {unknown}")
    return {**DEFAULT_COLUMNS, **(columns or {})}


def iter_answer_tsv_pairs(path: str | os.PathLike, role: str = "", encoding: str = "utf-8",
                          columns: Mapping[str, str] | None = None) -> Iterator[Pair]:
    """The pairs of one file in file order, checked for the layout (ids not checked across files)."""
    path = Path(path)
    names = column_names(columns)
    lines = iter_lines(path, encoding)
    header = next(lines, None)
    if header is None:
        raise InputFormatError(path, 1, "a header line naming the columns", found="an empty file")
    header_line, header_text = header
    found = [name.strip() for name in header_text.removeprefix("\ufeff").split("\t")]
    missing = [f"{name!r} ({what})" for what, name in names.items() if name not in found]
    if missing:
        raise InputFormatError(path, header_line, f"a tab-separated header naming the column{'s' * (len(missing) > 1)} "
                                                  f"{', '.join(missing)} (set 'columns' in the registry to rename)",
                               found=f"columns {found}")
    repeated = [name for name in names.values() if found.count(name) > 1]
    if repeated:
        raise InputFormatError(path, header_line, f"each of the columns {sorted(set(repeated))} once in the header",
                               found=f"columns {found}")
    index = {what: found.index(name) for what, name in names.items()}
    width = len(found)
    # question id -> (question text, line) within this file
    questions: dict[str, tuple[str, int]] = {}
    for line_no, line in lines:
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != width:
            raise InputFormatError(path, line_no, f"{width} tab-separated fields, as in the header (line {header_line})",
                                   found=f"{len(fields)} fields: {line}")
        qid = fields[index["qid"]].strip()
        if not qid:
            raise InputFormatError(path, line_no, f"a question id in column {names['qid']!r}", found=line)
        check_identifier(qid, path, line_no, f"question id (column {names['qid']!r})", found=line)
        qid = normalize_numeric_id(qid)
        label = fields[index["label"]].strip()
        if not _INTEGER.fullmatch(label):
            raise InputFormatError(path, line_no, f"an integer label in column {names['label']!r}", found=label)
        question = fields[index["question"]].strip()
        first = questions.setdefault(qid, (question, line_no))
        if first[0] != question:
            raise InputFormatError(path, line_no, f"the text of question {qid!r} as on line {first[1]}: {first[0]!r}",
                                   found=question)
        yield Pair(role, path, line_no, qid, question, fields[index["sentence"]].strip(), int(label))


def iter_answer_tsv_collection(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8",
                               columns: Mapping[str, str] | None = None) -> Iterator[Pair]:
    """The pairs of every file (role -> path) in ``files`` order; a question id may not be in two files."""
    first: dict[str, tuple[Path, int]] = {}
    for role, path in files.items():
        for pair in iter_answer_tsv_pairs(path, role, encoding, columns):
            where = first.setdefault(pair.qid, (pair.path, pair.line))
            if where[0] != pair.path:
                raise InputFormatError(pair.path, pair.line, f"a question id not used in another file; {pair.qid!r} "
                                                             f"is also the id of {where[0]}:{where[1]}")
            yield pair


def iter_answer_tsv_documents(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8",
                              columns: Mapping[str, str] | None = None) -> Iterator[Document]:
    """Every distinct sentence of every file, in order of first occurrence (one field, ``sentence``)."""
    seen = SentenceDocnos()
    for pair in iter_answer_tsv_collection(files, encoding, columns):
        docno = sentence_docno(pair.sentence)
        if seen.is_new(docno, pair.sentence, pair.path, pair.line):
            yield Document(docno, {SENTENCE_FIELD: pair.sentence})


def iter_answer_tsv_queries(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8",
                            columns: Mapping[str, str] | None = None) -> Iterator[Query]:
    """Every question, once, in order of first occurrence; its text in a field named after the file's role."""
    seen: set[str] = set()
    for pair in iter_answer_tsv_collection(files, encoding, columns):
        if pair.qid not in seen:
            seen.add(pair.qid)
            yield Query(pair.qid, {pair.role: pair.question})


def iter_answer_tsv_qrels(files: Mapping[str, str | os.PathLike], relevance: Mapping[int, int] | None = None,
                          encoding: str = "utf-8", columns: Mapping[str, str] | None = None) -> Iterator[Qrel]:
    """Every pair judged (raw value the label), one judgement per question and sentence, questions in order.

    A sentence listed more than once for a question is judged where it first occurs, with
    its highest label. The whole collection is read before the first judgement.
    """
    # qid -> docno -> (highest label, first pair); insertion orders are first occurrences
    judged: dict[str, dict[str, tuple[int, Pair]]] = {}
    for pair in iter_answer_tsv_collection(files, encoding, columns):
        sentences = judged.setdefault(pair.qid, {})
        docno = sentence_docno(pair.sentence)
        earlier = sentences.get(docno)
        sentences[docno] = (pair.label, pair) if earlier is None else (max(earlier[0], pair.label), earlier[1])
    for qid, sentences in judged.items():
        for docno, (raw, pair) in sentences.items():
            yield Qrel(qid, docno, map_relevance(raw, relevance, pair.path, pair.line,
                                                 f"label {raw} of question {qid}"))


def answer_tsv_statistics(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8",
                          columns: Mapping[str, str] | None = None) -> dict[str, SplitStatistics]:
    """Role -> :class:`~irgrid.collections.trecqa.SplitStatistics` of its file as it is (label > 0 positive)."""
    result = {}
    for role, path in files.items():
        counts = dict.fromkeys(SplitStatistics._fields, 0)
        # qid -> sentence -> set of labels seen (True: positive)
        questions: dict[str, dict[str, set[bool]]] = {}
        for pair in iter_answer_tsv_pairs(path, role, encoding, columns):
            labels = questions.setdefault(pair.qid, {}).setdefault(pair.sentence, set())
            counts["repeated"] += bool(labels)
            labels.add(pair.label > 0)
            counts["pairs"] += 1
            counts["positives" if pair.label > 0 else "negatives"] += 1
        for sentences in questions.values():
            kinds = set().union(*sentences.values())
            counts["questions"] += 1
            counts["with_both"] += len(kinds) == 2
            counts["conflicting"] += sum(len(labels) == 2 for labels in sentences.values())
        result[role] = SplitStatistics(**counts)
    return result


def _columns(spec) -> dict[str, str] | None:
    """The registry's column names (None: the defaults)."""
    return dict(spec.columns) or None


def _documents(spec, files):
    return iter_answer_tsv_documents(role_paths(spec, files), spec.encoding, _columns(spec))


def _queries(spec, files):
    return iter_answer_tsv_queries(role_paths(spec, files), spec.encoding, _columns(spec))


def _qrels(spec, files, numeric_docnos):
    return iter_answer_tsv_qrels(role_paths(spec, files), spec.relevance, spec.encoding, _columns(spec))


FORMATS = {"answer_tsv": Format(documents=_documents, queries=_queries, qrels=_qrels, bundled=True,
                                answer_candidates=True)}
