"""Reader for TrecQA answer-sentence files (Wang et al. 2007, as released by Yao et al. 2013).

The files (``TRAIN.xml``, ``DEV.xml``, ``TEST.xml``) are pseudo-XML: no root element, raw
``&``, so they are read line by line, never with an XML parser::

    <QApairs id='1.4'>
    <question>
    What<TAB>ethnic<TAB>group ...          tokens
    WP<TAB>JJ<TAB>NN ...                   POS tags
    VMOD<TAB>NMOD<TAB>NMOD ...             dependency labels
    6<TAB>3<TAB>1 ...                      heads (1-based, 0 = root)
    -<TAB>-<TAB>PER_DESC-B ...             NER tags
    </question>
    <positive>
    ... the same five lines ...
    blue<TAB>                              answer tokens     (optional, positives only)
    20<TAB>                                their positions   (1-based; '#' between spans)
    </positive>
    <negative>
    ... the same five lines ...
    </negative>
    </QApairs>

One ``<question>`` per ``QApairs``, before any ``<positive>`` / ``<negative>`` candidate. The
five lines of an element have the same number of tab-separated fields. Yao et al.'s release
adds two lines to every positive: the answer tokens and their positions in the sentence, with
``#`` between answer spans and an optional trailing tab; they are checked (the positions must
hold those tokens) and kept in :attr:`Element.answers`, but are not part of the collection.
Blank lines between elements are skipped; inside an element every line counts.

Used for retrieval, a collection of such files (the registry's ``files``, role -> file) gives

- documents: the candidate sentences of every file pooled and deduplicated by text, in order
  of first occurrence; the text is the tokens joined by single spaces, the docno
  ``"s" + sha1(text)[:16]`` (:func:`sentence_docno`); one field, ``sentence``. The docno is
  made from the text, not from the position in the file, because TrecQA lists each
  question's positives before its negatives: ids in file order would put the relevant
  sentences first on every tie (ties are broken by docno);
- queries: every question of every file; the qid is the ``QApairs`` id (all-digit ids lose
  leading zeros), the text the question's tokens joined by spaces, in a field named after the
  file's role, so the query set ``dev`` (fields ``[dev]``) holds the questions of the ``dev``
  file only;
- qrels: every candidate of a question is judged: ``<positive>`` raw 1, ``<negative>`` raw 0
  (mapped through the registry's ``relevance``). A sentence that is twice among one question's
  candidates gives one judgement, where it first occurs; if its labels disagree the positive
  wins (the sentence does answer the question somewhere it was shown).

Defined results on odd but well-formed input: a question with no candidates is a query with no
qrels; a question with only positives (or only negatives) is kept; a candidate whose five
lines are empty has no tokens and is a document with empty text (docno the sha1 of the empty
string), kept like any other sentence.

Every element carries a dependency parse (:func:`iter_trecqa_parses`), checked while reading
(:func:`irgrid.collections.dependency_parse.check_parse`). QApairs ids must be unique over all the files.
Everything wrong is an :class:`~irgrid.errors.InputFormatError` naming the file and 1-based
line: a wrong number of lines in an element (named at its closing tag), field counts that
differ, a head that is not an integer or outside the sentence, a cycle in the heads, bytes that
are not in the encoding, an unclosed element or ``QApairs`` (named at its opening line), text
outside any element, a second ``<question>``, a candidate before the question, a repeated id.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from ..errors import InputFormatError
from .dependency_parse import Parse, check_parse
from .qrels import map_relevance
from .reading import Format, role_paths
from .records import Document, Qrel, Query
from .textio import check_identifier, iter_lines, normalize_numeric_id

# The one document field: the sentence's tokens joined by spaces.
SENTENCE_FIELD = "sentence"
QUESTION = "question"
POSITIVE = "positive"
NEGATIVE = "negative"
# Raw judgement of each candidate kind, before the registry's relevance mapping.
RAW_RELEVANCE = {POSITIVE: 1, NEGATIVE: 0}
# The five lines of an element, in order.
ELEMENT_LINES = ("tokens", "POS tags", "dependency labels", "heads", "NER tags")
ANSWER_SEPARATOR = "#"

_OPEN_PAIRS = re.compile(r"""<QApairs(?:\s+id\s*=\s*(?:'([^']*)'|"([^"]*)"))?\s*>""")
_CLOSE_PAIRS = "</QApairs>"
_OPEN_ELEMENT = {f"<{kind}>": kind for kind in (QUESTION, POSITIVE, NEGATIVE)}
_CLOSE_ELEMENT = {f"</{kind}>": kind for kind in (QUESTION, POSITIVE, NEGATIVE)}


