"""Readers for the line-per-judgement qrels layouts.

``qrels_format`` in the registry picks one:

- ``cranfield``: ``qid docid rel`` (3 columns; Cranfield's ``cranqrel``, with ``-1`` lines).
- ``smart``: ``qid docid 0 0`` or ``qid docid 0 0.000000`` (4 columns, any blank padding;
  CACM ``qrels.text`` with zero-padded qids, CISI ``CISI.REL``, ADI ``ADI.REL``, MED
  ``MED.REL.OLD``). The last two columns carry nothing: a listed pair is relevant (raw 1).
- ``trec``: ``qid iteration docno rel`` (4 columns; TREC qrels and MED ``MED.REL``).
- ``npl``: the ``/``-terminated ``rlv-ass`` layout (see :mod:`irgrid.collections.npl`).

Every reader maps the raw value through the collection's ``relevance`` table (raw -> graded)
and keeps pairs mapped to 0: they are judged non-relevant, which matters for measures that
look at judged documents only. Blank lines are skipped (CISI.REL ends with one).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

from ..errors import InputFormatError
from .reading import Format, role_path
from .records import Qrel
from .textio import check_visible_identifier, iter_lines, normalize_numeric_id

# Relevance values as stored (int32).
RELEVANCE_MIN, RELEVANCE_MAX = -(2**31), 2**31 - 1


def map_relevance(raw: int, relevance: Mapping[int, int] | None, path: str | os.PathLike,
                  line_no: int | None, line: str) -> int:
    """The graded value of ``raw``: identity without a table, else the table's value.

    A raw value the table does not list is an error rather than passed through, because a
    table exists precisely because the raw scale is not the graded one (Cranfield's 1 means
    "complete answer", the best grade).
    """
    if not relevance:
        graded = raw
    else:
        try:
            graded = relevance[raw]
        except KeyError:
            raise InputFormatError(path, line_no, f"a relevance value listed in the collection's relevance table "
                                                  f"{sorted(relevance)}", found=line) from None
    if not RELEVANCE_MIN <= graded <= RELEVANCE_MAX:
        # qrels are stored as int32 (QRELS_SCHEMA): a larger value is a broken file, not a grade
        raise InputFormatError(path, line_no, f"a relevance value between {RELEVANCE_MIN} and {RELEVANCE_MAX}",
                               found=line)
    return graded


def _parse_int(token: str) -> int | None:
    try:
        return int(token)
    except ValueError:
        return None


def iter_cranfield_qrels(path: str | os.PathLike, relevance: Mapping[int, int] | None = None,
                         encoding: str = "utf-8") -> Iterator[Qrel]:
    """``qid docid rel`` lines (3 whitespace-separated integer columns)."""
    expected = "'qid docid relevance' (3 integer columns)"
    for line_no, line in iter_lines(path, encoding):
        columns = line.split()
        if not columns:
            continue
        numbers = [_parse_int(column) for column in columns]
        if len(columns) != 3 or None in numbers:
            raise InputFormatError(path, line_no, expected, found=line)
        qid, docno, raw = columns[0], columns[1], numbers[2]
        yield Qrel(normalize_numeric_id(qid), normalize_numeric_id(docno),
                   map_relevance(raw, relevance, path, line_no, line))


def iter_smart_qrels(path: str | os.PathLike, relevance: Mapping[int, int] | None = None,
                     encoding: str = "utf-8") -> Iterator[Qrel]:
    """``qid docid 0 0[.000000]`` lines: every listed pair is relevant (raw value 1)."""
    expected = "'qid docid 0 0' (4 columns: integer ids, then two numbers)"
    for line_no, line in iter_lines(path, encoding):
        columns = line.split()
        if not columns:
            continue
        if len(columns) != 4 or not (columns[0].isdigit() and columns[1].isdigit()):
            raise InputFormatError(path, line_no, expected, found=line)
        try:
            float(columns[2]), float(columns[3])
        except ValueError:
            raise InputFormatError(path, line_no, expected, found=line) from None
        yield Qrel(normalize_numeric_id(columns[0]), normalize_numeric_id(columns[1]),
                   map_relevance(1, relevance, path, line_no, line))


def iter_trec_qrels(path: str | os.PathLike, relevance: Mapping[int, int] | None = None,
                    encoding: str = "utf-8", numeric_docnos: bool = False) -> Iterator[Qrel]:
    """TREC ``qid iteration docno rel`` lines (4 whitespace-separated columns, integer rel).

    Numeric qids lose leading zeros like the topics' do. Docnos are kept verbatim unless
    ``numeric_docnos`` (set for the numbered Glasgow collections, e.g. MED.REL), so that they
    match the docnos of the documents reader.
    """
    expected = "'qid iteration docno relevance' (4 columns, integer relevance)"
    for line_no, line in iter_lines(path, encoding):
        columns = line.split()
        if not columns:
            continue
        raw = _parse_int(columns[3]) if len(columns) == 4 else None
        if raw is None:
            raise InputFormatError(path, line_no, expected, found=line)
        check_visible_identifier(columns[0], path, line_no, "query id")
        check_visible_identifier(columns[2], path, line_no, "document id")
        docno = normalize_numeric_id(columns[2]) if numeric_docnos else columns[2]
        yield Qrel(normalize_numeric_id(columns[0]), docno, map_relevance(raw, relevance, path, line_no, line))


def _layout(reader) -> Format:
    def qrels(spec, files, numeric_docnos):
        return reader(role_path(spec, files, "qrels"), spec.relevance, spec.encoding)

    return Format(qrels=qrels)


def _trec(spec, files, numeric_docnos):
    # The numbered Glasgow collections (MED.REL) write docnos as numbers, like their docs.
    return iter_trec_qrels(role_path(spec, files, "qrels"), spec.relevance, spec.encoding, numeric_docnos=numeric_docnos)


# The line-per-judgement layouts (npl's is registered by its own module).
FORMATS = {"cranfield": _layout(iter_cranfield_qrels), "smart": _layout(iter_smart_qrels), "trec": Format(qrels=_trec)}
