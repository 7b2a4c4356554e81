"""Answer-sentence TSV files (``format: answer_tsv``, WikiQA's layout): hand-written files and bad input."""

from __future__ import annotations

import hashlib
import json
import pickle
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from common import REGISTRY, REPO

from irgrid.collections import (
    CollectionSpec,
    Document,
    Qrel,
    Query,
    iter_documents,
    iter_qrels,
    iter_queries,
    load_registry,
    resolve_files,
    write_document_shards,
    write_qrels,
    write_topics,
)
from irgrid.collections.answer_tsv import DEFAULT_COLUMNS, answer_tsv_statistics, iter_answer_tsv_pairs
from irgrid.collections.trecqa import SplitStatistics, sentence_docno
from irgrid.errors import ConfigError, InputFormatError

SCHEMA = REPO / "workflow" / "schemas" / "collections.schema.yaml"

HEADER = ["QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label"]
GLACIER = "how are glacier caves formed?"
CAVE_0 = "A partly submerged glacier cave on Perito Moreno Glacier."
CAVE_1 = "The ice facade is approximately 60 m high"
CAVE_4 = "A glacier cave is a cave formed within the ice of a glacier."
QUOTED = 'He said "ice, mostly" and left.'  # not CSV-quoted: the quotes are text
TRAIN_ROWS = [
    ["Q1", GLACIER, "D1", "Glacier cave", "D1-0", CAVE_0, "0"],
    ["Q1", GLACIER, "D1", "Glacier cave", "D1-1", CAVE_1, "0"],
    ["Q1", GLACIER, "D1", "Glacier cave", "D1-4", CAVE_4, "1"],
    ["Q2", "how much is 1 tablespoon of water", "D2", "Tablespoon", "D2-0", QUOTED, "0"],
]
TEST_ROWS = [
    ["Q8", "what is a cave", "D8", "Cave", "D8-0", CAVE_4, "1"],  # the same sentence as in train: one document
    ["Q8", "what is a cave", "D8", "Cave", "D8-1", CAVE_1, "0"],
]


def tsv(rows: list[list[str]], header: list[str] = HEADER) -> str:
    return "".join("\t".join(row) + "\n" for row in [header, *rows])


def docno(text: str) -> str:
    return "s" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def tsv_collection(tmp_path: Path, train: str | None = None, test: str | None = None,
                   **entry) -> tuple[CollectionSpec, dict[str, Path]]:
    files = {"train": tmp_path / "WikiQA-train.tsv", "test": tmp_path / "WikiQA-test.tsv"}
    files["train"].write_text(tsv(TRAIN_ROWS) if train is None else train, encoding="utf-8")
    files["test"].write_text(tsv(TEST_ROWS) if test is None else test, encoding="utf-8")
    spec = CollectionSpec.from_dict("mini", {"format": "answer_tsv",
                                             "files": {"train": files["train"].name, "test": files["test"].name},
                                             **entry})
    return spec, files


# --- records -----------------------------------------------------------------------------------

def test_spec_defaults(tmp_path):
    spec, _ = tsv_collection(tmp_path)
    assert spec.queries_format == "answer_tsv" and spec.qrels_format == "answer_tsv"
    assert spec.querysets == {"train": ("train",), "test": ("test",)}
    assert spec.columns == DEFAULT_COLUMNS == {"qid": "QuestionID", "question": "Question", "sentence": "Sentence",
                                               "label": "Label"}
    assert spec.to_dict()["columns"] == DEFAULT_COLUMNS


def test_documents_are_the_distinct_sentences_with_docnos_from_their_text(tmp_path):
    spec, files = tsv_collection(tmp_path)
    docs = list(iter_documents(spec, files))
    assert docs == [Document(docno(text), {"sentence": text}) for text in (CAVE_0, CAVE_1, CAVE_4, QUOTED)]
    assert all(d.docno == sentence_docno(d.fields["sentence"]) for d in docs)
    assert not any(d.docno.startswith("D") for d in docs)  # never the file's SentenceID


def test_queries_once_each_in_their_file_role(tmp_path):
    spec, files = tsv_collection(tmp_path)
    assert list(iter_queries(spec, files)) == [Query("Q1", {"train": GLACIER}),
                                               Query("Q2", {"train": "how much is 1 tablespoon of water"}),
                                               Query("Q8", {"test": "what is a cave"})]


