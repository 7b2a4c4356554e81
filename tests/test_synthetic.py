"""The synthetic collection: deterministic, and distributed as its spec says."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from irgrid.cli import main
from irgrid.collections.synthetic import (
    SYLLABLES,
    SyntheticSpec,
    qrels_table,
    queries_table,
    shard_table,
    word_strings,
    write_synthetic_collection,
)
from irgrid.errors import ConfigError

SMALL = SyntheticSpec(num_docs=3000, vocabulary_size=2000, mean_length=50, num_queries=40,
                      query_rank_band=(20, 1500), docs_per_shard=1000, seed=7)


def test_words_are_distinct_alphabetic_and_frequent_ones_short():
    words = word_strings(np.arange(6000))
    assert len(set(words)) == 6000
    assert all(w.isalpha() and w.islower() for w in words)
    assert words[0] == SYLLABLES[0] and len(words[len(SYLLABLES)]) == 4  # 1 syllable, then 2
    assert [len(w) for w in words] == sorted(len(w) for w in words)


def test_same_spec_same_bytes_and_resume(tmp_path):
    a = write_synthetic_collection(SMALL, tmp_path / "a")
    b = write_synthetic_collection(SMALL, tmp_path / "b")
    for name in ["docs/part-0000.parquet", "docs/part-0002.parquet", "topics.parquet", "qrels.parquet", "spec.json"]:
        assert (a / name).read_bytes() == (b / name).read_bytes()
    assert json.loads((a / "spec.json").read_text())["seed"] == 7
    # a complete directory with the same spec is left as it is
    mtime = (a / "docs/part-0001.parquet").stat().st_mtime_ns
    write_synthetic_collection(SMALL, a)
    assert (a / "docs/part-0001.parquet").stat().st_mtime_ns == mtime
    # another seed gives another collection
    other = shard_table(SyntheticSpec(**{**SMALL.to_dict(), "seed": 8}), 0)
    assert other.column("text") != shard_table(SMALL, 0).column("text")


def test_worker_processes_write_the_same_bytes(tmp_path):
    one = write_synthetic_collection(SMALL, tmp_path / "one")
    two = write_synthetic_collection(SMALL, tmp_path / "two", workers=2)
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    assert len([f for f in files if f.parts[0] == "docs"]) == SMALL.num_shards
    for name in files:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    with pytest.raises(ConfigError, match="workers"):
        write_synthetic_collection(SMALL, tmp_path / "three", workers=0)


def test_lengths_and_zipf_follow_the_spec():
    spec = SyntheticSpec(num_docs=20000, vocabulary_size=5000, mean_length=80, docs_per_shard=20000, seed=3)
    texts = shard_table(spec, 0).column("text").to_pylist()
    lengths = np.array([len(t.split()) for t in texts])
    assert lengths.min() >= 1
    assert abs(lengths.mean() - 80) < 1.5  # log-normal with mean 80: standard error ~0.4
    words = word_strings(np.arange(10))
    counts = {w: 0 for w in words}
    for text in texts[:5000]:
        for w in text.split():
            if w in counts:
                counts[w] += 1
    # Zipf with exponent 1: frequency of rank r is proportional to 1/r
    ratio = counts[words[0]] / counts[words[9]]
    assert 8 < ratio < 12


def test_queries_take_distinct_words_from_the_band():
    table = queries_table(SMALL)
    assert table.num_rows == 40
    band = set(word_strings(np.arange(20, 1500)))
    for text in table.column("text").to_pylist():
        words = text.split()
        assert 2 <= len(words) <= 6 and len(set(words)) == len(words)
        assert set(words) <= band


def test_qrels_judge_distinct_documents_of_the_collection_per_query(tmp_path):
    write_synthetic_collection(SMALL, tmp_path)
    qrels = pq.read_table(tmp_path / "qrels.parquet").to_pandas()
    docnos = set()
    for part in sorted((tmp_path / "docs").glob("part-*.parquet")):
        docnos.update(pq.read_table(part).column("docno").to_pylist())
    assert set(qrels["docno"]) <= docnos
    topics = pq.read_table(tmp_path / "topics.parquet").column("qid").to_pylist()
    assert set(qrels["qid"]) == set(topics)  # every query judged (5-60 documents each)
    sizes = qrels.groupby("qid").size()
    assert sizes.min() >= 5 and sizes.max() <= 60
    assert not qrels.duplicated(["qid", "docno"]).any()
    assert set(qrels["relevance"]) == {0, 1, 2}
    # a query's judgements do not depend on how many queries there are
    fewer = qrels_table(SyntheticSpec(**{**SMALL.to_dict(), "num_queries": 3})).to_pandas()
    assert fewer.equals(qrels[qrels["qid"].isin(["1", "2", "3"])].reset_index(drop=True))


def test_bad_specs_are_refused():
    with pytest.raises(ConfigError, match="num_docs"):
        SyntheticSpec(num_docs=0)
    with pytest.raises(ConfigError, match="query_rank_band"):
        SyntheticSpec(query_rank_band=(10, 5))


def test_cli_writes_a_collection_the_index_builds(tmp_path):
    from irgrid.index import IndexReader, build_index

    assert main(["synthesize", "--out", str(tmp_path / "syn"), "--docs", "500", "--vocabulary", "2000",
                 "--queries", "5", "--docs-per-shard", "200", "--seed", "1"]) == 0
    assert len(list((tmp_path / "syn/docs").glob("part-*.parquet"))) == 3
    stats = build_index(tmp_path / "syn/docs", tmp_path / "idx", {"stemmer": "none", "stopwords": "none"},
                        scheduler="sync", progress=False)
    total_words = sum(len(t.split()) for t in pq.read_table(tmp_path / "syn/docs").column("text").to_pylist())
    assert stats["num_docs"] == 500 and stats["total_length"] == total_words
    assert IndexReader(tmp_path / "idx").num_terms <= 2000
