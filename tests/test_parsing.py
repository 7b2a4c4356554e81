"""Parsed query sets (irgrid.parsing) and WordNet's morphy (irgrid.analysis.wordnet)."""

from __future__ import annotations

import pandas as pd
import pytest

from irgrid.analysis import Analyzer
from irgrid.analysis.wordnet import Morphy, WordNetNotInstalled, wordnet_directory
from irgrid.config import experiment_querysets
from irgrid.errors import ConfigError
from irgrid.parsing import ParserNotInstalled, load_pipeline, parse_topics, parsed_queryset, write_parsed_topics


def test_a_parsed_query_set_names_the_query_set_it_parses():
    assert parsed_queryset("text+parser") == "text"
    assert parsed_queryset("desc+parser") == "desc"
    assert parsed_queryset("text") is None
    assert parsed_queryset("+parser") is None


def test_an_experiment_runs_the_parsed_query_sets_of_the_query_sets_a_collection_has():
    class Collection:
        querysets = {"text": ["W"]}

    experiment = {"querysets": ["text", "text+parser", "title", "desc+parser"]}
    assert experiment_querysets(experiment, Collection()) == ["text", "text+parser"]


def test_a_missing_pipeline_says_what_to_install():
    with pytest.raises(ParserNotInstalled, match="'xx_no_such_pipeline' is not installed.*make setup"):
        load_pipeline("xx_no_such_pipeline")
    assert issubclass(ParserNotInstalled, ConfigError)


def test_phrases_are_noun_chunks_without_function_words(tmp_path):
    topics = pd.DataFrame({"qid": ["1", "2"], "text": [
        "What are the effects of high-speed flow on boundary layer transition in supersonic wind tunnels?",
        "the",
    ]})
    parsed = parse_topics(topics)
    assert parsed["qid"].tolist() == ["1", "2"]
    phrases = parsed["phrases"][0]
    assert "boundary layer transition" in phrases
    assert "supersonic wind tunnels" in phrases
    assert not any(word in phrase.split() for phrase in phrases for word in ("What", "the", "-", "?"))
    assert parsed["phrases"][1] == []  # a query of a stop word alone has no phrase
    tokens, heads = parsed["tokens"][0], parsed["heads"][0]
    assert len(tokens) == len(heads) == len(parsed["deps"][0]) == len(parsed["tags"][0])
    assert all(0 <= head < len(tokens) for head in heads)
    # written once, read back as any topics file (qid, text) plus the parse
    source = tmp_path / "text.parquet"
    topics.to_parquet(source)
    write_parsed_topics(source, tmp_path / "text+parser.parquet")
    again = pd.read_parquet(tmp_path / "text+parser.parquet")
    assert again["phrases"].map(list).tolist() == parsed["phrases"].tolist()


# ------------------------------------------------------------------------------- WordNet

def morphy_or_skip() -> Morphy:
    try:
        return Morphy(wordnet_directory())
    except WordNetNotInstalled as error:
        pytest.skip(str(error))


def test_morphy_gives_wordnet_s_base_forms():
    morphy = morphy_or_skip()
    # NLTK's WordNet how-to gives these (wn.morphy): detachment rules, then the exception lists
    assert morphy("dogs") == "dog"
    assert morphy("churches") == "church"
    assert morphy("aardwolves") == "aardwolf"
    assert morphy("abaci") == "abacus"
    assert morphy("book") == "book"
    assert morphy.base_forms("book", "adj") == []
    # a word WordNet does not know stays as it is
    assert morphy("xyzzyq") == "xyzzyq"
    stemmed = Analyzer(stemmer="wordnet", stopwords="none")("Boundaries of the flows studied")
    assert stemmed == ["boundary", "of", "the", "flow", "study"]


def test_without_wordnet_s_database_the_analyzer_says_what_to_install(monkeypatch, tmp_path):
    import irgrid.analysis.wordnet as wordnet

    monkeypatch.setenv("IRGRID_WORDNET", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    monkeypatch.setattr(wordnet, "DEBIAN_DIR", tmp_path / "none")
    with pytest.raises(WordNetNotInstalled, match="wordnet-base"):
        wordnet_directory()