def test_every_pair_is_judged_with_its_label(tmp_path):
    spec, files = tsv_collection(tmp_path)
    assert list(iter_qrels(spec, files)) == [
        Qrel("Q1", docno(CAVE_0), 0), Qrel("Q1", docno(CAVE_1), 0), Qrel("Q1", docno(CAVE_4), 1),
        Qrel("Q2", docno(QUOTED), 0),
        Qrel("Q8", docno(CAVE_4), 1), Qrel("Q8", docno(CAVE_1), 0),
    ]
    graded, _ = tsv_collection(tmp_path, relevance={0: 0, 1: 3})
    assert [q.relevance for q in iter_qrels(graded, files)] == [0, 0, 3, 0, 3, 0]


def test_docnos_do_not_depend_on_label_order(tmp_path):
    positives_first = sorted(TRAIN_ROWS, key=lambda row: row[-1] != "1")
    negatives_first = sorted(TRAIN_ROWS, key=lambda row: row[-1] != "0")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    spec_a, files_a = tsv_collection(tmp_path / "a", train=tsv(positives_first))
    spec_b, files_b = tsv_collection(tmp_path / "b", train=tsv(negatives_first))
    docs_a, docs_b = list(iter_documents(spec_a, files_a)), list(iter_documents(spec_b, files_b))
    assert [d.docno for d in docs_a] != [d.docno for d in docs_b]
    assert sorted(docs_a) == sorted(docs_b)
    assert sorted(iter_qrels(spec_a, files_a)) == sorted(iter_qrels(spec_b, files_b))


def test_a_repeated_sentence_is_judged_once_and_positive_wins(tmp_path):
    rows = [["Q1", GLACIER, "D1", "T", "D1-0", CAVE_0, "0"], ["Q1", GLACIER, "D1", "T", "D1-1", CAVE_1, "0"],
            ["Q1", GLACIER, "D9", "T", "D9-0", CAVE_0, "1"], ["Q1", GLACIER, "D9", "T", "D9-1", CAVE_1, "0"]]
    spec, files = tsv_collection(tmp_path, train=tsv(rows))
    assert list(iter_qrels(spec, files))[:2] == [Qrel("Q1", docno(CAVE_0), 1), Qrel("Q1", docno(CAVE_1), 0)]
    assert answer_tsv_statistics(files) == {
        "train": SplitStatistics(questions=1, pairs=4, positives=1, negatives=3, with_both=1, repeated=2, conflicting=1),
        "test": SplitStatistics(questions=1, pairs=2, positives=1, negatives=1, with_both=1, repeated=0, conflicting=0),
    }


def test_defined_results(tmp_path):
    rows = [["Q1", GLACIER, "D1", "T", "D1-0", "", "0"],  # an empty sentence: a document with empty text
            ["Q1", GLACIER, "D1", "T", "D1-1", f"  {CAVE_1} ", "2"],  # surrounding blanks dropped; graded label kept
            ["Q3", "", "D3", "T", "D3-0", CAVE_0, "-1"]]  # an empty question is a query with empty text
    spec, files = tsv_collection(tmp_path, train=tsv(rows) + "\n\n")  # blank lines are skipped
    assert list(iter_documents(spec, files))[:2] == [Document("sda39a3ee5e6b4b0d", {"sentence": ""}),
                                                     Document(docno(CAVE_1), {"sentence": CAVE_1})]
    assert list(iter_queries(spec, files))[1] == Query("Q3", {"train": ""})
    assert [q.relevance for q in iter_qrels(spec, files)][:3] == [0, 2, -1]


def test_columns_found_by_name_in_any_order_and_renamed(tmp_path):
    header = ["label", "sentence_text", "extra", "question_text", "qid"]
    rows = [["1", CAVE_4, "x", GLACIER, "007"], ["0", CAVE_0, "y", GLACIER, "007"]]
    columns = {"qid": "qid", "question": "question_text", "sentence": "sentence_text", "label": "label"}
    spec, files = tsv_collection(tmp_path, train=tsv(rows, header), test=tsv([], header), columns=columns)
    assert spec.columns == columns
    assert list(iter_queries(spec, files)) == [Query("7", {"train": GLACIER})]  # numeric ids lose leading zeros
    assert list(iter_qrels(spec, files)) == [Qrel("7", docno(CAVE_4), 1), Qrel("7", docno(CAVE_0), 0)]
    # only some renamed: the others keep WikiQA's names
    partial, _ = tsv_collection(tmp_path, columns={"label": "Relevant"})
    assert partial.columns == {**DEFAULT_COLUMNS, "label": "Relevant"}
    with pytest.raises(InputFormatError, match=r"'Relevant' \(label\)"):
        list(iter_qrels(partial, files))


# --- bad input ---------------------------------------------------------------------------------

def with_row(index: int, column: int, value: str) -> str:
    rows = [list(row) for row in TRAIN_ROWS]
    rows[index][column] = value
    return tsv(rows)