def sentence_docno(text: str) -> str:
    """The docno of a sentence: ``"s"`` and the first 16 hex digits of the sha1 of its UTF-8 text.

    Shared with :mod:`.answer_tsv`: the same sentence has the same docno in both formats.
    """
    return "s" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


class SentenceDocnos:
    """The docnos seen so far, each with the full sha1 of its text, for deduplicating sentences.

    :meth:`is_new` says whether a sentence is seen for the first time; two different texts
    whose 64-bit docnos collide are an error rather than one silently dropped.
    """

    def __init__(self) -> None:
        self.digests: dict[str, str] = {}

    def is_new(self, docno: str, text: str, path: Path, line: int) -> bool:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
        known = self.digests.get(docno)
        if known is None:
            self.digests[docno] = digest
            return True
        if known != digest:
            raise InputFormatError(path, line, f"sentences whose docnos differ (sha1 prefix {docno!r} is shared by "
                                               "two different sentences)", found=text)
        return False


class Element(NamedTuple):
    """One ``<question>``, ``<positive>`` or ``<negative>``: its tokens, tags and checked parse.

    ``answers`` (positives of Yao et al.'s release only): the answer spans, each a tuple of
    0-based token positions, in the order the file lists them.
    """

    kind: str
    line: int  # of the opening tag
    tokens: tuple[str, ...]
    pos: tuple[str, ...]
    ner: tuple[str, ...]
    parse: Parse
    answers: tuple[tuple[int, ...], ...] = ()

    @property
    def text(self) -> str:
        return " ".join(self.tokens)


class QAPairs(NamedTuple):
    """One ``<QApairs>`` of one file: the question and its candidates in file order."""

    role: str
    path: Path
    line: int  # of the opening tag
    qid: str
    question: Element
    candidates: list[Element]


class SplitStatistics(NamedTuple):
    """Counts over one file as it is, before any deduplication.

    ``pairs`` = ``positives`` + ``negatives`` (question-candidate pairs); ``with_both``: the
    questions with at least one positive and one negative candidate (TrecQA's "clean" subset);
    ``repeated``: candidates whose sentence text is already among the same question's
    candidates; ``conflicting``: sentences listed both as a positive and as a negative of the
    same question (counted once per question and sentence).
    """

    questions: int
    pairs: int
    positives: int
    negatives: int
    with_both: int
    repeated: int
    conflicting: int


def _fields(line: str) -> list[str]:
    """The tab-separated fields of a line; an empty line has none."""
    return line.split("\t") if line else []


def _element(path: Path, kind: str, open_line: int, close_line: int, body: list[tuple[int, str]]) -> Element:
    """Check one element's lines and build it (see the module docstring for the layout)."""
    allowed = (5, 7) if kind == POSITIVE else (5,)
    if len(body) not in allowed:
        expected = (f"5 lines in the <{kind}> opened at line {open_line} (tokens, POS tags, dependency labels, "
                    "heads, NER tags)")
        if kind == POSITIVE:
            expected += ", or 7 with the answer tokens and their positions"
        raise InputFormatError(path, close_line, expected, found=f"{len(body)} lines")
    columns = []
    tokens_line = body[0][0]
    for (line_no, line), name in zip(body, ELEMENT_LINES):
        fields = _fields(line)
        if "" in fields:
            raise InputFormatError(path, line_no, f"{name} as non-empty fields separated by single tabs", found=line)
        if columns and len(fields) != len(columns[0]):
            raise InputFormatError(path, line_no, f"{len(columns[0])} tab-separated {name}, one per token of line "
                                                  f"{tokens_line}", found=f"{len(fields)} fields: {line}")
        columns.append(fields)
    tokens, pos, labels, heads_text, ner = columns
    heads_line = body[3][0]
    heads = []
    for head in heads_text:
        if not (head.isascii() and head.isdigit()):
            raise InputFormatError(path, heads_line, "head indices as integers (1-based, 0 for the root)",
                                   found=head)
        heads.append(int(head))
    parse = check_parse(tokens, heads, labels, path, heads_line)
    answers: tuple[tuple[int, ...], ...] = ()
    if len(body) == 7:
        answers = _answers(path, tokens, body[5], body[6])
    return Element(kind, open_line, tuple(tokens), tuple(pos), tuple(ner), parse, answers)


