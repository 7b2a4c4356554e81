"""Query-set names and the word filter X+minNwords (irgrid.querysets).

The ADM paper (seed 000) used, as short queries, the title queries "that have more than two words":
``title+min3words``. Word counts in the expectations are counted by hand from the texts.
"""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from irgrid.cli import main
from irgrid.config import experiment_cells, experiment_querysets, load_config
from irgrid.errors import ConfigError
from irgrid.io import write_parquet
from irgrid.querysets import (
    QuerySetName,
    base_queryset,
    check_queryset_name,
    keep_min_words,
    min_words_queryset,
    parse_queryset,
    query_words,
)

TITLES = pd.DataFrame({
    "qid": ["301", "302", "303", "304", "305", "306"],
    "text": ["Crude Oil",                      # 2 words: dropped
             "Hot Dog Vendors",                # 3: kept
             "Hubble Telescope Achievements",  # 3: kept
             "high-speed flow",                # 3: the hyphen separates two words, as the English analyzers split
             "the U.S.A.",                     # 2: an abbreviation is one word
             "Women in Parliaments"],          # 3: a stop word counts (the paper kept stop words)
})


def test_the_paper_s_short_queries_keep_titles_of_more_than_two_words():
    kept = keep_min_words(TITLES, 3, "title+min3words")
    assert kept["qid"].tolist() == ["302", "303", "304", "306"]
    assert kept["text"].tolist() == TITLES.set_index("qid").loc[["302", "303", "304", "306"], "text"].tolist()
    assert query_words("the U.S.A.") == ["the", "U.S.A"]
    assert query_words("high-speed flow") == ["high", "speed", "flow"]


def test_a_two_word_query_is_dropped_and_a_three_word_one_kept_at_every_threshold_edge():
    topics = pd.DataFrame({"qid": ["a", "b", "c"], "text": ["one two", "one two three", None]})
    assert keep_min_words(topics, 3, "x+min3words")["qid"].tolist() == ["b"]
    assert keep_min_words(topics, 2, "x+min2words")["qid"].tolist() == ["a", "b"]
    # other columns (a parse, phrases) go along with their query
    with_phrases = topics.assign(phrases=[["one two"], [], []])
    assert keep_min_words(with_phrases, 3, "x+min3words").to_dict("list") == {
        "qid": ["b"], "text": ["one two three"], "phrases": [[]]}


def test_a_filter_that_keeps_no_query_names_the_query_set_and_the_file():
    with pytest.raises(ConfigError, match=r"topics/title.parquet: query set 'title\+min4words' keeps no query: "
                                          r"none of the 6 queries has 4 or more words \(the longest has 3\)"):
        keep_min_words(TITLES, 4, "title+min4words", "topics/title.parquet")


def test_the_command_writes_the_kept_queries_and_stops_on_an_empty_set(tmp_path, capsys):
    import pyarrow as pa

    source = tmp_path / "title.parquet"
    write_parquet(pa.Table.from_pandas(TITLES, preserve_index=False), source)
    out = tmp_path / "title+min3words.parquet"
    assert main(["min-words-topics", "--topics", str(source), "--min-words", "3", "--queryset", "title+min3words",
                 "--out", str(out)]) == 0
    written = pq.read_table(out)
    assert written.column_names == ["qid", "text"]
    assert written.column("qid").to_pylist() == ["302", "303", "304", "306"]
    empty = tmp_path / "title+min9words.parquet"
    assert main(["min-words-topics", "--topics", str(source), "--min-words", "9", "--queryset", "title+min9words",
                 "--out", str(empty)]) == 2
    assert "query set 'title+min9words' keeps no query" in capsys.readouterr().err
    assert not empty.exists()


def test_names_read_from_the_right():
    assert parse_queryset("title") == QuerySetName("title")
    assert parse_queryset("title+min3words") == QuerySetName("title", 3)
    assert parse_queryset("title+min3words+parser") == QuerySetName("title", 3, "parser")
    assert parse_queryset("desc+parser") == QuerySetName("desc", None, "parser")
    # a registry query set whose name holds a '+' stays one base
    assert parse_queryset("title+desc+list") == QuerySetName("title+desc", None, "list")
    assert base_queryset("title+min12words+judged") == "title"
    assert min_words_queryset("title+min3words") == ("title", 3)
    assert min_words_queryset("title+min3words+parser") is None  # made by parsing title+min3words
    assert min_words_queryset("title") is None
    assert min_words_queryset("+min3words") is None


@pytest.mark.parametrize("name, says", [
    ("title+min3", "the word filter is written +minNwords"),
    ("title+min0words", "+minNwords with N a whole number from 1"),
    ("title+min03words", "no leading zero"),
    ("title+min3word", "found +min3word"),
    ("title+parser+min3words", "comes right after the registry's query set"),
])
def test_a_malformed_filter_is_refused_naming_the_file_and_key(name, says):
    with pytest.raises(ConfigError) as error:
        check_queryset_name(name, "config/experiments/adm.yaml", "querysets")
    assert str(error.value).startswith(f"config/experiments/adm.yaml: querysets: query set {name!r}")
    assert says in str(error.value)


@pytest.mark.parametrize("name", ["title", "title+min3words", "title+min3words+parser", "text+pmi", "dev+judged",
                                  "title+desc", "title+mine"])
def test_well_formed_names_pass(name):
    check_queryset_name(name, "x.yaml", "querysets")


TREC_ENTRY = {"format": "trec", "files": {"docs": "docs.sgml", "queries": "topics.txt", "qrels": "qrels.txt"}}
EXPERIMENT = {
    "title": "short and long queries",
    "collections": ["mini"],
    "querysets": ["text", "title", "title+min3words", "title+min3words+parser", "desc+parser"],
    "analyzer": "porter",
    "models": {"ug": {"family": "kl_ml", "grid": {"mu": 1000}}},
    "baseline": "ug",
}


def config_with(tmp_path, experiment: dict) -> dict:
    registry = tmp_path / "collections.yaml"
    registry.write_text(yaml.safe_dump({"mini": TREC_ENTRY}), encoding="utf-8")
    return {"registry": str(registry),
            "analyzers": {"porter": {"tokenizer": "lucene", "stemmer": "porter", "stopwords": "none"}},
            "measures": ["AP", "P@10"], "experiments": {"short": experiment}}


def test_an_experiment_runs_the_filtered_query_sets_of_a_trec_collection(tmp_path):
    loaded = load_config(config_with(tmp_path, dict(EXPERIMENT)))
    assert experiment_querysets(loaded["_experiments"]["short"], loaded["_registry"]["mini"]) == [
        "title", "title+min3words", "title+min3words+parser", "desc+parser"]
    assert [cell.queryset for cell in experiment_cells(loaded, "short")] == [
        "title", "title+min3words", "title+min3words+parser", "desc+parser"]


def test_load_config_refuses_a_malformed_filter_naming_the_experiment(tmp_path):
    experiment = {**EXPERIMENT, "querysets": ["title", "title+min3"]}
    with pytest.raises(ConfigError, match=r"experiments/short: querysets: query set 'title\+min3'"):
        load_config(config_with(tmp_path, experiment))