BAD_INPUTS = {
    # name: (train file text, line, what the message says)
    "missing columns": (tsv([], ["QuestionID", "Question", "DocumentID", "Sentence_Text", "Lab"]), 1,
                        "expected a tab-separated header naming the columns 'Sentence' (sentence), 'Label' (label) (set "
                        "'columns' in the registry to rename), found \"columns ['QuestionID', 'Question', 'DocumentID', "
                        "'Sentence_Text', 'Lab']\""),
    "repeated column": (tsv([], [*HEADER, "Label"]), 1, "expected each of the columns ['Label'] once in the header"),
    "too few fields": (tsv(TRAIN_ROWS).replace("\tD1-1\t", "\t"), 3,
                       "expected 7 tab-separated fields, as in the header (line 1), found '6 fields: Q1"),
    "too many fields": (with_row(3, 5, "one\ttwo"), 5, "expected 7 tab-separated fields, as in the header (line 1), "
                                                       "found '8 fields: Q2"),
    "CSV quoting is not undone": (with_row(3, 5, '"one\ttwo"'), 5, "expected 7 tab-separated fields"),
    "label not an integer": (with_row(1, 6, "1.0"), 3, "expected an integer label in column 'Label', found '1.0'"),
    "empty label": (with_row(1, 6, ""), 3, "expected an integer label in column 'Label', found ''"),
    "empty question id": (with_row(2, 0, " "), 4, "expected a question id in column 'QuestionID'"),
    "two question texts": (with_row(2, 1, "how are glacier caves made?"), 4,
                           "expected the text of question 'Q1' as on line 2: 'how are glacier caves formed?', "
                           "found 'how are glacier caves made?'"),
    "empty file": ("", 1, "expected a header line naming the columns, found 'an empty file'"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_names_file_and_line(tmp_path, name):
    text, line, message = BAD_INPUTS[name]
    spec, files = tsv_collection(tmp_path, train=text)
    for read in (iter_documents, iter_queries, iter_qrels):
        with pytest.raises(InputFormatError) as excinfo:
            list(read(spec, files))
        error = excinfo.value
        assert error.path == str(files["train"]) and error.line == line, str(error)
        where = f"{files['train']}:{line}" if line is not None else str(files["train"])
        assert str(error) == f"{where}: {message}" or str(error).startswith(f"{where}: {message}"), str(error)
        assert pickle.loads(pickle.dumps(error)).args == error.args


def test_non_utf8_bytes_name_the_line(tmp_path):
    spec, files = tsv_collection(tmp_path)
    raw = tsv(TRAIN_ROWS).encode("utf-8").replace(b"Perito", b"P\xe9rito")
    files["train"].write_bytes(raw)
    with pytest.raises(InputFormatError, match=r"WikiQA-train\.tsv:2: expected text encoded as utf-8"):
        list(iter_documents(spec, files))
    latin, _ = tsv_collection(tmp_path, encoding="latin-1")
    files["train"].write_bytes(raw)
    files["test"].write_bytes(tsv(TEST_ROWS).encode("latin-1"))
    assert "Périto" in next(iter(iter_documents(latin, files))).fields["sentence"]


def test_a_question_id_in_two_files_names_both(tmp_path):
    test = tsv([["Q2", "how much is 1 tablespoon of water", "D2", "T", "D2-5", CAVE_1, "0"]])
    spec, files = tsv_collection(tmp_path, test=test)
    with pytest.raises(InputFormatError) as excinfo:
        list(iter_queries(spec, files))
    assert str(excinfo.value) == (f"{files['test']}:2: expected a question id not used in another file; 'Q2' is also "
                                  f"the id of {files['train']}:5")


def test_a_question_may_be_spread_over_its_file(tmp_path):
    rows = [TRAIN_ROWS[0], TRAIN_ROWS[3], TRAIN_ROWS[2]]
    spec, files = tsv_collection(tmp_path, train=tsv(rows))
    assert [q.qid for q in iter_queries(spec, files)] == ["Q1", "Q2", "Q8"]
    assert [q.qid for q in iter_qrels(spec, files)] == ["Q1", "Q1", "Q2", "Q8", "Q8"]  # grouped by question
    assert [p.line for p in iter_answer_tsv_pairs(files["train"])] == [2, 3, 4]


def test_a_byte_order_mark_and_crlf_are_tolerated(tmp_path):
    spec, files = tsv_collection(tmp_path, train="\ufeff" + tsv(TRAIN_ROWS).replace("\n", "\r\n"))
    assert list(iter_queries(spec, files))[0] == Query("Q1", {"train": GLACIER})


def test_registry_entries(tmp_path):
    def registry_with(entry):
        path = tmp_path / "collections.yaml"
        path.write_text(json.dumps({"mini": entry}))  # JSON is YAML
        return load_registry(path, schema_path=SCHEMA)

    base = {"format": "answer_tsv", "files": {"train": "train.tsv", "test": "test.tsv"}}
    assert registry_with({**base, "columns": {"qid": "id"}})["mini"].columns["qid"] == "id"
    with pytest.raises(ConfigError, match="unknown key at 'mini/columns': 'question_id'"):
        registry_with({**base, "columns": {"question_id": "id"}})
    with pytest.raises(ConfigError, match="columns names .* only"):
        CollectionSpec.from_dict("mini", {**base, "columns": {"question_id": "id"}})
    with pytest.raises(ConfigError, match="four different header columns"):
        registry_with({**base, "columns": {"qid": "Question"}})
    with pytest.raises(ConfigError, match="all be 'answer_tsv'"):
        registry_with({**base, "queries_format": "tsv"})
    with pytest.raises(ConfigError, match="'columns' applies to format 'answer_tsv' only"):
        registry_with({"format": "tsv", "files": {"docs": "d.tsv"}, "columns": {"qid": "id"}})


def test_the_commented_registry_example_is_valid(tmp_path):
    """The `wikiqa` example of config/collections.yaml, uncommented, passes the schema and the checks."""
    text = REGISTRY.read_text(encoding="utf-8")
    block = re.search(r"^# wikiqa:\n(?:#(?: .*)?\n)*", text, re.MULTILINE)
    assert block is not None
    uncommented = "\n".join(line[2:] for line in block.group(0).splitlines() if line.startswith("# "))
    path = tmp_path / "collections.yaml"
    path.write_text(uncommented, encoding="utf-8")
    spec = load_registry(path, schema_path=SCHEMA)["wikiqa"]
    assert spec.format == "answer_tsv" and list(spec.files) == ["train", "dev", "test"]
    assert spec.columns == DEFAULT_COLUMNS and yaml.safe_load(uncommented)["wikiqa"]["columns"] == DEFAULT_COLUMNS


# --- end to end: a user's registry entry through the writers -------------------------------------

def test_user_registry_entry_end_to_end_into_parquet(tmp_path):
    """What `irgrid shard/topics/qrels` do: load the registry, resolve the files, write Parquet."""
    raw = tmp_path / "mirror" / "myqa"
    raw.mkdir(parents=True)
    header = ["qid", "question", "doc", "sentence", "label"]
    (raw / "train.tsv").write_text(tsv([["1", GLACIER, "d", CAVE_4, "1"], ["1", GLACIER, "d", CAVE_0, "0"]], header),
                                   encoding="utf-8")
    (raw / "test.tsv").write_text(tsv([["2", "what is a cave", "d", CAVE_4, "1"], ["2", "what is a cave", "d", QUOTED, "0"]],
                                      header), encoding="utf-8")
    registry = tmp_path / "collections.yaml"
    registry.write_text(
        "myqa:\n"
        "  format: answer_tsv\n"
        "  files: {train: train.tsv, test: test.tsv}\n"
        "  columns: {qid: qid, question: question, sentence: sentence, label: label}\n"
        "  querysets: {train: [train], test: [test], all: [train, test]}\n",
        encoding="utf-8")
    spec = load_registry(registry)["myqa"]  # validated against the repository's schema
    files = resolve_files(spec, mirror=tmp_path / "mirror", download=False)
    assert files == {"train": raw / "train.tsv", "test": raw / "test.tsv"}

    shards = write_document_shards(spec, files, tmp_path / "results" / "docs", num_shards=2)
    assert [row for shard in shards for row in pq.read_table(shard).to_pylist()] == [
        {"docno": docno(CAVE_4), "text": CAVE_4}, {"docno": docno(CAVE_0), "text": CAVE_0},
        {"docno": docno(QUOTED), "text": QUOTED}]
    for queryset, table in {"train": {"qid": ["1"], "text": [GLACIER]},
                            "test": {"qid": ["2"], "text": ["what is a cave"]},
                            "all": {"qid": ["1", "2"], "text": [GLACIER, "what is a cave"]}}.items():
        out = tmp_path / "results" / "topics" / f"{queryset}.parquet"
        write_topics(spec, files, queryset, out)
        assert pq.read_table(out).to_pydict() == table
    write_qrels(spec, files, tmp_path / "results" / "qrels.parquet")
    assert pq.read_table(tmp_path / "results" / "qrels.parquet").to_pydict() == {
        "qid": ["1", "1", "2", "2"], "docno": [docno(CAVE_4), docno(CAVE_0), docno(CAVE_4), docno(QUOTED)],
        "relevance": [1, 0, 1, 0]}
