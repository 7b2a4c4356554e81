"""Every collection reader fuzzed with hypothesis: bad input is an InputFormatError naming the file, or accepted.

Each reader gets a small well-formed file of its layout, then hypothesis' variations of it: random
bytes, the file cut at any byte, bytes inserted anywhere, a byte-order mark, CRLF line ends, Latin-1
bytes (not UTF-8), gzip/bzip2/xz streams whole, cut short and damaged, a record repeated (duplicate
ids), empty documents and queries, relevance values off the scale (negative, unlisted, beyond 32
bits), JSON escapes that are not text (lone surrogates). The file goes through what ``irgrid
shard``, ``topics`` and ``qrels`` run (the reader and the Parquet writer), so a raw pandas, pyarrow,
UnicodeDecodeError or IndexError escaping from any of them fails the test.

An outcome is one of:

- an :class:`InputFormatError` whose ``path`` is the fuzzed file (or a member of it, ``file[member]``,
  when it is a tar archive of HTML pages) and which names a 1-based line (or, for SQuAD JSON, the
  JSON path: :class:`~irgrid.collections.squad.JSONStructureError`; or, for a compressed stream or
  tar archive cut short or damaged and ``.Z`` data, or a file with no document, no text, no query of
  the set or no judgement, the file as a whole);
- success, with every id non-empty and blank-free and every text a string: a documented
  acceptance (an empty document or query is kept with empty text while some other has text;
  relevance is identity when the registry gives no table, any 32-bit integer).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irgrid.collections import CollectionSpec, write_document_shards, write_qrels, write_topics
from irgrid.collections.squad import JSONStructureError
from irgrid.collections.writers import EmptyInputError
from irgrid.errors import InputFormatError

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)

SMART = b".I 1\n.T\ntitle one\n.W\ntext of one\n.I 2\n.W\ntext two\n"
NPL = b"1\nsome text here\n   /\n2\nmore text\n   /\n"
NPL_QRELS = b"1\n 1 2\n   /\n2\n3\n   /\n"
TREC_DOCS = (b"<DOC>\n<DOCNO> D-1 </DOCNO>\n<TEXT>\nhello &amp; world\n</TEXT>\n</DOC>\n"
             b"<DOC>\n<DOCNO> D-2 </DOCNO>\n<TEXT>x</TEXT>\n</DOC>\n")
TREC_TOPICS = (b"<top>\n<num> Number: 301\n<title> crime\n<desc> Description:\nfind it\n<narr> Narrative:\nall\n</top>\n"
               b"<top>\n<num> Number: 302\n<title> peace\n</top>\n")
TREC_QRELS = b"301 0 D-1 1\n301 0 D-2 0\n302 0 D-1 2\n"
CRANFIELD_QRELS = b"1 184 2\n1 29 -1\n2 12 4\n"
SMART_QRELS = b"01 1410 0 0\n01 1572 0 0.000000\n 2  7 0 0\n"
JSONL_DOCS = b'{"docno": "d1", "title": "t", "text": "x"}\n{"docno": "d2", "text": "y", "n": 3}\n'
JSONL_QUERIES = b'{"qid": "1", "text": "q one"}\n{"qid": 2, "text": "q two"}\n'
TSV_DOCS = b"docno\ttext\nd1\tone\nd2\ttwo\n"
TSV_QUERIES = b"1\tq one\n2\tq two\n"
SQUAD = (b'{"version": "1", "data": [{"title": "T", "paragraphs": [{"context": "c one", "qas": [{"id": "q1", '
         b'"question": "why?", "answers": []}]}, {"id": "p2", "context": "c two", "qas": []}]}]}')
TRECQA = (b"<QApairs id='1'>\n<question>\nwho\twrote\tHamlet\t?\nNN\tNN\tNN\tNN\nROOT\tDEP\tDEP\tDEP\n2\t0\t2\t2\n"
          b"-\t-\t-\t-\n</question>\n<positive>\nShakespeare\twrote\tHamlet\t.\nNN\tNN\tNN\tNN\nROOT\tDEP\tDEP\tDEP\n"
          b"2\t0\t2\t2\n-\t-\t-\t-\nShakespeare\t\n1\t\n</positive>\n<negative>\nHamlet\tis\ta\tplay\t.\n"
          b"NN\tNN\tNN\tNN\tNN\nROOT\tDEP\tDEP\tDEP\tDEP\n0\t1\t1\t1\t1\n-\t-\t-\t-\t-\n</negative>\n</QApairs>\n")
HTML_PAGE = b"<html>\n<pre>\n\nA Title &amp; more\n\nCACM 1958 <= m\n</pre>\n</html>\n"


def _tar(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        end = archive.offset
    return buffer.getvalue()[:end]  # without the closing zero blocks: most of the bytes, none of the content


HTML_TAR = _tar({"P-1.html": HTML_PAGE, "P-2.html": b"<p>two</p>"})
ANSWER_TSV = b"QuestionID\tQuestion\tSentence\tLabel\nQ1\twhy?\tbecause.\t1\nQ1\twhy?\tno.\t0\nQ2\thow?\tso.\t0\n"

# Variants a byte mutation would rarely reach: empty records, relevance off the scale, non-text JSON.
SPECIAL = {
    "smart": [b".I 1\n.W\n\n.I 2\n.W\ntext\n", b".I 1\n.I 2\n", b".I 1\n.I 1\n"],
    "npl": [b"1\n   /\n2\n\n   /\n", b"1\nx\n   /\n1\ny\n   /\n"],
    "npl_qrels": [b"1\n   /\n", b"1\n 99999999999999999999\n   /\n"],
    "trec_docs": [b"<DOC>\n<DOCNO> D-1 </DOCNO>\n</DOC>\n", b"<DOC><DOCNO>A</DOCNO></DOC><DOC><DOCNO>A</DOCNO></DOC>\n",
                  b"<DOC>\n<DOCNO></DOCNO>\n</DOC>\n"],
    "trec_topics": [b"<top>\n<num> Number: 301\n</top>\n", b"<top><num>1</num></top><top><num>01</num></top>\n"],
    "trec_qrels": [b"301 0 D-1 7\n", b"301 0 D-1 -3\n", b"301 0 D-1 99999999999\n", b"301 0 D-1 x\n",
                   b"301 0 D-1 1.5\n"],
    "cranfield_qrels": [b"1 184 9\n", b"1 184 99999999999\n", b"1 184\n"],
    "smart_qrels": [b"01 1410 0 x\n", b"a 1 0 0\n"],
    "jsonl_docs": [b'{"docno": "d1"}\n', b'{"docno": "d1", "text": "\\ud800"}\n', b'{"docno": "\\ud800"}\n',
                   b'{"docno": "d1", "text": "a"}\n{"docno": "d1", "text": "b"}\n', b"[1, 2]\n",
                   b'{"docno": 1e400}\n', b'{"docno": 99999999999999999999999}\n'],
    "jsonl_queries": [b'{"qid": "1", "text": ""}\n', b'{"qid": "1", "text": "\\udfff"}\n', b'{"qid": true}\n'],
    "tsv_docs": [b"d1\t\n", b"d1\tone\nd1\ttwo\n", b"\tno id\n"],
    "tsv_queries": [b"1\t\n", b"1\ta\n01\tb\n"],
    "squad": [b'{"data": [{"paragraphs": [{"id": "p", "context": "\\ud800", "qas": []}]}]}',
              b'{"data": [{"paragraphs": [{"id": "p", "context": "c", "qas": [{"id": "q", "question": ""}]}]}]}',
              b'{"data": []}', b"[]", b'{"data": [{"title": "T", "paragraphs": [{"context": "a"}, {"context": "b"}]}]}'],
    "trecqa": [b"<QApairs id='1'>\n<question>\n\n\n\n\n\n</question>\n</QApairs>\n",
               b"<QApairs id='1'>\n</QApairs>\n<QApairs id='1'>\n</QApairs>\n"],
    "html": [b"<html></html>", b"<script>only data</script>", b"<p>\xe9</p>", _tar({"a b.html": b"x"}),
             _tar({"P.html": b"a", "d/P.html": b"b"}), _tar({"P.html": b"\xff"}), _tar({})],
    "answer_tsv": [b"QuestionID\tQuestion\tSentence\tLabel\nQ1\twhy?\tbecause.\t7\n",
                   b"QuestionID\tQuestion\tSentence\tLabel\nQ1\twhy?\tbecause.\t99999999999\n",
                   b"QuestionID\tQuestion\tSentence\tLabel\nQ1\t\t\t1\n"],
}


def mutations(sample: bytes, special: list[bytes]) -> st.SearchStrategy[bytes]:
    """The sample, varied: random bytes, cut, bytes inserted, BOM, CRLF, Latin-1, repeated, special cases."""
    cut = st.integers(0, len(sample)).map(lambda n: sample[:n])
    inserted = st.tuples(st.integers(0, len(sample)), st.binary(min_size=1, max_size=8)).map(
        lambda pair: sample[:pair[0]] + pair[1] + sample[pair[0]:])
    replaced = st.tuples(st.integers(0, max(0, len(sample) - 1)), st.sampled_from([b"\xe9", b"\xff", b"\x00", b"\t",
                                                                                  b" ", b"\r", b"\n", b"<", b"/"])).map(
        lambda pair: sample[:pair[0]] + pair[1] + sample[pair[0] + 1:])
    compressed = [gzip.compress(sample, mtime=0), bz2.compress(sample), lzma.compress(sample)]
    fixed = [b"", b"\xef\xbb\xbf" + sample, sample.replace(b"\n", b"\r\n"), sample + sample,
             sample.replace(b"e", b"\xe9"), b"\x1f\x9d" + sample, *special,
             *compressed, *(data[: len(data) // 2] for data in compressed),  # whole, and cut short
             *(data[:12] + b"\x00" * 8 + data[20:] for data in compressed)]  # damaged
    return st.one_of(st.binary(max_size=200), cut, inserted, replaced, st.sampled_from(fixed))


def check_outcome(action, path: Path) -> None:
    """Run ``action``: success, or an InputFormatError at ``path`` naming a line (or a JSON path)."""
    try:
        action()
    except InputFormatError as error:
        in_file = error.path == str(path) or error.path.startswith(f"{path}[")  # file[member] of an archive
        assert in_file, f"{error} names {error.path}, not the fuzzed file {path}"
        # a whole-file problem (a cut-short or .Z compressed stream) has no line
        # and so is a file holding no record the step needs (EmptyInputError: no documents, no judgements)
        located = (error.line is not None or isinstance(error, (JSONStructureError, EmptyInputError))
                   or "gzip" in str(error))
        assert located, f"no line named: {error}"
        assert error.line is None or error.line >= 1
        assert str(error).startswith(str(path))


def check_written(out: Path, id_column: str) -> None:
    files = sorted(out.glob("*.parquet")) if out.is_dir() else [out]
    for file in files:
        table = pq.read_table(file).to_pydict()
        for identifier in table[id_column]:
            assert identifier and not any(c.isspace() for c in identifier), repr(identifier)


def fuzz_case(fmt: str, role: str, content: bytes, entry: dict | None = None) -> None:
    """Write ``content`` as the ``role`` file of a one-file collection of format ``fmt`` and run its writer."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        bundled = fmt in ("squad", "trecqa", "answer_tsv")
        name = {"squad": "dev.json", "trecqa": "DEV.xml", "answer_tsv": "dev.tsv"}.get(fmt, f"{role}.txt")
        path = root / name
        path.write_bytes(content)
        if bundled:
            files = {"dev": name}
        else:
            files = {"docs": "docs.txt", role: name}
            if role != "docs":
                (root / "docs.txt").write_bytes(b"")
        spec = CollectionSpec.from_dict("fuzz", {"format": fmt, "files": files, **(entry or {})})
        local = {role_: root / file for role_, file in files.items()}
        if role == "docs":
            out = root / "out" / "docs"
            check_outcome(lambda: write_document_shards(spec, local, out, 2), path)
            if out.exists():
                check_written(out, "docno")
        elif role == "queries":
            out = root / "out" / "topics.parquet"
            queryset = next(iter(spec.querysets))
            check_outcome(lambda: write_topics(spec, local, queryset, out), path)
            if out.exists():
                check_written(out, "qid")
        else:
            out = root / "out" / "qrels.parquet"
            check_outcome(lambda: write_qrels(spec, local, out), path)
            if out.exists():
                check_written(out, "qid")
                check_written(out, "docno")