def _answers(path: Path, tokens: list[str], words_line: tuple[int, str],
             positions_line: tuple[int, str]) -> tuple[tuple[int, ...], ...]:
    """The answer spans of a positive (0-based positions), checked against its tokens."""
    (words_no, words), (line_no, positions) = words_line, positions_line
    answer_words = _fields(words.removesuffix("\t"))
    answer_positions = _fields(positions.removesuffix("\t"))
    if len(answer_words) != len(answer_positions):
        raise InputFormatError(path, line_no, f"one position per answer token of line {words_no} "
                                              f"({len(answer_words)})", found=f"{len(answer_positions)} fields")
    spans: list[tuple[int, ...]] = []
    span: list[int] = []
    for word, position in zip(answer_words, answer_positions):
        if word == ANSWER_SEPARATOR or position == ANSWER_SEPARATOR:
            if word != position:
                raise InputFormatError(path, line_no, f"'{ANSWER_SEPARATOR}' between answer spans where line "
                                                      f"{words_no} has it", found=position)
            spans.append(tuple(span))
            span = []
            continue
        if not (position.isascii() and position.isdigit() and 1 <= int(position) <= len(tokens)):
            raise InputFormatError(path, line_no, f"answer token positions, 1-based in 1..{len(tokens)}",
                                   found=position)
        index = int(position) - 1
        if tokens[index] != word:
            raise InputFormatError(path, line_no, f"the position of answer token {word!r} of line {words_no}",
                                   found=f"{position}, where the sentence has {tokens[index]!r}")
        span.append(index)
    if span or spans:
        spans.append(tuple(span))
    return tuple(spans)


def iter_trecqa_pairs(path: str | os.PathLike, role: str = "", encoding: str = "utf-8") -> Iterator[QAPairs]:
    """The ``QApairs`` of one TrecQA file in file order, checked for the layout.

    Ids are not checked for repeats here (see :func:`iter_trecqa_collection`).
    """
    path = Path(path)
    pairs_line: int | None = None  # opening line of the QApairs being read
    qid = ""
    question: Element | None = None
    candidates: list[Element] = []
    kind: str | None = None  # the element being read
    element_line = 0
    body: list[tuple[int, str]] = []
    for line_no, line in iter_lines(path, encoding):
        if line_no == 1:
            line = line.removeprefix("\ufeff")
        tag = line.strip()
        structural = tag in _OPEN_ELEMENT or tag in _CLOSE_ELEMENT or tag == _CLOSE_PAIRS or tag.startswith("<QApairs")
        if kind is not None:
            if tag == f"</{kind}>":
                element = _element(path, kind, element_line, line_no, body)
                if kind == QUESTION:
                    question = element
                else:
                    candidates.append(element)
                kind = None
            elif structural:
                raise InputFormatError(path, line_no, f"</{kind}> closing the <{kind}> opened at line {element_line}",
                                       found=line)
            else:
                body.append((line_no, line))
            continue
        if not tag:
            continue
        if pairs_line is None:
            match = _OPEN_PAIRS.fullmatch(tag)
            if match is None:
                what = "text outside any element: " if not structural else ""
                raise InputFormatError(path, line_no, "a <QApairs id='...'> line opening a question", found=what + line)
            qid = (match.group(1) or match.group(2) or "").strip()
            if not qid:
                raise InputFormatError(path, line_no, "a non-empty id in <QApairs id='...'>", found=line)
            check_identifier(qid, path, line_no, "QApairs id", found=line)
            pairs_line, qid, question, candidates = line_no, normalize_numeric_id(qid), None, []
        elif tag in _OPEN_ELEMENT:
            kind, element_line, body = _OPEN_ELEMENT[tag], line_no, []
            if kind == QUESTION and question is not None:
                raise InputFormatError(path, line_no, f"one <question> per QApairs; QApairs {qid!r} (line {pairs_line}) "
                                                      f"has one at line {question.line}", found=line)
            if kind != QUESTION and question is None:
                raise InputFormatError(path, line_no, f"the <question> of QApairs {qid!r} (line {pairs_line}) before "
                                                      "its candidates", found=line)
        elif tag == _CLOSE_PAIRS:
            if question is None:
                raise InputFormatError(path, line_no, f"a <question> in QApairs {qid!r} (line {pairs_line})",
                                       found=line)
            yield QAPairs(role, path, pairs_line, qid, question, candidates)
            pairs_line = None
        else:
            what = "" if structural else "text outside any element: "
            raise InputFormatError(path, line_no, f"<question>, <positive>, <negative> or </QApairs> closing the "
                                                  f"QApairs {qid!r} opened at line {pairs_line}", found=what + line)
    if kind is not None:
        raise InputFormatError(path, element_line, f"</{kind}> closing this <{kind}>", found="the end of the file")
    if pairs_line is not None:
        raise InputFormatError(path, pairs_line, "</QApairs> closing this QApairs", found="the end of the file")


