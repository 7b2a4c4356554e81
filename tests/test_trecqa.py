"""TrecQA answer-sentence files (``format: trecqa``): hand-written files, bad input, and the mirror.

The tests marked ``mirror`` need ../shared/collections/trecqa (or $IRGRID_MIRROR) and are
skipped without it. Their expected numbers are the published ones (MANIFEST.md), not this
reader's output.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from common import REGISTRY, REPO

from irgrid.collections import (
    CollectionNotAvailable,
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
    resolve_files,
    write_document_shards,
    write_qrels,
    write_topics,
)
from irgrid.collections.dependency_parse import Parse
from irgrid.collections.trecqa import (
    SentenceDocnos,
    SplitStatistics,
    iter_trecqa_collection,
    iter_trecqa_pairs,
    iter_trecqa_parses,
    sentence_docno,
    trecqa_statistics,
)
from irgrid.errors import ConfigError, InputFormatError

SCHEMA = REPO / "workflow" / "schemas" / "collections.schema.yaml"


def element(kind: str, text: str, heads: list[int] | None = None, answers: tuple[str, str] | None = None) -> str:
    """An element of ``text``'s space-separated tokens; heads default to a chain onto token 1 (the root)."""
    tokens = text.split(" ") if text else []
    n = len(tokens)
    if heads is None:
        heads = [0] + [1] * (n - 1) if n else []
    labels = ["ROOT"] + ["DEP"] * (n - 1) if n else []
    lines = [f"<{kind}>", "\t".join(tokens), "\t".join(["NN"] * n), "\t".join(labels), "\t".join(str(h) for h in heads),
             "\t".join(["-"] * n)]
    if answers is not None:
        lines += list(answers)
    return "\n".join([*lines, f"</{kind}>"])


def qapairs(qid: str, *elements: str) -> str:
    return "\n".join([f"<QApairs id='{qid}'>", *elements, "</QApairs>"])


def document(*blocks: str) -> str:
    return "\n".join(blocks) + "\n"


SHAKESPEARE = "Shakespeare wrote Hamlet ."
PLAY = "Hamlet is a play ."
MARLOWE = "Marlowe wrote plays & poems ."  # a raw '&': not XML
PARIS = "Paris is in France ."

TRAIN = document(
    qapairs("1",
            element("question", "who wrote Hamlet ?", heads=[2, 0, 2, 2]),
            element("positive", SHAKESPEARE, heads=[2, 0, 2, 2], answers=("Shakespeare\t", "1\t")),
            element("negative", PLAY),
            element("negative", MARLOWE)),
    "",  # blank lines between QApairs are skipped
    qapairs("02", element("question", "where is Paris ?")),  # no candidates: a query with no qrels
)
DEV = document(
    qapairs("2.1",
            element("question", "what is Hamlet ?"),
            element("positive", PLAY),  # also a candidate in TRAIN: one document
            element("positive", PARIS)),  # only positives: kept
)


def trecqa_collection(tmp_path: Path, train: str = TRAIN, dev: str = DEV, **entry) -> tuple[CollectionSpec, dict[str, Path]]:
    files = {"train": tmp_path / "TRAIN.xml", "dev": tmp_path / "DEV.xml"}
    files["train"].write_text(train, encoding="utf-8")
    files["dev"].write_text(dev, encoding="utf-8")
    spec = CollectionSpec.from_dict("mini", {"format": "trecqa", "files": {"train": "TRAIN.xml", "dev": "DEV.xml"},
                                             **entry})
    return spec, files


def sha1_docno(text: str) -> str:
    return "s" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


# --- records -----------------------------------------------------------------------------------

def test_spec_defaults(tmp_path):
    spec, _ = trecqa_collection(tmp_path)
    assert spec.queries_format == "trecqa" and spec.qrels_format == "trecqa"
    assert spec.querysets == {"train": ("train",), "dev": ("dev",)}


def test_documents_are_the_distinct_candidates_of_all_files(tmp_path):
    spec, files = trecqa_collection(tmp_path)
    docs = list(iter_documents(spec, files))
    assert docs == [Document(sha1_docno(text), {"sentence": text}) for text in (SHAKESPEARE, PLAY, MARLOWE, PARIS)]
    assert sentence_docno(PLAY) == sha1_docno(PLAY)
    assert [document_text(spec, d) for d in docs] == [SHAKESPEARE, PLAY, MARLOWE, PARIS]


