"""HTML collections (format html, Anserini's HtmlCollection) and the registry keys Anserini's CACM needs.

- Text extraction against what Jsoup's ``Element.text()`` gives (its documented rules: text nodes
  in order, entities decoded, no markup, comments or script/style data, a blank between blocks and
  at ``<br>``, blanks collapsed outside ``<pre>``), docnos as Anserini's ``stripHtmlExtension``
  makes them, tar archives and directories, and errors naming the archive and the member.
- ``file_mirrors`` (a file in another collection's mirror folder), ``package_files`` (a file
  shipped in irgrid's package data), ``qrels_docno`` (the docno a qrels id stands for), and an
  archive url that is the registry file itself.
- The packaged CACM topics (cacm_anserini): Anserini's topics.cacm.txt, checked against topic
  texts written out from the published file, and against the query set the registry derives from
  CACM's query.text.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from pathlib import Path

import pytest
import yaml
from common import REGISTRY, REPO

from irgrid.analysis import Analyzer
from irgrid.collections import (
    CollectionNotAvailable,
    CollectionSpec,
    iter_documents,
    iter_qrels,
    iter_queries,
    load_registry,
    query_text,
    resolve_files,
    sources,
    write_document_shards,
    write_qrels,
    write_topics,
)
from irgrid.collections.html_files import html_docno, html_text, iter_html_documents
from irgrid.collections.provenance import step_fields
from irgrid.collections.sources import ChecksumError
from irgrid.collections.spec import PACKAGE_DATA_DIR
from irgrid.collections.trec import iter_trec_topics
from irgrid.errors import ConfigError, InputFormatError


def make_tar(path: Path, members: dict[str, bytes], mode: str = "w:gz", directories=(), links=()) -> Path:
    """A tar archive holding ``members`` in the given order (plus directory and symlink entries)."""
    with tarfile.open(path, mode) as archive:
        for name in directories:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return path


# --------------------------------------------------------------------------- text as Jsoup's text() gives it

@pytest.mark.parametrize("markup, expected", [
    # Anserini's CACM pages: <html><pre> and the record; <pre> keeps its line breaks (trimmed at the ends)
    ("<html>\n<pre>\n\n\nPreliminary Report\n\nCACM December, 1958\n</pre>\n</html>\n",
     "Preliminary Report\n\nCACM December, 1958"),
    # entities decoded; a '&' that starts no entity is text
    ("<p>a &amp; b &lt;c&gt; &#65;&#x42; M & N</p>", "a & b <c> AB M & N"),
    # a '<' that cannot open a tag is text (CACM abstracts: "1 <= m <= n", "m>n", "10^8 < 2^27")
    ("<pre>1 <= m <= n, m>n, 10^8 < 2^27, (0<=x<1)</pre>", "1 <= m <= n, m>n, 10^8 < 2^27, (0<=x<1)"),
    # the title is text; script and style data and comments are not
    ("<html><head><title>T</title><style>p {}</style><script>var x = '<b>';</script></head>"
     "<body><!-- note -->body</body></html>", "T body"),
    # inline elements join their text; block elements and <br> separate it
    ("foo<b>bar</b><i>baz</i>", "foobarbaz"),
    ("foo<p>bar</p>baz<div>qux</div><br>end<br/>x", "foo bar baz qux end x"),
    # blanks collapsed outside <pre>, kept inside
    ("<p>a \n\t b</p><pre>c \n  d</pre>", "a b c \n  d"),
    ("", ""),
])
def test_html_text_follows_jsoup_text_rules(markup, expected):
    assert html_text(markup) == expected


@pytest.mark.parametrize("name, docno", [
    ("CACM-0001.html", "CACM-0001"),  # Anserini's CACM pages
    ("cacm/CACM-3204.html", "CACM-3204"),  # a member's directory is not part of the docno
    ("page.htm", "page.htm"),  # only a final '.html' is removed
    ("page.HTML", "page.HTML"),
    ("a.html.txt", "a.html.txt"),
])
def test_docno_is_the_base_name_without_a_final_html(name, docno):
    assert html_docno(name) == docno


# --------------------------------------------------------------------------- archives, files, directories

def test_a_tar_archive_gives_its_pages_in_archive_order(tmp_path):
    archive = make_tar(tmp_path / "pages.tar.gz", {
        "pages/B.html": b"<html><pre>\nsecond page\n</pre></html>",
        "pages/A.html": b"<html><pre>\nfirst &amp; only\n</pre></html>",
        "pages/notes.txt": b"plain text",
    }, directories=["pages"])
    documents = list(iter_html_documents(archive))
    assert [(d.docno, d.fields) for d in documents] == [
        ("B", {"text": "second page"}), ("A", {"text": "first & only"}), ("notes.txt", {"text": "plain text"})]
    assert documents[1].source == f"{archive}[pages/A.html]" and documents[1].line == 1


def test_a_directory_holds_pages_and_archives_read_in_sorted_order(tmp_path):
    (tmp_path / "c.html").write_bytes(b"<p>three</p>")
    (tmp_path / "a.html").write_bytes(gzip.compress(b"<p>one</p>"))  # compressed pages are read as such
    make_tar(tmp_path / "b.tar", {"b1.html": b"two", "b2.html": b"two more"}, mode="w")
    documents = list(iter_html_documents(tmp_path))
    assert [(d.docno, d.fields["text"]) for d in documents] == [
        ("a", "one"), ("b1", "two"), ("b2", "two more"), ("c", "three")]


def test_a_member_that_is_not_utf8_is_an_error_at_the_member_and_line(tmp_path):
    archive = make_tar(tmp_path / "pages.tar.gz", {"ok.html": b"fine", "bad.html": b"<pre>\nline two\nbad \xe9\n</pre>"})
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_html_documents(archive))
    assert excinfo.value.path == f"{archive}[bad.html]"
    assert excinfo.value.line == 3
    assert str(excinfo.value).startswith(f"{archive}[bad.html]:3: expected text encoded as utf-8")


def test_a_link_member_is_an_error_naming_it(tmp_path):
    archive = make_tar(tmp_path / "pages.tar", {"a.html": b"a"}, mode="w", links=[("b.html", "a.html")])
    with pytest.raises(InputFormatError, match=r"pages\.tar\[b\.html\]: expected a regular file"):
        list(iter_html_documents(archive))


def test_a_file_name_with_a_blank_is_an_error(tmp_path):
    archive = make_tar(tmp_path / "pages.tar", {"a b.html": b"a"}, mode="w")
    with pytest.raises(InputFormatError, match=r"\[a b\.html\]:1: expected a file name \(the docno\) without blanks"):
        list(iter_html_documents(archive))


def test_an_archive_cut_short_is_an_error_naming_it(tmp_path):
    whole = make_tar(tmp_path / "whole.tar.gz", {f"p{i}.html": bytes(range(32, 127)) * 40 for i in range(20)})
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_html_documents(cut))
    assert excinfo.value.path == str(cut) and excinfo.value.line is None
    assert "expected a complete tar archive" in str(excinfo.value)


def test_an_html_collection_end_to_end(tmp_path):
    """Pages in a tarball, TREC topics and SMART qrels numbering the pages: shards, topics, qrels."""
    make_tar(tmp_path / "pages.tar.gz", {"DOC-0007.html": b"<pre>seven</pre>", "DOC-0012.html": b"<pre>twelve</pre>"})
    (tmp_path / "topics.txt").write_text("<top>\n<num> Number: 1\n<title> seven\n</top>\n")
    (tmp_path / "qrels.text").write_text("01 0007  0 0\n01 0012  0 0\n")
    spec = CollectionSpec.from_dict("pages", {
        "format": "html", "files": {"docs": "pages.tar.gz", "queries": "topics.txt", "qrels": "qrels.text"},
        "qrels_format": "smart", "qrels_docno": "DOC-{docno:0>4}"})
    assert spec.queries_format == "trec"  # html's default: TREC topics
    files = {role: tmp_path / name for role, name in spec.files.items()}
    write_document_shards(spec, files, tmp_path / "docs", 1)
    write_topics(spec, files, "title", tmp_path / "topics.parquet")
    write_qrels(spec, files, tmp_path / "qrels.parquet")
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "docs" / "part-0000.parquet").to_pydict() == {
        "docno": ["DOC-0007", "DOC-0012"], "text": ["seven", "twelve"]}
    assert pq.read_table(tmp_path / "qrels.parquet").to_pydict()["docno"] == ["DOC-0007", "DOC-0012"]


# --------------------------------------------------------------------------- registry keys

BASE = {"format": "html", "files": {"docs": "pages.tar.gz", "queries": "t.txt", "qrels": "qrels.text"},
        "qrels_format": "smart"}


@pytest.mark.parametrize("template, raw, docno", [
    ("CACM-{docno}", "0046", "CACM-46"),  # the SMART reader drops leading zeros; Anserini's qrels.cacm.txt too
    ("CACM-{docno:0>4}", "0046", "CACM-0046"),  # the page's own name
    ("CACM-{docno:0>4}", "1410", "CACM-1410"),
])
def test_qrels_docno_writes_each_judged_id_into_the_template(tmp_path, template, raw, docno):
    (tmp_path / "qrels.text").write_text(f"01 {raw}  0 0\n")
    spec = CollectionSpec.from_dict("c", {**BASE, "qrels_docno": template})
    assert [q.docno for q in iter_qrels(spec, {"qrels": tmp_path / "qrels.text"})] == [docno]


@pytest.mark.parametrize("extra, message", [
    ({"qrels_docno": "CACM-{id}"}, "qrels_docno must be a template naming only {docno}"),
    ({"qrels_docno": "CACM-{docno:d}"}, "qrels_docno must be a template"),  # the id is text, not a number
    ({"qrels_docno": "CACM-{{docno}}"}, "does not use {docno}"),
    ({"qrels_docno": "CACM {docno}"}, "docnos with blanks"),
    ({"file_mirrors": {"other.txt": "cacm"}}, "'file_mirrors' lists \\['other.txt'\\]"),
    ({"package_files": ["other.txt"]}, "'package_files' lists \\['other.txt'\\]"),
    ({"file_mirrors": {"t.txt": "x"}, "package_files": ["t.txt"]}, "cannot be both"),
])
def test_registry_key_errors_name_the_problem(extra, message):
    with pytest.raises(ConfigError, match=message):
        CollectionSpec.from_dict("c", {**BASE, **extra})


def test_new_keys_stay_out_of_entries_that_do_not_use_them():
    """An entry without them has the same params and qrels provenance as before they existed."""
    plain = CollectionSpec.from_dict("c", BASE)
    assert not {"file_mirrors", "package_files", "qrels_docno"} & set(plain.to_dict())
    assert "qrels_docno" not in step_fields(plain, "qrels")
    templated = CollectionSpec.from_dict("c", {**BASE, "qrels_docno": "P-{docno}"})
    assert step_fields(templated, "qrels")["qrels_docno"] == "P-{docno}"  # a new template remakes the qrels


@pytest.fixture
def no_mirror_env(monkeypatch):
    monkeypatch.delenv(sources.MIRROR_ENV, raising=False)
    sources._verified.clear()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_file_of_another_mirror_folder_is_found_there(tmp_path, no_mirror_env):
    root = tmp_path / "mirror"
    (root / "irgrid-test-pages").mkdir(parents=True)
    (root / "irgrid-test-other").mkdir()
    make_tar(root / "irgrid-test-pages" / "pages.tar.gz", {"a.html": b"a"})
    (root / "irgrid-test-other" / "qrels.text").write_text("01 0001 0 0\n")
    entry = {"format": "html", "mirror": "irgrid-test-pages", "qrels_format": "smart",
             "files": {"docs": "pages.tar.gz", "qrels": "qrels.text"},
             "file_mirrors": {"qrels.text": "irgrid-test-other"},
             "sha256": {"qrels.text": sha(b"01 0001 0 0\n")}}
    spec = CollectionSpec.from_dict("pages", entry)
    files = resolve_files(spec, mirror=root, resources_dir=tmp_path / "res", download=False)
    assert files == {"docs": root / "irgrid-test-pages" / "pages.tar.gz",
                     "qrels": root / "irgrid-test-other" / "qrels.text"}
    # the file is looked for in its folder only, and the message says where it was missing
    (root / "irgrid-test-other" / "qrels.text").rename(root / "irgrid-test-pages" / "qrels.text")
    with pytest.raises(CollectionNotAvailable, match="missing irgrid-test-other/qrels.text"):
        resolve_files(spec, mirror=root, resources_dir=tmp_path / "res", download=False)


def test_a_package_file_is_read_from_the_package_data_and_checked(tmp_path, no_mirror_env):
    name = "topics.cacm-anserini.txt"
    data = (PACKAGE_DATA_DIR / name).read_bytes()
    root = tmp_path / "mirror"
    (root / "irgrid-test-pages").mkdir(parents=True)
    make_tar(root / "irgrid-test-pages" / "pages.tar.gz", {"a.html": b"a"})
    entry = {"format": "html", "mirror": "irgrid-test-pages", "files": {"docs": "pages.tar.gz", "queries": name},
             "package_files": [name], "sha256": {name: sha(data)}}
    files = resolve_files(CollectionSpec.from_dict("pages", entry), mirror=root, resources_dir=tmp_path / "res")
    assert files["queries"] == PACKAGE_DATA_DIR / name
    wrong = {**entry, "sha256": {name: "0" * 64}}
    with pytest.raises(ChecksumError, match=name):
        resolve_files(CollectionSpec.from_dict("pages", wrong), mirror=root, resources_dir=tmp_path / "res")
    missing = {**entry, "files": {"docs": "pages.tar.gz", "queries": "nothing.txt"}, "package_files": ["nothing.txt"],
               "sha256": {}}
    with pytest.raises(ConfigError, match="package data has no such file"):
        resolve_files(CollectionSpec.from_dict("pages", missing), mirror=root, resources_dir=tmp_path / "res")


def test_an_archive_url_with_the_files_own_name_is_downloaded_as_it_is(tmp_path, no_mirror_env):
    (tmp_path / "upstream").mkdir()
    upstream = make_tar(tmp_path / "upstream" / "pages.tar.gz", {"a.html": b"<p>a</p>"})
    data = upstream.read_bytes()
    spec = CollectionSpec.from_dict("pages", {
        "format": "html", "mirror": "irgrid-test-nowhere", "files": {"docs": "pages.tar.gz"},
        "sha256": {"pages.tar.gz": sha(data)}, "url": {"pages.tar.gz": upstream.as_uri()}})
    files = resolve_files(spec, mirror=tmp_path / "empty", resources_dir=tmp_path / "res")
    assert files["docs"].read_bytes() == data
    assert [d.docno for d in iter_documents(spec, files)] == ["a"]


# --------------------------------------------------------------------------- the packaged CACM topics

# Texts of three topics as Anserini's topics.cacm.txt holds them (castorini/anserini,
# topics-and-qrels/topics.cacm.txt, sha256 1dc7b94f...; typed from that file, blanks collapsed).
# Against CACM's query.text, 34 lacks the line "article by Heindel, L.E. in J. ACM, Vol. 18, 533-548.
# I would like to find" and cuts the author's initials; 40 lacks "Pascal, CLU, Alphard, Russell, Ada,
# ALGOL 68, EL1. List any other languages"; 41 keeps the second line of its .N note.
ANSERINI_TOPIC_TEXT = {
    "34": "Currently interested in isolation of root of polynomial; there is an old more recent material. "
          "Heindel, L.",
    "40": "List all articles dealing with data types in the following languages: that are referenced frequently "
          "in papers on the above languages (e.g. catch any languages with interesting type structures that I "
          "might have missed).",
    "41": "Theory of distributed systems and databases. Subtopics of special interest include reliability and "
          "fault-tolerance in distributed systems, atomicity, distributed transactions, synchronization "
          "algorithms, resource allocation; lower bounds and models for asynchronous parallel systems. Also "
          "theory of communicating processes and protocols. P. Box 2158 Yale Station, New Haven, Conn. 06520",
}
PACKAGED_TOPICS = PACKAGE_DATA_DIR / "topics.cacm-anserini.txt"


def lucene_analyzer() -> Analyzer:
    with open(REPO / "config" / "config.yaml", encoding="utf-8") as handle:
        return Analyzer.from_dict(yaml.safe_load(handle)["analyzers"]["lucene"])


def test_packaged_cacm_topics_are_anserinis():
    spec = load_registry(REGISTRY)["cacm_anserini"]
    assert hashlib.sha256(PACKAGED_TOPICS.read_bytes()).hexdigest() == spec.sha256["topics.cacm-anserini.txt"]
    topics = {q.qid: query_text(spec, q, "anserini") for q in iter_trec_topics(PACKAGED_TOPICS)}
    assert list(topics) == [str(i) for i in range(1, 65)]
    for qid, text in ANSERINI_TOPIC_TEXT.items():
        assert " ".join(topics[qid].split()) == text
    # topic 1 as query.text and Anserini's file both have it
    assert " ".join(topics["1"].split()) == ("What articles exist which deal with TSS (Time Sharing System), an "
                                             "operating system for IBM computers?")


@pytest.mark.mirror
def test_anserinis_topics_differ_from_the_registrys_cacm_text_authors():
    """Why cacm_anserini ships its topics: CACM's query.text with its authors (the cacm entry's
    text_authors) is not Anserini's topic file, not even after analysis."""
    registry = load_registry(REGISTRY)
    spec = registry["cacm"]
    try:
        files = resolve_files(spec, download=False)
    except CollectionNotAvailable as error:
        pytest.skip(f"collections mirror not available: {error}")
    analyzer = lucene_analyzer()
    derived = {q.qid: analyzer(query_text(spec, q, "text_authors")) for q in iter_queries(spec, files)}
    anserini = {q.qid: analyzer(query_text(registry["cacm_anserini"], q, "anserini"))
                for q in iter_trec_topics(PACKAGED_TOPICS)}
    assert set(derived) == set(anserini)
    differing = {qid for qid in derived if derived[qid] != anserini[qid]}
    assert set(ANSERINI_TOPIC_TEXT) <= differing  # the three written out above, among others
    for qid, text in ANSERINI_TOPIC_TEXT.items():
        assert anserini[qid] == analyzer(text)
    assert "heindel" in derived["34"] and derived["34"].count("heindel") == 2  # query.text names him twice
