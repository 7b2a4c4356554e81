"""Format readers on small hand-written files: records, quirks, and errors that name file and line."""

from __future__ import annotations

import gzip
import json
import os
import stat
import sys
import types
from collections import namedtuple
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from common import REPO

from irgrid.collections import (
    CollectionSpec,
    Document,
    Qrel,
    Query,
    document_text,
    iter_documents,
    iter_qrels,
    iter_queries,
    load_registry,
    query_text,
    write_document_shards,
    write_topics,
)
from irgrid.collections.local import iter_local_documents, iter_local_queries
from irgrid.collections.npl import iter_npl_documents, iter_npl_qrels, iter_npl_queries
from irgrid.collections.qrels import iter_cranfield_qrels, iter_smart_qrels, iter_trec_qrels
from irgrid.collections.smart import iter_smart_documents, iter_smart_queries
from irgrid.collections.textio import iter_lines
from irgrid.collections.trec import iter_trec_documents, iter_trec_topics
from irgrid.errors import ConfigError, InputFormatError
from irgrid.io import write_text


def write(path: Path, text: str, newline: str = "\n") -> Path:
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def assert_error_at(excinfo: pytest.ExceptionInfo, path: Path, line: int) -> None:
    """The error names the file and the 1-based line, in the message a user sees."""
    error = excinfo.value
    assert error.path == str(path)
    assert error.line == line
    assert f"{path}:{line}:" in str(error)


# --- SMART -------------------------------------------------------------------------------------