def test_queries_carry_their_file_role(tmp_path):
    spec, files = trecqa_collection(tmp_path)
    queries = list(iter_queries(spec, files))
    assert queries == [Query("1", {"train": "who wrote Hamlet ?"}), Query("2", {"train": "where is Paris ?"}),
                       Query("2.1", {"dev": "what is Hamlet ?"})]
    assert query_text(spec, queries[2], "dev") == "what is Hamlet ?"


def test_every_candidate_is_judged(tmp_path):
    spec, files = trecqa_collection(tmp_path)
    assert list(iter_qrels(spec, files)) == [
        Qrel("1", sha1_docno(SHAKESPEARE), 1), Qrel("1", sha1_docno(PLAY), 0), Qrel("1", sha1_docno(MARLOWE), 0),
        # question 2 has no candidates: no qrels
        Qrel("2.1", sha1_docno(PLAY), 1), Qrel("2.1", sha1_docno(PARIS), 1),
    ]
    graded, _ = trecqa_collection(tmp_path, relevance={1: 2, 0: 0})
    assert [q.relevance for q in iter_qrels(graded, files)] == [2, 0, 0, 2, 2]
    partial, _ = trecqa_collection(tmp_path, relevance={1: 2})
    with pytest.raises(InputFormatError, match=r"TRAIN\.xml:\d+: expected a relevance value listed"):
        list(iter_qrels(partial, files))


def test_docnos_do_not_depend_on_label_order(tmp_path):
    candidates = [("positive", SHAKESPEARE), ("negative", PLAY), ("negative", MARLOWE), ("positive", PARIS)]
    positives_first = document(qapairs("7", element("question", "a b ?"),
                                       *(element(k, t) for k, t in sorted(candidates, key=lambda c: c[0] != "positive"))))
    negatives_first = document(qapairs("7", element("question", "a b ?"),
                                       *(element(k, t) for k, t in sorted(candidates, key=lambda c: c[0] != "negative"))))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    spec_a, files_a = trecqa_collection(tmp_path / "a", train=positives_first, dev=DEV)
    spec_b, files_b = trecqa_collection(tmp_path / "b", train=negatives_first, dev=DEV)
    docs_a, docs_b = list(iter_documents(spec_a, files_a)), list(iter_documents(spec_b, files_b))
    assert [d.docno for d in docs_a] != [d.docno for d in docs_b]  # the order differs...
    assert sorted(docs_a) == sorted(docs_b)  # ...the documents and their ids do not
    assert sorted(iter_qrels(spec_a, files_a)) == sorted(iter_qrels(spec_b, files_b))


def test_a_repeated_candidate_is_judged_once_and_positive_wins(tmp_path):
    train = document(qapairs("1", element("question", "who wrote Hamlet ?"),
                             element("negative", SHAKESPEARE), element("negative", PLAY),
                             element("positive", SHAKESPEARE), element("negative", PLAY)))
    spec, files = trecqa_collection(tmp_path, train=train)
    assert list(iter_qrels(spec, files))[:2] == [Qrel("1", sha1_docno(SHAKESPEARE), 1), Qrel("1", sha1_docno(PLAY), 0)]
    assert [d.docno for d in iter_documents(spec, files)] == [sha1_docno(t) for t in (SHAKESPEARE, PLAY, PARIS)]
    stats = trecqa_statistics(files)
    assert stats["train"] == SplitStatistics(questions=1, pairs=4, positives=1, negatives=3, with_both=1, repeated=2,
                                             conflicting=1)
    assert stats["dev"] == SplitStatistics(1, 2, 2, 0, 0, 0, 0)