CASES = [
    # (case, format, role, sample, special key, registry entry additions)
    ("smart docs", "smart", "docs", SMART, "smart", {}),
    ("smart queries", "smart", "queries", SMART, "smart", {}),
    ("smart queries by position", "smart", "queries", SMART, "smart", {"query_id": "position"}),
    ("npl docs", "npl", "docs", NPL, "npl", {}),
    ("npl queries", "npl", "queries", NPL, "npl", {}),
    ("npl qrels", "npl", "qrels", NPL_QRELS, "npl_qrels", {}),
    ("trec docs", "trec", "docs", TREC_DOCS, "trec_docs", {}),
    ("trec topics", "trec", "queries", TREC_TOPICS, "trec_topics", {}),
    ("trec qrels", "trec", "qrels", TREC_QRELS, "trec_qrels", {}),
    ("trec qrels with a relevance table", "trec", "qrels", TREC_QRELS, "trec_qrels", {"relevance": {0: 0, 1: 1, 2: 2}}),
    ("cranfield qrels", "smart", "qrels", CRANFIELD_QRELS, "cranfield_qrels",
     {"qrels_format": "cranfield", "relevance": {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}}),
    ("smart qrels", "smart", "qrels", SMART_QRELS, "smart_qrels", {"qrels_format": "smart"}),
    ("jsonl docs", "jsonl", "docs", JSONL_DOCS, "jsonl_docs", {}),
    ("jsonl queries", "jsonl", "queries", JSONL_QUERIES, "jsonl_queries", {}),
    ("tsv docs", "tsv", "docs", TSV_DOCS, "tsv_docs", {}),
    ("tsv queries", "tsv", "queries", TSV_QUERIES, "tsv_queries", {}),
    ("squad docs", "squad", "docs", SQUAD, "squad", {}),
    ("squad queries", "squad", "queries", SQUAD, "squad", {}),
    ("squad qrels", "squad", "qrels", SQUAD, "squad", {}),
    ("trecqa docs", "trecqa", "docs", TRECQA, "trecqa", {}),
    ("trecqa queries", "trecqa", "queries", TRECQA, "trecqa", {}),
    ("trecqa qrels", "trecqa", "qrels", TRECQA, "trecqa", {}),
    ("html page", "html", "docs", HTML_PAGE, "html", {}),
    ("html pages in a tar archive", "html", "docs", HTML_TAR, "html", {}),
    ("answer_tsv docs", "answer_tsv", "docs", ANSWER_TSV, "answer_tsv", {}),
    ("answer_tsv queries", "answer_tsv", "queries", ANSWER_TSV, "answer_tsv", {}),
    ("answer_tsv qrels", "answer_tsv", "qrels", ANSWER_TSV, "answer_tsv", {}),
]


