"""SQuAD-format collections (``format: squad``): hand-written files, bad input, and the DRCD mirror.

The test marked ``mirror`` needs ../shared/collections/drcd (or $IRGRID_MIRROR) and is skipped
without it.
"""

from __future__ import annotations

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
from irgrid.errors import ConfigError, InputFormatError

SCHEMA = REPO / "workflow" / "schemas" / "collections.schema.yaml"

# Two files, three paragraphs. The second article has no id (its title names the paragraph)
# and its paragraph no id; one question has no answers.
DEV = {
    "version": "1.3",
    "data": [
        {"title": "貓", "id": "10", "paragraphs": [
            {"id": "10-1", "context": "貓是小型貓科動物。",
             "qas": [{"id": "10-1-1", "question": "貓是什麼動物？",
                      "answers": [{"id": "1", "text": "小型貓科動物", "answer_start": 2}]},
                     {"id": "10-1-2", "question": "貓會飛嗎？", "answers": []}]},
            {"id": "10-2", "context": "家貓由野貓馴化而來。",
             "qas": [{"id": "10-2-1", "question": " 家貓從哪裡來？ ",
                      "answers": [{"id": "1", "text": "野貓", "answer_start": 3}]}]},
        ]},
    ],
}
TEST = {
    "version": "1.3",
    "data": [
        {"title": "狗", "paragraphs": [
            {"context": "狗是人類最早馴化的動物。",
             "qas": [{"id": "20-0-1", "question": "最早馴化的動物是？",
                      "answers": [{"text": "狗", "answer_start": 0}]}]},
        ]},
    ],
}


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def squad_collection(tmp_path: Path, dev=DEV, test=TEST, **entry) -> tuple[CollectionSpec, dict[str, Path]]:
    write_json(tmp_path / "dev.json", dev)
    write_json(tmp_path / "test.json", test)
    spec = CollectionSpec.from_dict("mini", {"format": "squad", "files": {"dev": "dev.json", "test": "test.json"},
                                             **entry})
    return spec, {"dev": tmp_path / "dev.json", "test": tmp_path / "test.json"}


# --- records -----------------------------------------------------------------------------------

def test_spec_defaults(tmp_path):
    spec, _ = squad_collection(tmp_path)
    assert spec.queries_format == "squad" and spec.qrels_format == "squad"
    assert spec.querysets == {"dev": ("dev",), "test": ("test",)}


def test_documents_are_the_paragraphs_of_all_files(tmp_path):
    spec, files = squad_collection(tmp_path)
    docs = list(iter_documents(spec, files))
    assert docs == [
        Document("10-1", {"context": "貓是小型貓科動物。"}),
        Document("10-2", {"context": "家貓由野貓馴化而來。"}),
        Document("狗-0", {"context": "狗是人類最早馴化的動物。"}),  # no id: article title, 0-based index
    ]
    # The context only: the article title is not part of the text.
    assert [document_text(spec, d) for d in docs] == ["貓是小型貓科動物。", "家貓由野貓馴化而來。", "狗是人類最早馴化的動物。"]


def test_queries_carry_their_file_role(tmp_path):
    spec, files = squad_collection(tmp_path)
    queries = list(iter_queries(spec, files))
    assert queries == [
        Query("10-1-1", {"dev": "貓是什麼動物？"}),
        Query("10-1-2", {"dev": "貓會飛嗎？"}),
        Query("10-2-1", {"dev": "家貓從哪裡來？"}),
        Query("20-0-1", {"test": "最早馴化的動物是？"}),
    ]
    assert query_text(spec, queries[0], "dev") == "貓是什麼動物？"


def test_qrels_are_each_questions_own_paragraph(tmp_path):
    spec, files = squad_collection(tmp_path)
    assert list(iter_qrels(spec, files)) == [
        Qrel("10-1-1", "10-1", 1),
        Qrel("10-1-2", "10-1", 1),  # no answers: still judged on its paragraph
        Qrel("10-2-1", "10-2", 1),
        Qrel("20-0-1", "狗-0", 1),
    ]
    graded = CollectionSpec.from_dict("mini", {"format": "squad", "files": {"dev": "dev.json", "test": "test.json"},
                                               "relevance": {1: 2}})
    assert {q.relevance for q in iter_qrels(graded, files)} == {2}