SMART_DOCS = """\
.I 1
.T
a title
.A
author one
.A
author two
.W
first line
  second line
.I 002
.T 
second title
.W
text two
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_smart_documents_fields_in_order_with_repeated_tags(tmp_path, newline):
    path = write(tmp_path / "docs.all", SMART_DOCS, newline)
    docs = list(iter_smart_documents(path))
    assert docs == [
        Document("1", {"T": "a title", "A": "author one\nauthor two", "W": "first line\n  second line"}),
        Document("2", {"T": "second title", "W": "text two"}),
    ]


def test_smart_queries_by_record_and_by_position(tmp_path):
    path = write(tmp_path / "q.qry", ".I 001\n.W\nfirst\n.I 004\n.W\nsecond\n", "\r\n")
    assert [q.qid for q in iter_smart_queries(path, "record")] == ["1", "4"]
    assert [q.qid for q in iter_smart_queries(path, "position")] == ["1", "2"]
    assert [q.fields for q in iter_smart_queries(path)] == [{"W": "first"}, {"W": "second"}]


@pytest.mark.parametrize("text, line", [
    ("some text\n.I 1\n.W\nx\n", 1),            # text before the first record
    (".I 1\n.W\nx\n.I\n.W\ny\n", 4),            # .I without id
    (".I 1\n.W\nx\n.I 2 3\n.W\ny\n", 4),        # .I with two ids
    (".I 1\nstray text\n.W\nx\n", 2),           # text that belongs to no field
    (".W\nx\n", 1),                             # a field before any record
])
def test_smart_malformed_records_name_file_and_line(tmp_path, text, line):
    path = write(tmp_path / "bad.qry", text)
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_smart_queries(path))
    assert_error_at(excinfo, path, line)


# --- NPL ---------------------------------------------------------------------------------------

def test_npl_documents_queries_and_qrels(tmp_path):
    docs = write(tmp_path / "doc-text", "1\nfirst doc\nmore text\n   /\n2\nsecond doc\n   /\n")
    queries = write(tmp_path / "query-text", "1\nQUERY ONE\n/\n2\nQUERY TWO\n/\n")
    qrels = write(tmp_path / "rlv-ass", "1\n  5  7\n 11\n   /\n2\n    3\n   /\n")
    assert list(iter_npl_documents(docs)) == [Document("1", {"text": "first doc\nmore text"}),
                                             Document("2", {"text": "second doc"})]
    assert list(iter_npl_queries(queries)) == [Query("1", {"text": "QUERY ONE"}), Query("2", {"text": "QUERY TWO"})]
    assert list(iter_npl_qrels(qrels)) == [Qrel("1", "5", 1), Qrel("1", "7", 1), Qrel("1", "11", 1), Qrel("2", "3", 1)]


def test_npl_malformed(tmp_path):
    bad_id = write(tmp_path / "doc-text", "1\ntext\n   /\nx2\ntext\n   /\n")
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_npl_documents(bad_id))
    assert_error_at(excinfo, bad_id, 4)

    unterminated = write(tmp_path / "query-text", "1\nQUERY\n/\n2\nQUERY TWO\n")
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_npl_queries(unterminated))
    assert_error_at(excinfo, unterminated, 5)

    bad_docid = write(tmp_path / "rlv-ass", "1\n 5 x7\n   /\n")
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_npl_qrels(bad_docid))
    assert_error_at(excinfo, bad_docid, 2)


# --- qrels layouts -----------------------------------------------------------------------------

def test_cranfield_qrels_mapping_and_blank_lines(tmp_path):
    path = write(tmp_path / "cranqrel", "1 184 2 \n\n1 29 -1\n225 1188 -1")  # no final newline, like cranqrel
    table = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}
    assert list(iter_cranfield_qrels(path, table)) == [Qrel("1", "184", 3), Qrel("1", "29", 0), Qrel("225", "1188", 0)]
    assert [q.relevance for q in iter_cranfield_qrels(path)] == [2, -1, -1]  # no table: raw values


def test_smart_qrels_layouts(tmp_path):
    cacm = write(tmp_path / "qrels.text", "01 1410  0 0\n10 46 0 0\n")
    cisi = write(tmp_path / "CISI.REL", "     1     28\t0\t0.000000\n \n", "\r\n")
    adi = write(tmp_path / "ADI.REL", "1   17   0   0.000000   \n", "\r\n")
    assert list(iter_smart_qrels(cacm)) == [Qrel("1", "1410", 1), Qrel("10", "46", 1)]
    assert list(iter_smart_qrels(cisi)) == [Qrel("1", "28", 1)]
    assert list(iter_smart_qrels(adi)) == [Qrel("1", "17", 1)]


def test_trec_qrels(tmp_path):
    path = write(tmp_path / "qrels.txt", "301 0 FBIS3-10082 1\n301 0 FBIS3-10169 0\n051 Q0 AP880212-0161 2\n")
    assert list(iter_trec_qrels(path)) == [Qrel("301", "FBIS3-10082", 1), Qrel("301", "FBIS3-10169", 0),
                                           Qrel("51", "AP880212-0161", 2)]
    med = write(tmp_path / "MED.REL", "1 0 013 1\n")
    assert list(iter_trec_qrels(med, numeric_docnos=True)) == [Qrel("1", "13", 1)]


@pytest.mark.parametrize("reader, text, line", [
    (iter_cranfield_qrels, "1 184 2\n1 29\n", 2),             # 2 columns
    (iter_cranfield_qrels, "1 184 2\n1 29 high\n", 2),        # non-integer relevance
    (iter_cranfield_qrels, "1 184 2\n1 29 2 0\n", 2),         # 4 columns
    (iter_smart_qrels, "01 1410 0 0\n02 1411 0\n", 2),         # 3 columns
    (iter_smart_qrels, "01 1410 0 0\nq2 1411 0 0\n", 2),       # non-integer qid
    (iter_trec_qrels, "301 0 FBIS3-1 1\n301 0 FBIS3-2\n", 2),  # 3 columns
    (iter_trec_qrels, "301 0 FBIS3-1 1\n\n301 0 FBIS3-2 yes\n", 3),  # non-integer relevance
])
def test_malformed_qrels_name_file_and_line(tmp_path, reader, text, line):
    path = write(tmp_path / "qrels", text)
    with pytest.raises(InputFormatError) as excinfo:
        list(reader(path))
    assert_error_at(excinfo, path, line)


def test_relevance_value_missing_from_table_is_an_error(tmp_path):
    path = write(tmp_path / "cranqrel", "1 184 2\n1 29 5\n")
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_cranfield_qrels(path, {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}))
    assert_error_at(excinfo, path, 2)


def test_undecodable_bytes_name_the_line(tmp_path):
    path = tmp_path / "latin1.qrels"
    path.write_bytes(b"1 0 A 1\n1 0 caf\xe9 1\n")
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_lines(path))
    assert_error_at(excinfo, path, 2)
    assert [line for _, line in iter_lines(path, "latin-1")][1] == "1 0 café 1"


# --- TREC --------------------------------------------------------------------------------------

TREC_DOCS_A = """\
<DOC>
<DOCNO> FT911-1 </DOCNO>
<PROFILE>_AN-BEOA7AAIFT</PROFILE>
<HEADLINE>
FT  14 MAY 91 / Markets &amp; money
</HEADLINE>
<TEXT>
<P>First paragraph.</P>
<!-- an SGML comment that is not text -->
<P>Second paragraph.</P>
</TEXT>
</DOC>
<DOC>
<DOCNO>LA010189-0001</DOCNO>
<HEADLINE><P>A headline</P></HEADLINE>
<TEXT>part one</TEXT>
<TEXT>part two</TEXT>
</DOC>
"""

TREC_DOCS_B = "<DOC><DOCNO>AP-1</DOCNO><TITLE>one-line doc</TITLE><TEXT>its text</TEXT></DOC>\n"


def test_trec_documents_fields_and_compression(tmp_path):
    plain = write(tmp_path / "ft911", TREC_DOCS_A)
    docs = list(iter_trec_documents(plain))
    assert [d.docno for d in docs] == ["FT911-1", "LA010189-0001"]
    assert list(docs[0].fields) == ["PROFILE", "HEADLINE", "TEXT"]
    assert docs[0].fields["HEADLINE"] == "FT  14 MAY 91 / Markets & money"
    assert "comment" not in docs[0].fields["TEXT"]
    assert docs[0].fields["TEXT"].split() == ["First", "paragraph.", "Second", "paragraph."]
    assert docs[1].fields == {"HEADLINE": "A headline", "TEXT": "part one\npart two"}

    # gzip detected by content, whatever the suffix (TREC disks 4-5 use .0z, .1z, ...).
    compressed = tmp_path / "fr940104.0z"
    compressed.write_bytes(gzip.compress(TREC_DOCS_B.encode()))
    assert list(iter_trec_documents(compressed)) == [Document("AP-1", {"TITLE": "one-line doc", "TEXT": "its text"})]


def test_trec_documents_from_a_directory_in_sorted_order(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "b").mkdir(parents=True)
    with gzip.open(corpus / "b" / "ap.gz", "wt") as handle:
        handle.write(TREC_DOCS_B)
    write(corpus / "a.txt", TREC_DOCS_A)
    write(corpus / ".hidden", "<DOC><DOCNO>X</DOCNO></DOC>")
    assert [d.docno for d in iter_trec_documents(corpus)] == ["FT911-1", "LA010189-0001", "AP-1"]


@pytest.mark.parametrize("text, line", [
    ("<DOC>\n<DOCNO>A</DOCNO>\n</DOC>\n<DOC>\n<TEXT>no docno</TEXT>\n</DOC>\n", 4),    # missing DOCNO
    ("<DOC>\n<DOCNO>A</DOCNO>\n<DOC>\n<DOCNO>B</DOCNO>\n</DOC>\n", 3),                 # missing </DOC>
    ("<DOC>\n<DOCNO>A</DOCNO>\n<TEXT>cut short\n", 1),                                 # end of file inside a doc
])
def test_trec_malformed_documents(tmp_path, text, line):
    path = write(tmp_path / "docs.sgml", text)
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_trec_documents(path))
    assert_error_at(excinfo, path, line)


TREC_TOPICS = """\
<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.