def test_empty_candidate_is_a_document_with_empty_text(tmp_path):
    train = document(qapairs("1", element("question", "who ?"), element("negative", ""), element("positive", PLAY)))
    assert "<negative>\n\n\n\n\n\n</negative>" in train
    spec, files = trecqa_collection(tmp_path, train=train)
    docs = list(iter_documents(spec, files))
    assert docs[0] == Document("s" + hashlib.sha1(b"").hexdigest()[:16], {"sentence": ""})
    assert docs[0].docno == "sda39a3ee5e6b4b0d"
    assert list(iter_qrels(spec, files))[0] == Qrel("1", docs[0].docno, 0)
    parses = dict(((kind, key), parse) for kind, key, parse in iter_trecqa_parses(files))
    assert parses["document", docs[0].docno] == Parse((), (), ())


def test_carried_parses(tmp_path):
    _, files = trecqa_collection(tmp_path)
    parses = list(iter_trecqa_parses(files))
    assert [(kind, key) for kind, key, _ in parses] == [
        ("query", "1"), ("document", sha1_docno(SHAKESPEARE)), ("document", sha1_docno(PLAY)),
        ("document", sha1_docno(MARLOWE)), ("query", "2"), ("query", "2.1"), ("document", sha1_docno(PARIS))]
    question = parses[0][2]
    assert question == Parse(("who", "wrote", "Hamlet", "?"), (1, -1, 1, 1), ("ROOT", "DEP", "DEP", "DEP"))
    assert question.roots == (1,)


def test_answer_lines_of_positives(tmp_path):
    _, files = trecqa_collection(tmp_path)
    first = next(iter_trecqa_pairs(files["train"], "train"))
    assert first.qid == "1" and first.line == 1 and first.question.line == 2
    assert [c.kind for c in first.candidates] == ["positive", "negative", "negative"]
    assert first.candidates[0].answers == ((0,),)
    assert first.candidates[1].answers == ()
    # two spans, '#' between them, no trailing tab
    train = document(qapairs("1", element("question", "where ?"),
                             element("positive", "Oxford is in England .", answers=("Oxford\t#\tEngland", "1\t#\t4"))))
    spec, files = trecqa_collection(tmp_path, train=train)
    assert next(iter_trecqa_pairs(files["train"])).candidates[0].answers == ((0,), (3,))


# --- writers -----------------------------------------------------------------------------------

def test_write_documents_topics_and_qrels(tmp_path):
    spec, files = trecqa_collection(tmp_path)
    shards = write_document_shards(spec, files, tmp_path / "docs", num_shards=3)
    table = [row for shard in shards for row in pq.read_table(shard).to_pylist()]
    assert table == [{"docno": sha1_docno(t), "text": t} for t in (SHAKESPEARE, PLAY, MARLOWE, PARIS)]
    write_topics(spec, files, "train", tmp_path / "train.parquet")
    assert pq.read_table(tmp_path / "train.parquet").to_pydict() == {"qid": ["1", "2"],
                                                                      "text": ["who wrote Hamlet ?", "where is Paris ?"]}
    write_qrels(spec, files, tmp_path / "qrels.parquet")
    assert pq.read_table(tmp_path / "qrels.parquet").column("relevance").to_pylist() == [1, 0, 0, 1, 1]


# --- bad input ---------------------------------------------------------------------------------

GOOD_QUESTION = element("question", "who wrote Hamlet ?")
GOOD_NEGATIVE = element("negative", PLAY)


def lines_of(*blocks: str) -> list[str]:
    return document(*blocks).splitlines()


def drop_line(block: str, index: int) -> str:
    lines = block.split("\n")
    return "\n".join(lines[:index] + lines[index + 1:])