def test_write_topics_per_query_set(tmp_path):
    spec, files = squad_collection(tmp_path)
    expected = {
        "dev": {"qid": ["10-1-1", "10-1-2", "10-2-1"], "text": ["貓是什麼動物？", "貓會飛嗎？", "家貓從哪裡來？"]},
        "test": {"qid": ["20-0-1"], "text": ["最早馴化的動物是？"]},
    }
    for queryset, table in expected.items():
        out = tmp_path / "topics" / f"{queryset}.parquet"
        write_topics(spec, files, queryset, out)
        assert pq.read_table(out).to_pydict() == table
    # A query set naming both roles holds every question.
    both, _ = squad_collection(tmp_path, querysets={"all": ["dev", "test"]})
    write_topics(both, files, "all", tmp_path / "all.parquet")
    assert pq.read_table(tmp_path / "all.parquet").column("qid").to_pylist() == ["10-1-1", "10-1-2", "10-2-1", "20-0-1"]


def test_write_documents_and_qrels(tmp_path):
    spec, files = squad_collection(tmp_path)
    shards = write_document_shards(spec, files, tmp_path / "docs", num_shards=2)
    docnos = [d for shard in shards for d in pq.read_table(shard).column("docno").to_pylist()]
    assert docnos == ["10-1", "10-2", "狗-0"]
    write_qrels(spec, files, tmp_path / "qrels.parquet")
    assert pq.read_table(tmp_path / "qrels.parquet").to_pydict() == {
        "qid": ["10-1-1", "10-1-2", "10-2-1", "20-0-1"], "docno": ["10-1", "10-1", "10-2", "狗-0"],
        "relevance": [1, 1, 1, 1]}


def test_queries_missing_a_field_are_left_out_only_when_absent(tmp_path):
    """The general rule of write_topics: absent fields leave a query out, empty ones do not."""
    path = tmp_path / "q.jsonl"
    path.write_text('{"qid": "1", "title": "a", "desc": "b"}\n{"qid": "2", "desc": "c"}\n'
                    '{"qid": "3", "title": "", "desc": "d"}\n', encoding="utf-8")
    (tmp_path / "d.jsonl").write_text('{"docno": "x", "text": "y"}\n', encoding="utf-8")
    spec = CollectionSpec.from_dict("j", {"format": "jsonl", "files": {"docs": "d.jsonl", "queries": "q.jsonl"},
                                          "querysets": {"title": ["title"], "both": ["title", "desc"]}})
    files = {"docs": tmp_path / "d.jsonl", "queries": path}
    write_topics(spec, files, "title", tmp_path / "title.parquet")
    assert pq.read_table(tmp_path / "title.parquet").to_pydict() == {"qid": ["1", "3"], "text": ["a", ""]}
    write_topics(spec, files, "both", tmp_path / "both.parquet")
    assert pq.read_table(tmp_path / "both.parquet").column("qid").to_pylist() == ["1", "2", "3"]
    every = CollectionSpec.from_dict("j", {"format": "jsonl", "files": {"docs": "d.jsonl", "queries": "q.jsonl"}})
    assert every.querysets == {"text": None}  # None: every field, never leaves a query out
    write_topics(every, files, "text", tmp_path / "text.parquet")
    assert pq.read_table(tmp_path / "text.parquet").column("qid").to_pylist() == ["1", "2", "3"]


# --- bad input ---------------------------------------------------------------------------------

def test_syntax_error_names_file_line_and_column(tmp_path):
    spec, files = squad_collection(tmp_path)
    files["test"].write_text('{"data": [\n  {"title": "x",\n   "paragraphs": [}\n]}\n', encoding="utf-8")
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_documents(spec, files))
    error = excinfo.value
    assert error.path == str(files["test"]) and error.line == 3
    assert f"{files['test']}:3: expected SQuAD JSON (column 19:" in str(error)
    assert pickle.loads(pickle.dumps(error)).args == error.args


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d["data"][0]["paragraphs"][1].pop("context"), "data[0].paragraphs[1]: expected a 'context' string"),
    (lambda d: d["data"][0]["paragraphs"][1].update(context=7),
     "data[0].paragraphs[1]: expected a 'context' string, found '7'"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][1].pop("question"),
     "data[0].paragraphs[0].qas[1]: expected a 'question' string"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0].update(id=""),
     "data[0].paragraphs[0].qas[0]: expected an 'id' (non-empty string or integer, no blanks)"),
    (lambda d: d["data"][0].update(paragraphs={}), "data[0]: expected a 'paragraphs' list"),
    (lambda d: d.pop("data"), "(top level): expected a 'data' list of articles"),
    (lambda d: d["data"].append("x"), "data[1]: expected an article object"),
])
def test_structure_errors_name_the_json_path(tmp_path, mutate, message):
    dev = json.loads(json.dumps(DEV))
    mutate(dev)
    spec, files = squad_collection(tmp_path, dev=dev)
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_queries(spec, files))
    assert str(excinfo.value).startswith(f"{files['dev']}: {message}")
    assert excinfo.value.path == str(files["dev"])
    assert pickle.loads(pickle.dumps(excinfo.value)).args == excinfo.value.args