</top>

<top>
<num> Number: 051
<title> Topic: Airbus Subsidies
<desc> Description:
Document will discuss government assistance to Airbus.
</top>
"""


def test_trec_topics_fields(tmp_path):
    path = write(tmp_path / "topics.301-350", TREC_TOPICS)
    topics = list(iter_trec_topics(path))
    assert [t.qid for t in topics] == ["301", "51"]
    assert topics[0].fields == {
        "title": "International Organized Crime",
        "desc": "Identify organizations that participate in international criminal activity.",
        "narr": "A relevant document must as a minimum identify the organization.",
    }
    assert topics[1].fields == {"title": "Airbus Subsidies",
                                "desc": "Document will discuss government assistance to Airbus."}


@pytest.mark.parametrize("text, line", [
    ("<top>\n<num> Number: 301\n<title> t\n</top>\n<top>\n<num> Number:\n<title> t\n</top>\n", 6),  # empty number
    ("<top>\n<title> no number\n</top>\n", 1),                                                  # no <num>
    ("<top>\n<num> Number: 301\n<title> t\n<top>\n", 4),                                        # missing </top>
    ("<top>\n<num> Number: 301\n<title> t\n", 1),                                               # end of file
])
def test_trec_malformed_topics(tmp_path, text, line):
    path = write(tmp_path / "topics", text)
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_trec_topics(path))
    assert_error_at(excinfo, path, line)


def test_trec_collection_end_to_end(tmp_path):
    """A TREC entry with default query sets and doc_fields, through the dispatching API."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ft.gz").write_bytes(gzip.compress(TREC_DOCS_A.encode()))
    topics = write(tmp_path / "topics.txt", TREC_TOPICS)
    qrels = write(tmp_path / "qrels.txt", "301 0 FT911-1 1\n51 0 LA010189-0001 0\n")
    spec = CollectionSpec.from_dict("robust-mini", {
        "format": "trec", "files": {"docs": "docs", "queries": "topics.txt", "qrels": "qrels.txt"},
        "doc_fields": ["headline", "text"]})
    files = {"docs": docs, "queries": topics, "qrels": qrels}
    # desc: the verbose queries of the term-dependence papers
    assert set(spec.querysets) == {"title", "desc", "title_desc", "title_desc_narr"}
    first = next(iter_documents(spec, files))
    assert document_text(spec, first).startswith("FT  14 MAY 91 / Markets & money\nFirst paragraph.")
    queries = list(iter_queries(spec, files))
    assert query_text(spec, queries[0], "title") == "International Organized Crime"
    assert query_text(spec, queries[1], "title_desc_narr") == (
        "Airbus Subsidies\nDocument will discuss government assistance to Airbus.")
    assert list(iter_qrels(spec, files)) == [Qrel("301", "FT911-1", 1), Qrel("51", "LA010189-0001", 0)]

    out = tmp_path / "topics" / "title_desc.parquet"
    write_topics(spec, files, "title_desc", out)
    table = pq.read_table(out)
    assert table.column("qid").to_pylist() == ["301", "51"]
    assert table.column("text").to_pylist()[0].startswith("International Organized Crime\nIdentify")
    write_topics(spec, files, "desc", tmp_path / "topics" / "desc.parquet")
    assert pq.read_table(tmp_path / "topics" / "desc.parquet").column("text").to_pylist()[0].startswith("Identify")
    with pytest.raises(ConfigError, match="no query set 'narr'"):
        write_topics(spec, files, "narr", tmp_path / "x.parquet")