@pytest.mark.parametrize("case, fmt, role, sample, special, entry", CASES, ids=[case[0] for case in CASES])
def test_reader_fails_cleanly_or_accepts(case, fmt, role, sample, special, entry):
    fuzz_case(fmt, role, sample, entry)  # the sample itself is accepted

    @FUZZ
    @given(mutations(sample, SPECIAL[special]))
    def fuzzed(content):
        fuzz_case(fmt, role, content, entry)

    fuzzed()


@pytest.mark.parametrize("case, fmt, role, sample, special, entry", CASES, ids=[case[0] for case in CASES])
def test_every_special_case_fails_cleanly_or_accepts(case, fmt, role, sample, special, entry):
    # the hand-picked variants each run once, whatever hypothesis draws
    for content in SPECIAL[special]:
        fuzz_case(fmt, role, content, entry)


# --------------------------------------------------------------------------- what the fuzzing found, pinned


def test_a_gzip_file_cut_short_is_an_input_error_at_the_line_it_stops(tmp_path):
    from irgrid.collections.textio import iter_lines

    path = tmp_path / "docs.txt.gz"
    data = gzip.compress(b"".join(b"line %d\n" % i for i in range(2000)), mtime=0)
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputFormatError) as error:
        list(iter_lines(path))
    assert error.value.path == str(path) and error.value.line > 1
    assert "expected a complete, undamaged gzip, bzip2 or xz stream" in str(error.value)


def test_a_relevance_value_beyond_32_bits_is_an_input_error(tmp_path):
    from irgrid.collections.qrels import iter_trec_qrels

    path = tmp_path / "qrels.txt"
    path.write_text("1 0 d1 1\n1 0 d2 99999999999\n", encoding="utf-8")
    with pytest.raises(InputFormatError) as error:
        list(iter_trec_qrels(path))
    assert (error.value.path, error.value.line) == (str(path), 2)


def test_a_lone_surrogate_escape_in_jsonl_is_an_input_error(tmp_path):
    from irgrid.collections.local import iter_local_documents

    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"docno": "d1", "text": "ok \\ud83d\\ude00"}\n{"docno": "d2", "text": "bad \\ud800"}\n')
    with pytest.raises(InputFormatError) as error:
        list(iter_local_documents(path))
    assert (error.value.path, error.value.line) == (str(path), 2)


def test_a_surrogate_pair_escape_in_jsonl_is_a_character(tmp_path):
    from irgrid.collections.local import iter_local_documents

    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"docno": "d1", "text": "\\ud83d\\ude00"}\n')
    assert [d.fields["text"] for d in iter_local_documents(path)] == ["\U0001f600"]
