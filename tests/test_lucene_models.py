"""Lucene-exact pieces against Lucene 9.5's own output (tests/peers/lucene-9.5.json, made with Anserini 0.21's jar).

One-byte document lengths (SmallFloat), Porter as Lucene implements it, and the analyzer ``lucene``
against Anserini's DefaultEnglishAnalyzer; then the two Lucene families on hand-computed documents.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml
from common import REPO

from irgrid.analysis.analyzer import Analyzer
from irgrid.analysis.stem import get_stemmer
from irgrid.analysis.tokenize import lucene_tokenize
from irgrid.models.lucene import byte4_to_int, int_to_byte4, lucene_length
from irgrid.retrieve import retrieve_grid
from tiny_index import TinyIndex

LUCENE = json.loads((Path(__file__).parent / "peers" / "lucene-9.5.json").read_text(encoding="utf-8"))

pytestmark = pytest.mark.peers


def test_one_byte_lengths_decode_as_lucenes():
    for length, decoded in LUCENE["decoded_lengths"].items():
        assert byte4_to_int(int_to_byte4(int(length))) == decoded
        assert lucene_length([int(length)])[0] == decoded


def test_the_kernels_norm_length_is_the_reference_ports():
    # the fused kernel's per-posting L(|D|) (irgrid.models.parts.bm25_lucene) against the SmallFloat port
    import numpy as np

    from irgrid.models.parts.bm25_lucene import lucene_norm_length

    lengths = np.arange(200_001)
    expected = lucene_length(lengths)
    got = np.array([lucene_norm_length(float(n)) for n in lengths])
    assert np.array_equal(got, expected)
    for length, decoded in LUCENE["decoded_lengths"].items():
        assert lucene_norm_length(float(length)) == decoded


def test_norm_bytes_keep_the_order_of_lengths():
    previous = -1
    for length in range(0, 5000):
        byte = int_to_byte4(length)
        assert 0 <= byte <= 255 and byte >= previous
        assert byte4_to_int(byte) <= length  # rounded down
        previous = byte


def test_lucene_porter_stems_as_lucene():
    stem = get_stemmer("lucene_porter")
    for word, expected in LUCENE["porter"].items():
        assert stem(word) == expected, word
    # the two rules of Porter's reference implementation that the published algorithm lacks
    assert get_stemmer("porter")("apology") == "apologi" and stem("apology") == "apolog"


def test_lucene_analyzer_tokens_as_anserini():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    analyzer = Analyzer.from_dict(config["analyzers"]["lucene"])
    for text, expected in LUCENE["analyzed"].items():
        assert analyzer(text) == expected, text


def test_colon_between_letters_does_not_break():
    assert lucene_tokenize("cpu:i input:a 10:30 a: b") == ["cpu:i", "input:a", "10", "30", "a", "b"]


def test_bm25_lucene_by_hand():
    # 30 documents: d0 holds "x" 3 times among 41 tokens (stored as 40), the others 24 filler tokens
    docs = {"d0": ["x"] * 3 + ["y"] * 38}
    docs.update({f"f{i:02d}": ["z"] * 24 for i in range(29)})
    index = TinyIndex(docs)
    topics = pd.DataFrame({"qid": ["q"], "text": ["x"]})
    [run] = retrieve_grid(index, topics, "bm25_lucene", [{"k1": 0.9, "b": 0.4}])
    avgdl = (41 + 29 * 24) / 30  # exact, as sumTotalTermFreq / docCount
    idf = math.log(1 + (30 - 1 + 0.5) / (1 + 0.5))
    expected = idf * 3 / (3 + 0.9 * (1 - 0.4 + 0.4 * 40 / avgdl))
    assert run["score"].iloc[0] == pytest.approx(expected, rel=1e-12)


def test_ql_lucene_by_hand_clips_at_zero_and_smooths_with_cf_plus_one():
    docs = {"long": ["x"] + ["y"] * 99, "short": ["x", "x", "y"], "none": ["y"] * 5}
    index = TinyIndex(docs)
    [run] = retrieve_grid(index, pd.DataFrame({"qid": ["q"], "text": ["x y"]}), "ql_lucene", [{"mu": 1000}])
    scores = dict(zip(run["docno"], run["score"]))
    total = 108
    p = {"x": (3 + 1) / (total + 1), "y": (105 + 1) / (total + 1)}

    def part(tf, term, length):
        return max(0.0, math.log(1 + tf / (1000 * p[term])) + math.log(1000 / (length + 1000)))

    # |D| 100 is stored as 96 (one byte), 3 and 5 exactly
    assert scores["long"] == pytest.approx(part(1, "x", 96) + part(99, "y", 96), rel=1e-12)
    assert scores["short"] == pytest.approx(part(2, "x", 3) + part(1, "y", 3), rel=1e-12)
    assert scores["none"] == pytest.approx(part(5, "y", 5), rel=1e-12)
    # the clipping is at work: x once in 100 tokens scores below 0 and adds nothing
    assert math.log(1 + 1 / (1000 * p["x"])) + math.log(1000 / 1096) < 0 and part(1, "x", 96) == 0.0