def test_paragraph_without_any_name_is_an_error(tmp_path):
    test = json.loads(json.dumps(TEST))
    del test["data"][0]["title"]
    spec, files = squad_collection(tmp_path, test=test)
    with pytest.raises(InputFormatError, match=r"data\[0\]\.paragraphs\[0\]: expected an 'id', or an 'id' or 'title'"):
        list(iter_documents(spec, files))


def test_duplicate_paragraph_id_across_files_names_both(tmp_path):
    test = json.loads(json.dumps(TEST))
    test["data"][0]["paragraphs"][0]["id"] = "10-2"
    spec, files = squad_collection(tmp_path, test=test)
    for read in (iter_documents, iter_queries, iter_qrels):
        with pytest.raises(InputFormatError) as excinfo:
            list(read(spec, files))
        message = str(excinfo.value)
        assert message.startswith(f"{files['test']}: data[0].paragraphs[0]: expected a paragraph id not used before")
        assert f"'10-2' is also the id of {files['dev']}: data[0].paragraphs[1]" in message


def test_duplicate_question_id_is_an_error(tmp_path):
    test = json.loads(json.dumps(TEST))
    test["data"][0]["paragraphs"][0]["qas"][0]["id"] = "10-1-2"
    spec, files = squad_collection(tmp_path, test=test)
    with pytest.raises(InputFormatError, match="question id not used before; '10-1-2' is also the id of"):
        list(iter_queries(spec, files))


def test_registry_entries(tmp_path):
    def registry_with(entry):
        path = tmp_path / "collections.yaml"
        path.write_text(json.dumps({"mini": entry}))  # JSON is YAML
        return load_registry(path, schema_path=SCHEMA)

    base = {"format": "squad", "files": {"dev": "d.json", "test": "t.json"}}
    assert registry_with(base)["mini"].querysets == {"dev": ("dev",), "test": ("test",)}
    with pytest.raises(ConfigError, match="mini.*files"):
        registry_with({"format": "squad"})
    with pytest.raises(ConfigError, match="all be 'squad'"):
        registry_with({**base, "qrels_format": "trec"})
    with pytest.raises(ConfigError, match="all be 'squad'"):
        registry_with({"format": "jsonl", "files": {"docs": "d.jsonl", "queries": "q.json"}, "queries_format": "squad"})
    with pytest.raises(ConfigError, match="one role only"):
        registry_with({"format": "squad", "files": {"dev": "d.json", "test": "d.json"}})
    with pytest.raises(ConfigError, match="docs"):  # other formats still need their docs file
        registry_with({"format": "jsonl", "files": {"queries": "q.jsonl"}})


# --- DRCD on the mirror ------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.mirror
def test_drcd_counts_match_manifest():
    spec = load_registry(REGISTRY)["drcd"]
    try:
        files = resolve_files(spec, download=False)
    except CollectionNotAvailable as error:
        pytest.skip(f"collections mirror not available: {error}")
    docs = list(iter_documents(spec, files))
    queries = list(iter_queries(spec, files))
    qrels = list(iter_qrels(spec, files))
    assert len(docs) == 2000 and len({d.docno for d in docs}) == 2000
    assert sum("dev" in q.fields for q in queries) == 3524
    assert sum("test" in q.fields for q in queries) == 3493
    assert len(queries) == len({q.qid for q in queries}) == 3524 + 3493
    docnos = {d.docno for d in docs}
    assert all(qrel.docno in docnos for qrel in qrels)
    assert len(qrels) == len(queries) and {q.qid for q in qrels} == {q.qid for q in queries}
    assert all(document_text(spec, d) for d in docs)