def iter_trecqa_collection(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8") -> Iterator[QAPairs]:
    """The ``QApairs`` of every file (role -> path) in ``files`` order; ids checked unique over all files."""
    first: dict[str, tuple[Path, int]] = {}
    for role, path in files.items():
        for pairs in iter_trecqa_pairs(path, role, encoding):
            here = first.setdefault(pairs.qid, (pairs.path, pairs.line))
            if here != (pairs.path, pairs.line):
                raise InputFormatError(pairs.path, pairs.line, f"a QApairs id not used before; {pairs.qid!r} is also "
                                                               f"the id of the QApairs at {here[0]}:{here[1]}")
            yield pairs


def iter_trecqa_documents(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8") -> Iterator[Document]:
    """Every distinct candidate sentence of every file, in order of first occurrence (one field, ``sentence``)."""
    seen = SentenceDocnos()
    for pairs in iter_trecqa_collection(files, encoding):
        for candidate in pairs.candidates:
            text = candidate.text
            docno = sentence_docno(text)
            if seen.is_new(docno, text, pairs.path, candidate.line):
                yield Document(docno, {SENTENCE_FIELD: text})


def iter_trecqa_queries(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8") -> Iterator[Query]:
    """Every question of every file; its text in a field named after the file's role."""
    for pairs in iter_trecqa_collection(files, encoding):
        yield Query(pairs.qid, {pairs.role: pairs.question.text})


def iter_trecqa_qrels(files: Mapping[str, str | os.PathLike], relevance: Mapping[int, int] | None = None,
                      encoding: str = "utf-8") -> Iterator[Qrel]:
    """Every candidate of every question judged: positive raw 1, negative raw 0; one judgement per sentence.

    A sentence repeated among a question's candidates is judged once, where it first occurs,
    and relevant if any of its occurrences is a positive.
    """
    for pairs in iter_trecqa_collection(files, encoding):
        judged: dict[str, tuple[int, Element]] = {}  # docno -> (raw, first occurrence); insertion order kept
        for candidate in pairs.candidates:
            docno = sentence_docno(candidate.text)
            raw = RAW_RELEVANCE[candidate.kind]
            earlier = judged.get(docno)
            judged[docno] = (raw, candidate) if earlier is None else (max(earlier[0], raw), earlier[1])
        for docno, (raw, candidate) in judged.items():
            yield Qrel(pairs.qid, docno, map_relevance(raw, relevance, pairs.path, candidate.line,
                                                       f"<{candidate.kind}> of QApairs {pairs.qid} (raw {raw})"))


def iter_trecqa_parses(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8") -> Iterator[tuple[str, str, Parse]]:
    """The parses the files carry: ``("query", qid, parse)`` per question, ``("document", docno, parse)``.

    A document's parse is that of the sentence's first occurrence (the order of
    :func:`iter_trecqa_documents`); each question's parse comes before its candidates'.
    """
    seen = SentenceDocnos()
    for pairs in iter_trecqa_collection(files, encoding):
        yield "query", pairs.qid, pairs.question.parse
        for candidate in pairs.candidates:
            text = candidate.text
            docno = sentence_docno(text)
            if seen.is_new(docno, text, pairs.path, candidate.line):
                yield "document", docno, candidate.parse


def trecqa_statistics(files: Mapping[str, str | os.PathLike], encoding: str = "utf-8") -> dict[str, SplitStatistics]:
    """Role -> :class:`SplitStatistics` of its file as it is (no deduplication, no check across files)."""
    return {role: _statistics(iter_trecqa_pairs(path, role, encoding)) for role, path in files.items()}


def _statistics(questions: Iterator[QAPairs]) -> SplitStatistics:
    counts = dict.fromkeys(SplitStatistics._fields, 0)
    for pairs in questions:
        labels: dict[str, set[str]] = {}
        for candidate in pairs.candidates:
            kinds = labels.setdefault(candidate.text, set())
            counts["repeated"] += bool(kinds)
            kinds.add(candidate.kind)
        kinds = [candidate.kind for candidate in pairs.candidates]
        counts["questions"] += 1
        counts["pairs"] += len(kinds)
        counts["positives"] += kinds.count(POSITIVE)
        counts["negatives"] += kinds.count(NEGATIVE)
        counts["with_both"] += POSITIVE in kinds and NEGATIVE in kinds
        counts["conflicting"] += sum(len(both) == 2 for both in labels.values())
    return SplitStatistics(**counts)


def _documents(spec, files):
    return iter_trecqa_documents(role_paths(spec, files), spec.encoding)


def _queries(spec, files):
    return iter_trecqa_queries(role_paths(spec, files), spec.encoding)


def _qrels(spec, files, numeric_docnos):
    return iter_trecqa_qrels(role_paths(spec, files), spec.relevance, spec.encoding)


def _parses(spec, files):
    return iter_trecqa_parses(files, spec.encoding)


# The format that comes with a dependency parse of every sentence and question.
FORMATS = {"trecqa": Format(documents=_documents, queries=_queries, qrels=_qrels, parses=_parses, bundled=True,
                            answer_candidates=True)}
