"""benchmarks/peers.py's PISA peer (pyterrier-pisa) on a small collection made here: its tokens are the
synthetic collection's words, its BM25 scores are PISA's formula computed by hand, and its grid leaves
the built index as it was. scale.py's summary of a peer's grid: a pure function on made-up timings."""

from __future__ import annotations

import math
import random
import sys
from collections import Counter

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from common import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
scale = pytest.importorskip("scale")
harness = pytest.importorskip("harness")

WORDS = ["kabu", "rinino", "geru", "basiru", "lupisi", "nali", "tuvi", "paka", "goku", "deboba", "kasi", "deteni",
         "five", "mo", "zazu", "ofe"]


def pisa_bm25(query: list[str], tokens: list[str], docs: list[list[str]], k1: float, b: float) -> float:
    """PISA's BM25: max(1e-6, log((N - df + 0.5) / (df + 0.5))) (k1 + 1) tf / (tf + k1 (1 - b + b |d| / avgdl)),
    one addend per distinct query term."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    counts = Counter(tokens)
    score = 0.0
    for term in set(query):
        tf = counts[term]
        if not tf:
            continue
        df = sum(term in d for d in docs)
        idf = max(1e-6, math.log((n - df + 0.5) / (df + 0.5)))
        score += idf * (k1 + 1) * tf / (tf + k1 * (1 - b + b * len(tokens) / avgdl))
    return score


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    pytest.importorskip("pyterrier_pisa")
    root = tmp_path_factory.mktemp("pisa-peer")
    rng = random.Random(7)
    docs = [[rng.choice(WORDS[:4]) if rng.random() < 0.5 else rng.choice(WORDS) for _ in range(rng.randint(3, 30))]
            for _ in range(200)]
    docnos = [f"doc{i:03d}" for i in range(len(docs))]
    (root / "docs").mkdir()
    for part, (start, stop) in enumerate([(0, 120), (120, 200)]):  # two shards, read in order
        pq.write_table(pa.table({"docno": docnos[start:stop], "text": [" ".join(d) for d in docs[start:stop]]}),
                       root / "docs" / f"part-{part:04d}.parquet")
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "text": ["lupisi nali", "goku deboba kasi", "zazu ofe five"]})
    import peers

    peer = peers.PISA()
    info = peer.build(root / "docs", root / "pisa")
    return {"root": root, "docs": docs, "docnos": docnos, "topics": topics, "peer": peer, "info": info}


def test_pisa_indexes_the_words_as_they_are(collection):
    info = collection["info"]
    assert info["num_docs"] == 200
    assert info["num_terms"] == len({w for d in collection["docs"] for w in d})  # no stemming, no stop words


@pytest.mark.parametrize("k1,b", [(1.2, 0.75), (0.9, 0.4)])
def test_pisa_scores_are_pisas_bm25(collection, k1, b):
    peer, docs, docnos, topics = collection["peer"], collection["docs"], collection["docnos"], collection["topics"]
    peer.open(collection["root"] / "pisa", topics, k1, b, 1000)
    position = {d: i for i, d in enumerate(docnos)}
    for i, text in enumerate(topics["text"]):
        query = text.split()
        matching = {docnos[j] for j, d in enumerate(docs) if set(query) & set(d)}
        got_docnos, got_scores = peer.top(peer.query(i), 1000)
        assert set(got_docnos) == matching  # every document with a query term, and no other
        assert got_scores == sorted(got_scores, reverse=True)
        for docno, score in zip(got_docnos, got_scores):
            expected = pisa_bm25(query, docs[position[docno]], docs, k1, b)
            assert score == pytest.approx(expected, rel=1e-5), (text, docno)


def test_pisa_grid_redoes_each_point_and_leaves_the_index_alone(collection):
    peer, topics = collection["peer"], collection["topics"]
    index_dir = collection["root"] / "pisa"
    before = sorted(p.name for p in index_dir.iterdir())
    points = [{"k1": 0.6, "b": 0.3}, {"k1": 1.2, "b": 0.75}]
    out = peer.grid(index_dir, topics, points, 1000)
    assert [p["point"] for p in out["per_point"]] == points
    assert all(p["prepare_s"] > 0 and p["retrieve_s"] > 0 for p in out["per_point"])
    matching = sum(sum(bool(set(q.split()) & set(d)) for d in collection["docs"]) for q in topics["text"])
    assert out["rows"] == matching * len(points)
    assert sorted(p.name for p in index_dir.iterdir()) == before  # block-max data made in a scratch copy
    assert not list(index_dir.parent.glob("pisa-grid-*"))  # and the scratch copy removed


def test_summarise_peer_grids_ratios_and_points():
    runs = {"single": [{"seconds": 2.0, "cpu_seconds": 1.5, "per_point": [{"prepare_s": 1.0, "prepare_cpu_s": 0.9,
                                                                           "retrieve_s": 1.0, "retrieve_cpu_s": 0.6}]}],
            "grid20": [{"seconds": 30.0, "cpu_seconds": 24.0,
                        "per_point": [{"prepare_s": 1.0 + i, "prepare_cpu_s": 1.0, "retrieve_s": 0.5,
                                       "retrieve_cpu_s": 0.2} for i in range(20)]}]}
    out = scale.summarise_peer_grids({"pisa": runs})["pisa"]
    assert out["ratio_per_repeat"] == [15.0] and out["cpu_ratio_per_repeat"] == [16.0]
    assert len(out["point_prepare_s"]) == 20  # the grid's points only, not the single run's
    assert harness.med(out["point_prepare_s"]) == pytest.approx(10.5)