BAD_INPUTS = {
    # name: (file text, line of the error, what the message says)
    "4 lines": (document(qapairs("1", GOOD_QUESTION, drop_line(GOOD_NEGATIVE, 5))), 14,
                "expected 5 lines in the <negative> opened at line 9 (tokens, POS tags, dependency labels, heads, "
                "NER tags), found '4 lines'"),
    "6 lines": (document(qapairs("1", GOOD_QUESTION, element("positive", PLAY, answers=("Hamlet", "1"))[:-len("1\n</positive>")]
                                 + "</positive>")), 16, "or 7 with the answer tokens and their positions, found '6 lines'"),
    "answer lines in a negative": (document(qapairs("1", GOOD_QUESTION, element("negative", PLAY, answers=("Hamlet", "1")))),
                                   17, "expected 5 lines in the <negative> opened at line 9"),
    "field counts differ": (document(qapairs("1", GOOD_QUESTION, GOOD_NEGATIVE.replace("NN\tNN\tNN\tNN\tNN", "NN\tNN\tNN\tNN"))),
                            11, "expected 5 tab-separated POS tags, one per token of line 10, found '4 fields: NN"),
    "empty field": (document(qapairs("1", GOOD_QUESTION, GOOD_NEGATIVE.replace("-\t-\t-\t-\t-", "-\t-\t\t-\t-"))),
                    14, "expected NER tags as non-empty fields separated by single tabs"),
    "head not an integer": (document(qapairs("1", GOOD_QUESTION, GOOD_NEGATIVE.replace("0\t1\t1\t1\t1", "0\t1\tx\t1\t1"))),
                            13, "expected head indices as integers (1-based, 0 for the root), found 'x'"),
    "negative head": (document(qapairs("1", GOOD_QUESTION, GOOD_NEGATIVE.replace("0\t1\t1\t1\t1", "0\t1\t-1\t1\t1"))),
                      13, "expected head indices as integers"),
    "head out of range": (document(qapairs("1", GOOD_QUESTION, element("negative", PLAY, heads=[0, 1, 6, 1, 1]))), 13,
                          "expected a dependency parse whose heads form a tree over the tokens, found \"token 3 ('a') has "
                          "head 6, outside 1..5 (0 for the root)\""),
    "cycle": (document(qapairs("1", GOOD_QUESTION, element("negative", PLAY, heads=[0, 3, 2, 1, 1]))), 13,
              "a cycle in the heads"),
    "answer position wrong": (document(qapairs("1", GOOD_QUESTION, element("positive", PLAY, answers=("Hamlet", "2")))),
                              16, "expected the position of answer token 'Hamlet' of line 15, found \"2, where the "
                                  "sentence has 'is'\""),
    "answer position out of range": (document(qapairs("1", GOOD_QUESTION,
                                                      element("positive", PLAY, answers=("Hamlet\t", "9\t")))),
                                     16, "expected answer token positions, 1-based in 1..5, found '9'"),
    "unclosed element at end of file": (document(qapairs("1", GOOD_QUESTION, GOOD_NEGATIVE))[: -len("</negative>\n</QApairs>\n")],
                                        9, "expected </negative> closing this <negative>, found 'the end of the file'"),
    "unclosed element": (document(qapairs("1", GOOD_QUESTION, drop_line(GOOD_NEGATIVE, 6), GOOD_NEGATIVE)), 15,
                         "expected </negative> closing the <negative> opened at line 9, found '<negative>'"),
    "unclosed QApairs at end of file": (document(qapairs("1", GOOD_QUESTION))[: -len("</QApairs>\n")], 1,
                                        "expected </QApairs> closing this QApairs, found 'the end of the file'"),
    "unclosed QApairs": (document(qapairs("1", GOOD_QUESTION)[: -len("</QApairs>")], qapairs("2", GOOD_QUESTION)), 10,
                         "expected <question>, <positive>, <negative> or </QApairs> closing the QApairs '1' opened at "
                         "line 1, found \"<QApairs id='2'>\""),
    "text outside any QApairs": (document(qapairs("1", GOOD_QUESTION), "stray text"), 10,
                                 "expected a <QApairs id='...'> line opening a question, found 'text outside any element: "
                                 "stray text'"),
    "text between elements": (document(qapairs("1", GOOD_QUESTION, "stray\ttext", GOOD_NEGATIVE)), 9,
                              "closing the QApairs '1' opened at line 1, found 'text outside any element: stray\\ttext'"),
    "element outside QApairs": (document(qapairs("1", GOOD_QUESTION), GOOD_NEGATIVE), 10,
                                "expected a <QApairs id='...'> line opening a question, found '<negative>'"),
    "second question": (document(qapairs("1", GOOD_QUESTION, GOOD_NEGATIVE, GOOD_QUESTION)), 16,
                        "expected one <question> per QApairs; QApairs '1' (line 1) has one at line 2"),
    "candidate before the question": (document(qapairs("1", GOOD_NEGATIVE, GOOD_QUESTION)), 2,
                                      "expected the <question> of QApairs '1' (line 1) before its candidates"),
    "no question": (document(qapairs("1")), 2, "expected a <question> in QApairs '1' (line 1)"),
    "empty id": (document(qapairs("", GOOD_QUESTION)), 1, "expected a non-empty id in <QApairs id='...'>"),
    "repeated id": (document(qapairs("1", GOOD_QUESTION), qapairs("01", GOOD_QUESTION)), 10,
                    "expected a QApairs id not used before; '1' is also the id of the QApairs at {train}:1"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_names_file_and_line(tmp_path, name):
    text, line, message = BAD_INPUTS[name]
    spec, files = trecqa_collection(tmp_path, train=text)
    for read in (iter_documents, iter_queries, iter_qrels):
        with pytest.raises(InputFormatError) as excinfo:
            list(read(spec, files))
        error = excinfo.value
        assert error.path == str(files["train"]) and error.line == line, str(error)
        assert str(error).startswith(f"{files['train']}:{line}: ")
        assert message.format(train=files["train"]) in str(error)
        assert pickle.loads(pickle.dumps(error)).args == error.args
    with pytest.raises(InputFormatError):
        list(iter_trecqa_parses(files))


def test_non_utf8_bytes_name_the_line(tmp_path):
    spec, files = trecqa_collection(tmp_path)
    raw = TRAIN.encode("utf-8").replace(b"Marlowe", b"Marl\xf6we")
    files["train"].write_bytes(raw)
    line = raw[: raw.index(b"\xf6")].count(b"\n") + 1
    with pytest.raises(InputFormatError, match=rf"TRAIN\.xml:{line}: expected text encoded as utf-8"):
        list(iter_documents(spec, files))
    latin, _ = trecqa_collection(tmp_path, encoding="latin-1")
    files["train"].write_bytes(raw)
    assert "Marlöwe wrote plays & poems ." in [d.fields["sentence"] for d in iter_documents(latin, files)]


def test_repeated_id_across_files_names_both(tmp_path):
    dev = DEV.replace("id='2.1'", "id='1'")
    spec, files = trecqa_collection(tmp_path, dev=dev)
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_trecqa_collection(files))
    assert str(excinfo.value) == (f"{files['dev']}:1: expected a QApairs id not used before; '1' is also the id of the "
                                  f"QApairs at {files['train']}:1")
    with pytest.raises(InputFormatError, match="not used before"):
        list(iter_queries(spec, files))


def test_a_byte_order_mark_and_crlf_are_tolerated(tmp_path):
    spec, files = trecqa_collection(tmp_path, train="\ufeff" + TRAIN.replace("\n", "\r\n"))
    assert len(list(iter_documents(spec, files))) == 4


def test_registry_entries(tmp_path):
    def registry_with(entry):
        path = tmp_path / "collections.yaml"
        path.write_text(json.dumps({"mini": entry}))  # JSON is YAML
        return load_registry(path, schema_path=SCHEMA)

    base = {"format": "trecqa", "files": {"train": "TRAIN.xml", "test": "TEST.xml"}}
    assert registry_with(base)["mini"].querysets == {"train": ("train",), "test": ("test",)}
    assert "columns" not in registry_with(base)["mini"].to_dict()
    with pytest.raises(ConfigError, match="mini.*files"):
        registry_with({"format": "trecqa"})
    with pytest.raises(ConfigError, match="all be 'trecqa'"):
        registry_with({**base, "qrels_format": "trec"})
    with pytest.raises(ConfigError, match="all be 'trecqa'"):
        registry_with({**base, "queries_format": "squad"})
    with pytest.raises(ConfigError, match="one role only"):
        registry_with({"format": "trecqa", "files": {"dev": "D.xml", "test": "D.xml"}})
    with pytest.raises(ConfigError, match="'columns' applies to format 'answer_tsv' only"):
        CollectionSpec.from_dict("mini", {**base, "columns": {"qid": "id"}})


# --- TrecQA on the mirror ----------------------------------------------------------------------

MANIFEST_SHA256 = {
    "TRAIN.xml": "8c36007a23b754807344f08b52bc1baeaa6fa5dc85b8ad49f340cc8acc438b66",
    "DEV.xml": "87f6ed5818fcb885dc8e8206c83cce658d7187118d1e093d841629a08d9291bc",
    "TEST.xml": "fb96ee795015c98299fe78f1e697eb9e74789b1db6b1bbc0203416dedc0c467f",
}
# Published counts (Yao et al. 2013 release; MANIFEST.md): questions, pairs, positives, negatives,
# questions with both a positive and a negative (not given for TRAIN).
PUBLISHED = {"train": (94, 4718, 348, 4370, None), "dev": (82, 1148, 222, 926, 65), "test": (100, 1517, 284, 1233, 68)}


@pytest.fixture(scope="module")
def mirror():
    spec = load_registry(REGISTRY)["trecqa"]
    try:
        files = resolve_files(spec, download=False)
    except CollectionNotAvailable as error:
        pytest.skip(f"collections mirror not available: {error}")
    return spec, files


def test_registry_entry():
    spec = load_registry(REGISTRY)["trecqa"]
    assert spec.format == "trecqa" and spec.files == {"train": "TRAIN.xml", "dev": "DEV.xml", "test": "TEST.xml"}
    assert spec.sha256 == MANIFEST_SHA256
    assert spec.querysets == {"train": ("train",), "dev": ("dev",), "test": ("test",)}
    assert all(url.endswith(f"/056cbbcbf997cc0b35032430110c5e5e5525700a/TrecQA/data/{name}")
               for name, url in spec.url.items())


@pytest.mark.slow
@pytest.mark.mirror
def test_trecqa_counts_match_published(mirror):
    spec, files = mirror
    stats = trecqa_statistics(files, spec.encoding)
    for role, (questions, pairs, positives, negatives, with_both) in PUBLISHED.items():
        got = stats[role]
        assert (got.questions, got.pairs, got.positives, got.negatives) == (questions, pairs, positives, negatives)
        if with_both is not None:
            assert got.with_both == with_both
    queries = list(iter_queries(spec, files))
    assert [sum(role in q.fields for q in queries) for role in PUBLISHED] == [94, 82, 100]
    assert len({q.qid for q in queries}) == len(queries)
    dev = next(q for q in queries if "dev" in q.fields)
    assert dev == Query("1.4", {"dev": "What ethnic group / race are Crip members ?"})
    qrels = list(iter_qrels(spec, files))
    docs = list(iter_documents(spec, files))
    docnos = {d.docno for d in docs}
    assert len(docnos) == len(docs)
    assert {q.docno for q in qrels} == docnos  # every document is some question's candidate
    # One judgement per question and sentence: pairs minus the sentences repeated for a question.
    assert len(qrels) == sum(s.pairs - s.repeated for s in stats.values())
    assert sum(q.relevance for q in qrels) == sum(s.positives for s in stats.values()) - sum(
        s.conflicting for s in stats.values())


@pytest.mark.slow
@pytest.mark.mirror
def test_trecqa_carried_parses_are_valid(mirror):
    spec, files = mirror
    docs = {d.docno: d.fields["sentence"] for d in iter_documents(spec, files)}
    queries = {q.qid: next(iter(q.fields.values())) for q in iter_queries(spec, files)}
    seen = {"document": set(), "query": set()}
    for kind, key, parse in iter_trecqa_parses(files, spec.encoding):
        assert isinstance(parse, Parse) and parse.roots  # built, hence checked: a forest over the tokens
        text = docs[key] if kind == "document" else queries[key]
        assert " ".join(parse.tokens) == text
        assert key not in seen[kind]
        seen[kind].add(key)
    assert seen == {"document": set(docs), "query": set(queries)}


def test_two_sentences_sharing_a_docno_are_an_error(tmp_path):
    seen = SentenceDocnos()
    assert seen.is_new("s0", "a", tmp_path / "f", 3) and not seen.is_new("s0", "a", tmp_path / "f", 4)
    with pytest.raises(InputFormatError, match=r"f:5: expected sentences whose docnos differ"):
        seen.is_new("s0", "b", tmp_path / "f", 5)