def test_trec_default_doc_fields_leave_out_identifiers(tmp_path):
    path = write(tmp_path / "d", "<DOC>\n<DOCNO>A</DOCNO>\n<DOCID>123</DOCID>\n<TEXT>words</TEXT>\n</DOC>\n")
    spec = CollectionSpec.from_dict("t", {"format": "trec", "files": {"docs": "d"}})
    doc = next(iter_documents(spec, {"docs": path}))
    assert document_text(spec, doc) == "words"


# --- JSONL / TSV -------------------------------------------------------------------------------

def test_jsonl_documents_and_queries(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps(r) for r in [
        {"docno": "d1", "title": "T1", "text": "body one"},
        {"id": 7, "text": "body two", "year": 1999, "tags": ["a", "b"], "meta": {"x": 1}, "draft": None},
        {"doc_id": "d3", "contents": "body three"},
    ]) + "\n\n")
    assert list(iter_local_documents(docs, "jsonl")) == [
        Document("d1", {"title": "T1", "text": "body one"}),
        Document("7", {"text": "body two", "year": "1999", "tags": "a\nb"}),
        Document("d3", {"contents": "body three"}),
    ]
    custom = tmp_path / "custom.jsonl"
    custom.write_text('{"pid": "p1", "id": "not me", "text": "x"}\n')
    assert list(iter_local_documents(custom, "jsonl", id_field="pid")) == [
        Document("p1", {"id": "not me", "text": "x"})]

    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"qid": "001", "text": "first"}\n{"query_id": "q2", "title": "t", "text": "second"}\n')
    assert list(iter_local_queries(queries, "jsonl")) == [Query("1", {"text": "first"}),
                                                          Query("q2", {"title": "t", "text": "second"})]


