"""Chinese indexed as characters (tokenizer ``cjk``, analyzer ``chinese``): tokens, a small index counted by hand,
and the phrase model's statistics of a segmenter word (a window of its characters) on it."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml
from common import REPO
from test_index import write_shards

from irgrid.analysis import Analyzer
from irgrid.analysis.tokenize import cjk_tokenize
from irgrid.index import IndexReader, build_index
from irgrid.models import get_model
from irgrid.retrieve.compiled import compile_query_set

CHINESE = Analyzer.from_dict(yaml.safe_load((REPO / "config" / "config.yaml").read_text())
                             ["analyzers"]["chinese"])


@pytest.mark.parametrize(("text", "tokens"), [
    ("台灣的首都", ["台", "灣", "的", "首", "都"]),
    # full-width punctuation separates and is dropped
    ("「台北」，是城市。", ["台", "北", "是", "城", "市"]),
    # NFKC: full-width Latin letters and digits become ASCII words; Latin and digits stay words
    ("ＮＢＡ球員２０１０年", ["NBA", "球", "員", "2010", "年"]),
    ("iPhone 15手機", ["iPhone", "15", "手", "機"]),
    # Traditional and Simplified forms are different characters (no conversion in the index)
    ("灣湾", ["灣", "湾"]),
    # kana and Hangul syllables are characters too
    ("東京とソウル서울", ["東", "京", "と", "ソ", "ウ", "ル", "서", "울"]),
    ("", []),
    ("，。？！", []),
])
def test_cjk_tokenizer(text, tokens):
    assert cjk_tokenize(text) == tokens


def test_chinese_analyzer_lowercases_latin_and_keeps_every_character():
    # no stop words, no stemming: 的 and 是 are terms, "NBA" is lowercased
    assert CHINESE("ＮＢＡ的球員是誰") == ["nba", "的", "球", "員", "是", "誰"]


DOCS = [
    ("p1", "台灣的首都是台北。"),     # 台 灣 的 首 都 是 台 北: 8 tokens
    ("p2", "台北是一個城市，不是國家。"),  # 台 北 是 一 個 城 市 不 是 國 家: 11 tokens
    ("p3", "灣區的城市"),           # 灣 區 的 城 市: 5 tokens
]


@pytest.fixture(scope="module")
def chinese_index(tmp_path_factory) -> IndexReader:
    tmp = tmp_path_factory.mktemp("chinese")
    out = tmp / "index"
    build_index(write_shards(DOCS, tmp / "docs", 2), out, CHINESE, num_buckets=2, scheduler="sync", progress=False)
    return IndexReader(out)


def test_the_index_counts_characters(chinese_index):
    assert chinese_index.stats["num_docs"] == 3
    assert chinese_index.stats["total_length"] == 8 + 11 + 5
    # counted by hand from DOCS: (df, cf)
    assert chinese_index.term_stats(["台", "北", "是", "城", "灣", "的", "國"]) == {
        "台": (2, 3), "北": (2, 2), "是": (2, 3), "城": (2, 2), "灣": (2, 2), "的": (2, 2), "國": (1, 1),
    }
    # punctuation was never indexed
    assert chinese_index.term_stats(["。", "，"]) == {}


def test_a_segmenter_word_is_a_window_of_its_characters(chinese_index):
    # query 台北的城市 with the segmenter words 台北 and 城市 as its phrases
    topics = pd.DataFrame({"qid": ["q1"], "text": ["台北的城市"], "phrases": [["台北", "城市"]]})
    model = get_model("pm")
    point = model.check_point({"mu": 100})
    _, [features] = compile_query_set(chinese_index, topics, model, [point])
    phrases = {" ".join(f.feature.terms): f for f in features if f.group.startswith("P")}
    assert set(phrases) == {"台 北", "城 市"}
    taipei, city = phrases["台 北"].annotation, phrases["城 市"].annotation
    # 台北 adjacent: p1 once (not 台灣), p2 once -> df 2, cf 2; 城市: p2 and p3 -> df 2, cf 2
    assert (taipei.df, taipei.cf) == (2, 2)
    assert (city.df, city.cf) == (2, 2)
    # every phrase is in as many documents as its rarer character: idf difference 0 for 城市
    # (城 df 2, 市 df 2), and for 台北 (台 df 2, 北 df 2): the phrase means nothing its characters do not
    assert taipei.x == pytest.approx(0.0)
    # PMI in bits from the hand counts: p(台北) = 2/24, p(台) = 3/24, p(北) = 2/24
    assert taipei.pmi == pytest.approx(math.log2((2 / 24) / ((3 / 24) * (2 / 24))))
