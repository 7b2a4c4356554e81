"""Phrase identification (irgrid.phrases): phrase lists, PMI in the collection, Chinese segmenter."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irgrid.errors import ConfigError, InputFormatError
from irgrid.phrases import (
    has_phrase,
    identified_queryset,
    identify_phrases,
    iter_document_texts,
    match_phrases,
    phrase_words,
    pmi_phrases,
    read_phrase_list,
    segment_phrases,
    write_phrase_topics,
)
from irgrid.phrases.pmi import pair_counts

# --- phrase lists -------------------------------------------------------------------------------

BOUNDARY = ["boundary layer", "boundary layer flow", "layer flow"]


def test_list_longest_match_first():
    assert match_phrases("boundary layer flow", BOUNDARY) == ["boundary layer flow"]


def test_list_no_overlap_left_to_right():
    # "boundary layer" is taken at "boundary" (no 3-word entry starts there); "layer flow" overlaps it
    assert match_phrases("boundary layer flow", ["boundary layer", "layer flow"]) == ["boundary layer"]
    # after a match, matching goes on at the next word: two phrases in query order
    assert match_phrases("layer flow in a boundary layer", BOUNDARY) == ["layer flow", "boundary layer"]


def test_list_case_insensitive_original_spans():
    text = "Effects of the Boundary  Layer on  Layer\tFlow"
    assert match_phrases(text, ["BOUNDARY layer", "layer flow"]) == ["Boundary Layer", "Layer Flow"]
    # words match across punctuation; the span is the query's own text
    assert match_phrases("a boundary-layer", ["boundary layer"]) == ["boundary-layer"]


def test_list_single_word_entries_never_match():
    assert match_phrases("boundary layer", ["boundary", "layer"]) == []
    assert match_phrases("", BOUNDARY) == []
    assert match_phrases("no phrase here", BOUNDARY) == []


def test_read_phrase_list_skips_comments_blanks_duplicates(tmp_path):
    path = tmp_path / "phrases.txt"
    path.write_text("# a comment\n\n  Boundary   layer \n   # indented comment\nboundary LAYER\nlayer\nlayer flow\n",
                    encoding="utf-8")
    assert read_phrase_list(path) == ["Boundary layer", "layer", "layer flow"]


def test_read_phrase_list_five_words_names_line(tmp_path):
    path = tmp_path / "phrases.txt"
    path.write_text("boundary layer\none two three four five\n", encoding="utf-8")
    with pytest.raises(InputFormatError) as error:
        read_phrase_list(path)
    assert error.value.line == 2
    assert f"{path}:2:" in str(error.value)
    assert "1 to 4 words" in str(error.value)


def test_read_phrase_list_four_words_allowed(tmp_path):
    path = tmp_path / "phrases.txt"
    path.write_text("one two three four\n", encoding="utf-8")
    assert read_phrase_list(path) == ["one two three four"]


def test_read_phrase_list_not_utf8_names_line(tmp_path):
    path = tmp_path / "phrases.txt"
    path.write_bytes(b"boundary layer\nlayer\n" + "caf\u00e9 noir\n".encode("latin-1"))
    with pytest.raises(InputFormatError) as error:
        read_phrase_list(path)
    assert error.value.line == 3
    assert f"{path}:3:" in str(error.value) and "UTF-8" in str(error.value)


@pytest.mark.parametrize("content", ["", "# only a comment\n\n   \n"])
def test_read_phrase_list_without_phrase(tmp_path, content):
    path = tmp_path / "phrases.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFormatError) as error:
        read_phrase_list(path)
    assert str(path) in str(error.value) and "at least one phrase" in str(error.value)


# --- PMI ----------------------------------------------------------------------------------------

# N = 8 word tokens, 4 documents of 2 tokens each: M = 4 adjacent positions.
# c(new) = 2, c(york) = 2, c(new york) = 2:
# PMI = log2( (2/4) / ((2/8) * (2/8)) ) = log2( 0.5 / 0.0625 ) = log2(8) = 3 bits exactly.
EXACT_DOCS = ["New York", "new york!", "big city", "old town"]


def test_pmi_counts_by_hand():
    unigrams, bigrams, tokens, positions = pair_counts({("new", "york")}, EXACT_DOCS)
    assert (tokens, positions) == (8, 4)
    assert unigrams == {"new": 2, "york": 2}
    assert bigrams == {("new", "york"): 2}


def test_pmi_threshold_is_strict():
    expected = math.log2((2 / 4) / ((2 / 8) * (2 / 8)))
    assert expected == 3.0
    query = {"q": "the New  York"}
    assert pmi_phrases(query, EXACT_DOCS, pmi_threshold=2.99, min_count=1) == {"q": ["New York"]}
    assert pmi_phrases(query, EXACT_DOCS, pmi_threshold=3.0, min_count=1) == {"q": []}


def test_pmi_min_count_boundary():
    query = {"q": "new york"}
    assert pmi_phrases(query, EXACT_DOCS, pmi_threshold=0.0, min_count=2) == {"q": ["new york"]}
    assert pmi_phrases(query, EXACT_DOCS, pmi_threshold=0.0, min_count=3) == {"q": []}


# N = 8, M = 4; c(new) = 2, c(york) = 3, c(city) = 2; c(new york) = 1, c(york city) = 2.
# PMI(new york)  = log2( (1/4) / ((2/8) * (3/8)) ) = log2(0.25 / 0.09375)  = log2(8/3)  ~ 1.415
# PMI(york city) = log2( (2/4) / ((3/8) * (2/8)) ) = log2(0.5 / 0.09375)   = log2(16/3) ~ 2.415
GREEDY_DOCS = ["new york", "york city", "york city", "new idea"]


def test_pmi_greedy_by_pmi_without_overlap():
    pmi_new_york = math.log2((1 / 4) / ((2 / 8) * (3 / 8)))
    pmi_york_city = math.log2((2 / 4) / ((3 / 8) * (2 / 8)))
    assert pmi_new_york == pytest.approx(1.4150375)
    assert pmi_york_city == pytest.approx(2.4150375)
    queries = {
        "overlap": "New York City",            # both pairs qualify; york city has the higher PMI and wins
        "both": "new york and york city",      # no overlap: both, in query order (not PMI order)
        "none": "big data",
        "empty": "",
    }
    found = pmi_phrases(queries, GREEDY_DOCS, pmi_threshold=1.0, min_count=1)
    assert found == {"overlap": ["York City"], "both": ["new york", "york city"], "none": [], "empty": []}
    # a threshold between the two PMIs: only york city qualifies
    assert pmi_phrases({"q": "new york city"}, GREEDY_DOCS, pmi_threshold=2.0, min_count=1) == {"q": ["york city"]}
    # with min_count 2, new york (c = 1) is out whatever its PMI
    assert pmi_phrases({"q": "new york"}, GREEDY_DOCS, pmi_threshold=1.0, min_count=2) == {"q": []}


def test_pmi_bad_min_count():
    with pytest.raises(ConfigError, match="min_count"):
        pmi_phrases({"q": "new york"}, EXACT_DOCS, min_count=0)


def _write_shards(docs_dir, shards):
    docs_dir.mkdir()
    for i, texts in enumerate(shards):
        table = pa.table({"docno": [f"d{i}-{j}" for j in range(len(texts))], "text": texts})
        pq.write_table(table, docs_dir / f"part-{i:04d}.parquet")


def test_iter_document_texts_in_shard_order(tmp_path):
    docs_dir = tmp_path / "docs"
    _write_shards(docs_dir, [EXACT_DOCS[:3], [EXACT_DOCS[3], None]])
    assert list(iter_document_texts(docs_dir)) == EXACT_DOCS + [""]
    topics = pd.DataFrame({"qid": ["1"], "text": ["New York"]})
    table = identify_phrases(topics, "pmi", documents=iter_document_texts(docs_dir), pmi_threshold=2.5, min_count=2)
    assert table["phrases"].tolist() == [["New York"]]


def test_iter_document_texts_errors(tmp_path):
    with pytest.raises(InputFormatError, match="part-XXXX.parquet"):
        iter_document_texts(tmp_path)
    with pytest.raises(InputFormatError, match="no such directory"):
        iter_document_texts(tmp_path / "missing")
    pq.write_table(pa.table({"docno": ["d"], "body": ["x"]}), tmp_path / "part-0000.parquet")
    with pytest.raises(InputFormatError, match="column text"):
        iter_document_texts(tmp_path)


# --- Chinese segmenter --------------------------------------------------------------------------


def _is_han(text):
    return all("\u4e00" <= ch <= "\u9fff" for ch in text)


def test_segmenter_traditional_question():
    text = "台灣的首都是哪一個城市？"
    phrases = segment_phrases(text)
    assert "城市" in phrases and "台灣" in phrases   # in the original Traditional characters, not 台湾
    position = 0
    for phrase in phrases:
        assert len(phrase) >= 2 and _is_han(phrase)
        found = text.find(phrase, position)
        assert found >= 0, phrase
        position = found + len(phrase)


def test_segmenter_mixed_latin_digits_punctuation():
    text = "ＮＢＡ球員2010年的薪水"
    phrases = segment_phrases(text)
    assert "薪水" in phrases
    assert all(len(p) >= 2 and _is_han(p) and p in text for p in phrases)
    assert not any(ch in "".join(phrases) for ch in "ＮＢＡ2010")


def test_segmenter_no_phrase_and_empty():
    assert segment_phrases("") == []
    assert segment_phrases("hello world 2010") == []
    assert segment_phrases("的？") == []
    assert segment_phrases("城市", convert="none") == ["城市"]


def test_segmenter_unknown_conversion():
    with pytest.raises(ConfigError, match="OpenCC"):
        segment_phrases("台灣的首都", convert="no-such-conversion")


# --- query sets with phrases --------------------------------------------------------------------


def test_has_phrase_and_phrase_words():
    assert phrase_words("Boundary  layer") == ["Boundary", "layer"]
    assert phrase_words("high-speed flow") == ["high", "speed", "flow"]
    assert phrase_words("城市") == ["城", "市"]
    assert has_phrase(["effects", "boundary layer"])
    assert has_phrase(["城市"])
    assert not has_phrase(["effects", "城"])
    assert not has_phrase([])


def test_identified_queryset():
    assert identified_queryset("text+pmi") == ("text", "pmi")
    assert identified_queryset("dev+segmenter") == ("dev", "segmenter")
    assert identified_queryset("title+desc+list") == ("title+desc", "list")
    assert identified_queryset("text") is None
    assert identified_queryset("text+parser") is None
    assert identified_queryset("+pmi") is None


def test_write_phrase_topics_round_trip(tmp_path):
    topics_path = tmp_path / "topics.parquet"
    pq.write_table(pa.table({"qid": ["1", "2", "3"],
                             "text": ["Boundary Layer flow", "no phrase", ""]}), topics_path)
    phrase_list = tmp_path / "phrases.txt"
    phrase_list.write_text("\n".join(BOUNDARY) + "\n", encoding="utf-8")
    out = tmp_path / "out" / "topics.parquet"
    table = write_phrase_topics(topics_path, out, "list", phrase_list=str(phrase_list))
    assert table["phrases"].tolist() == [["Boundary Layer flow"], [], []]
    schema = pq.read_schema(out)
    assert schema.field("qid").type == pa.string()
    assert schema.field("text").type == pa.string()
    assert schema.field("phrases").type == pa.list_(pa.string())
    back = pq.read_table(out).to_pydict()
    assert back == {"qid": ["1", "2", "3"], "text": ["Boundary Layer flow", "no phrase", ""],
                    "phrases": [["Boundary Layer flow"], [], []]}
    assert [p.name for p in out.parent.iterdir()] == ["topics.parquet"]   # no temporary file left


def test_identify_errors(tmp_path):
    topics = pd.DataFrame({"qid": ["1"], "text": ["new york"]})
    with pytest.raises(ConfigError) as error:
        identify_phrases(topics, "ngram")
    assert all(method in str(error.value) for method in ("list", "pmi", "segmenter"))
    with pytest.raises(ConfigError, match="phrase list"):
        identify_phrases(topics, "list")
    with pytest.raises(ConfigError, match="documents"):
        identify_phrases(topics, "pmi")
    with pytest.raises(ConfigError, match="unknown"):
        write_phrase_topics(tmp_path / "missing.parquet", tmp_path / "out.parquet", "ngram")
    assert not (tmp_path / "out.parquet").exists()


def test_identify_segmenter_and_list_sequence():
    topics = pd.DataFrame({"qid": [1, 2], "text": ["台灣的首都是哪一個城市？", "Boundary layer"]})
    table = identify_phrases(topics, "segmenter", convert="t2s")
    assert table["qid"].tolist() == ["1", "2"]
    assert "城市" in table["phrases"][0] and table["phrases"][1] == []
    table = identify_phrases(topics, "list", phrase_list=["boundary layer"])
    assert table["phrases"].tolist() == [[], ["Boundary layer"]]