@pytest.mark.parametrize("line", ['{"docno": "d2", "text": ', '["d2", "text"]', '{"text": "no id"}',
                                  '{"docno": "", "text": "empty id"}'])
def test_malformed_jsonl_lines(tmp_path, line):
    path = write(tmp_path / "docs.jsonl", '{"docno": "d1", "text": "ok"}\n' + line + "\n")
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_local_documents(path, "jsonl"))
    assert_error_at(excinfo, path, 2)


def test_tsv_documents_and_queries(tmp_path):
    docs = write(tmp_path / "docs.tsv", "docno\ttext\nd1\tfirst text\nd2\ttext\twith a tab\nd3\t\n")
    assert list(iter_local_documents(docs, "tsv")) == [
        Document("d1", {"text": "first text"}), Document("d2", {"text": "text\twith a tab"}),
        Document("d3", {"text": ""})]
    queries = write(tmp_path / "queries.tsv", "01\tfirst query\n2\tsecond\n", "\r\n")
    assert list(iter_local_queries(queries, "tsv")) == [Query("1", {"text": "first query"}),
                                                        Query("2", {"text": "second"})]
    bad = write(tmp_path / "bad.tsv", "d1\tok\nd2 no tab here\n")
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_local_documents(bad, "tsv"))
    assert_error_at(excinfo, bad, 2)


def test_local_collection_with_trec_topics_and_qrels(tmp_path):
    docs = write(tmp_path / "docs.tsv", "d1\tone\nd2\ttwo\n")
    topics = write(tmp_path / "topics.txt", TREC_TOPICS)
    qrels = write(tmp_path / "qrels.txt", "301 0 d1 1\n")
    spec = CollectionSpec.from_dict("mini", {"format": "tsv", "queries_format": "trec",
                                             "files": {"docs": "docs.tsv", "queries": "topics.txt",
                                                       "qrels": "qrels.txt"}})
    files = {"docs": docs, "queries": topics, "qrels": qrels}
    assert [document_text(spec, d) for d in iter_documents(spec, files)] == ["one", "two"]
    assert [q.qid for q in iter_queries(spec, files)] == ["301", "51"]
    assert list(iter_qrels(spec, files)) == [Qrel("301", "d1", 1)]


# --- ir_datasets -------------------------------------------------------------------------------

def test_ir_datasets_records_are_mapped(monkeypatch):
    """ir_datasets is replaced by a stub: the mapping is what is tested, not the download."""
    Doc = namedtuple("Doc", "doc_id title text spans")
    Topic = namedtuple("Topic", "query_id title description")
    TrecQrel = namedtuple("TrecQrel", "query_id doc_id relevance iteration")

    class Dataset:
        def docs_iter(self):
            return iter([Doc("D1", "a title", "a text", ((0, 1),)), Doc("D2", "", "only text", ())])

        def queries_iter(self):
            return iter([Topic("001", "q title", "q desc")])

        def qrels_iter(self):
            return iter([TrecQrel("001", "D1", 2, "0"), TrecQrel("001", "D2", -1, "0")])

    loaded = []
    fake = types.ModuleType("ir_datasets")
    fake.load = lambda dataset_id: loaded.append(dataset_id) or Dataset()
    monkeypatch.setitem(sys.modules, "ir_datasets", fake)

    spec = CollectionSpec.from_dict("irds", {"format": "ir_datasets", "irds_id": "some/dataset",
                                             "querysets": {"title": ["title"], "both": ["title", "description"]},
                                             "relevance": {2: 2, 1: 1, 0: 0, -1: 0}})
    docs = list(iter_documents(spec, {}))
    assert docs == [Document("D1", {"title": "a title", "text": "a text"}), Document("D2", {"title": "", "text": "only text"})]
    assert [document_text(spec, d) for d in docs] == ["a title\na text", "only text"]
    queries = list(iter_queries(spec, {}))
    assert queries == [Query("1", {"title": "q title", "description": "q desc"})]
    assert query_text(spec, queries[0], "both") == "q title\nq desc"
    assert list(iter_qrels(spec, {})) == [Qrel("1", "D1", 2), Qrel("1", "D2", 0)]
    assert set(loaded) == {"some/dataset"}


# --- registry ----------------------------------------------------------------------------------

def test_registry_errors_name_the_problem(tmp_path):
    schema = REPO / "workflow" / "schemas" / "collections.schema.yaml"
    base = {"format": "smart", "files": {"docs": "a.all", "queries": "a.qry", "qrels": "a.rel"},
            "qrels_format": "smart"}

    def registry_with(entry):
        path = tmp_path / "collections.yaml"
        path.write_text(json.dumps({"mini": entry}))  # JSON is YAML
        return load_registry(path, schema_path=schema)

    assert registry_with(base)["mini"].querysets == {"text": ("W",)}
    with pytest.raises(ConfigError, match="mini.*colour"):
        registry_with({**base, "colour": "red"})  # additionalProperties: false
    with pytest.raises(ConfigError, match="mini/format"):
        registry_with({**base, "format": "xml"})
    with pytest.raises(ConfigError, match="which 'files' does not use"):
        registry_with({**base, "sha256": {"b.all": "0" * 64}})
    with pytest.raises(ConfigError, match="query_id 'position'"):
        registry_with({**base, "format": "npl", "qrels_format": "npl", "query_id": "position"})
    with pytest.raises(ConfigError, match="irds_id"):
        registry_with({"format": "ir_datasets"})


# --- silently wrong input made loud (BOM, repeated ids) and outputs others can read --------------

def test_a_byte_order_mark_does_not_become_part_of_the_first_id(tmp_path):
    docs = tmp_path / "docs.tsv"
    docs.write_bytes("\ufeffd1\tfirst\nd2\tsecond\n".encode("utf-8"))
    assert [d.docno for d in iter_local_documents(docs, "tsv")] == ["d1", "d2"]
    queries = tmp_path / "queries.tsv"
    queries.write_bytes("\ufeff1\tfirst query\n".encode("utf-8"))
    assert [q.qid for q in iter_local_queries(queries, "tsv")] == ["1"]


def _local_collection(tmp_path, docs_text, queries_text):
    docs = write(tmp_path / "docs.tsv", docs_text)
    queries = write(tmp_path / "queries.tsv", queries_text)
    qrels = write(tmp_path / "qrels.txt", "1 0 d1 1\n")
    spec = CollectionSpec.from_dict("mini", {"format": "tsv", "files": {"docs": "docs.tsv", "queries": "queries.tsv",
                                                                        "qrels": "qrels.txt"}})
    return spec, {"docs": docs, "queries": queries, "qrels": qrels}


def test_a_repeated_query_id_is_an_error_naming_the_file(tmp_path):
    spec, files = _local_collection(tmp_path, "d1\tone\n", "1\tfirst\n2\tsecond\n1\tagain\n")
    with pytest.raises(InputFormatError, match=r"queries\.tsv:3: .*query '1' is also on line 1"):
        write_topics(spec, files, "text", tmp_path / "topics.parquet")
    assert not (tmp_path / "topics.parquet").exists()


def test_a_repeated_document_id_is_an_error_naming_the_file(tmp_path):
    spec, files = _local_collection(tmp_path, "d1\tone\nd2\ttwo\nd1\tthree\n", "1\tfirst\n")
    with pytest.raises(InputFormatError, match=r"docs\.tsv:3: .*document 'd1' is also on line 1"):
        write_document_shards(spec, files, tmp_path / "docs", 2)
    assert not (tmp_path / "docs").exists()


def test_results_are_readable_as_plain_files_are(tmp_path):
    spec, files = _local_collection(tmp_path, "d1\tone\nd2\ttwo\n", "1\tfirst\n")
    old = os.umask(0o022)
    try:
        write_document_shards(spec, files, tmp_path / "docs", 2)
        write_topics(spec, files, "text", tmp_path / "topics.parquet")
        write_text("x", tmp_path / "table.md")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "docs").stat().st_mode) == 0o755
    for path in [*(tmp_path / "docs").glob("*.parquet"), tmp_path / "topics.parquet", tmp_path / "table.md"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
