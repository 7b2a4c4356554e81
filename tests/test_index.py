"""Tests of the Dask index build and the IndexReader."""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
import weakref
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irgrid.index.build as build_mod
import irgrid.index.pages as pages_mod
import irgrid.index.reader as reader_mod
import irgrid.index.tasks as tasks_mod
from irgrid.analysis import Analyzer
from irgrid.errors import InputFormatError
from irgrid.index import IndexReader, Postings, bucket_of, build_index
from irgrid.index.forward import build_forward_index, forward_index_dir

DOCS = [
    ("d1", "The cat sat on the mat."),
    ("d2", "A dog and a cat. The dog's bone!"),
    ("d3", ""),
    ("d4", "Cats, dogs, mats: cat dog mat"),
    ("d5", "the the the"),
    ("d6", "Mat mat MAT cat"),
    ("d7", "bone of a dog"),
]
# no stemming, Lucene stop words: easy to count by hand
HAND = Analyzer(stemmer="none", stopwords="lucene")


def write_shards(docs, directory: Path, num_shards: int, empty_at: int | None = None) -> Path:
    """Contiguous runs of ``docs`` in ``num_shards`` Parquet shards (plus an optional empty one)."""
    directory.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, len(docs), num_shards + 1).round().astype(int)
    chunks = [docs[bounds[i] : bounds[i + 1]] for i in range(num_shards)]
    if empty_at is not None:
        chunks.insert(empty_at, [])
    for i, chunk in enumerate(chunks):
        table = pa.table(
            {"docno": pa.array([d for d, _ in chunk], pa.string()), "text": pa.array([t for _, t in chunk], pa.string())}
        )
        pq.write_table(table, directory / f"part-{i:04d}.parquet")
    return directory


def file_hashes(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def build(docs, tmp: Path, name: str, num_shards=2, analyzer=HAND, num_buckets=4, scheduler="sync", **kw) -> Path:
    shards = write_shards(docs, tmp / f"{name}-in", num_shards, kw.pop("empty_at", None))
    out = tmp / name
    kw.setdefault("progress", False)
    build_index(shards, out, analyzer, num_buckets=num_buckets, scheduler=scheduler, **kw)
    return out


@pytest.fixture(scope="module")
def hand_index(tmp_path_factory) -> Path:
    """The index of DOCS at ``index/idx``, its forward index where the reader looks for it (``forward/idx``)."""
    index = build(DOCS, tmp_path_factory.mktemp("hand"), "index/idx", num_shards=3)
    build_forward_index(index, forward_index_dir(index))
    return index


# ----------------------------------------------------------------- contents


def test_layout(hand_index):
    files = set(file_hashes(hand_index))
    assert files == {
        "docs.parquet",
        "terms.parquet",
        "stats.json",
        *(f"postings/bucket-{b:04d}.parquet" for b in range(4)),
        *(f"positions/bucket-{b:04d}.parquet" for b in range(4)),
    }
    assert pq.read_schema(hand_index / "postings/bucket-0000.parquet").names == ["docid", "tf"]
    assert pq.read_schema(hand_index / "positions/bucket-0000.parquet").names == ["position"]
    assert pq.read_schema(hand_index / "terms.parquet").names == ["term", "df", "cf", "bucket", "start"]
    for f in [hand_index / "postings/bucket-0000.parquet", hand_index / "positions/bucket-0000.parquet",
              hand_index / "docs.parquet", hand_index / "terms.parquet",
              forward_index_dir(hand_index) / "part-0000.parquet"]:
        assert set(pq.ParquetFile(f).metadata.metadata) == {b"ARROW:schema"}  # no pandas metadata
    # docids and positions are stored as bit-packed differences (the gaps), uncompressed
    for f, column in [("postings/bucket-0000.parquet", 0), ("positions/bucket-0000.parquet", 0)]:
        chunk = pq.ParquetFile(hand_index / f).metadata.row_group(0).column(column)
        assert "DELTA_BINARY_PACKED" in chunk.encodings and chunk.compression == "UNCOMPRESSED"


def test_hand_counted_statistics(hand_index):
    r = IndexReader(hand_index)
    # analysed texts (stop words: the, a, and, on, of):
    # d1 cat sat mat | d2 dog cat dog bone | d3 - | d4 cats dogs mats cat dog mat
    # d5 - | d6 mat mat mat cat | d7 bone dog
    assert r.num_docs == 7
    assert list(r.docnos) == ["d1", "d2", "d3", "d4", "d5", "d6", "d7"]
    assert r.doc_lengths.tolist() == [3, 4, 0, 6, 0, 4, 2]
    assert r.doc_unique_terms.tolist() == [3, 3, 0, 6, 0, 2, 2]
    assert r.doc_lengths.dtype == np.int32
    assert r.stats["total_length"] == 19
    assert r.avg_doc_length == pytest.approx(19 / 7)
    assert r.num_terms == 8
    assert r.analyzer == HAND
    assert r.term_stats(["cat", "dog", "mat", "bone", "sat", "cats", "zebra"]) == {
        "cat": (4, 4),
        "dog": (3, 4),
        "mat": (3, 5),
        "bone": (2, 2),
        "sat": (1, 1),
        "cats": (1, 1),
    }
    terms = pq.read_table(hand_index / "terms.parquet")
    # rows: bucket after bucket, terms sorted within each
    expected = sorted(["bone", "cat", "cats", "dog", "dogs", "mat", "mats", "sat"], key=lambda t: (bucket_of(t, 4), t))
    assert terms.column("term").to_pylist() == expected
    assert terms.column("bucket").to_pylist() == [bucket_of(t, 4) for t in expected]
    assert terms.schema.field("cf").type == pa.int64()
    assert r.vocabulary == expected


def test_hand_counted_postings(hand_index):
    r = IndexReader(hand_index)
    p = r.postings(["mat", "dog", "zebra", "mat"], positions=True)
    assert set(p) == {"mat", "dog"}
    mat = p["mat"]
    assert isinstance(mat, Postings)
    assert mat.docids.tolist() == [0, 3, 5] and mat.docids.dtype == np.int32
    assert mat.tfs.tolist() == [1, 1, 3] and mat.tfs.dtype == np.int32
    # d1 "The cat sat on the mat": mat at 5; d4 "... cat dog mat": 5; d6 "Mat mat MAT cat"
    assert [x.tolist() for x in mat.positions] == [[5], [5], [0, 1, 2]]
    dog = p["dog"]
    # d2 "A dog and a cat. The dog's bone!" -> dog 1, dog's 6; d4 dog at 4; d7 "bone of a dog" 3
    assert dog.docids.tolist() == [1, 3, 6]
    assert dog.tfs.tolist() == [2, 1, 1]
    assert [x.tolist() for x in dog.positions] == [[1, 6], [4], [3]]
    assert r.postings(["cat"])["cat"].positions is None


def test_forward_and_docids(hand_index):
    r = IndexReader(hand_index)
    assert r.forward([5, 0, 2]) == [["mat", "mat", "mat", "cat"], ["cat", "sat", "mat"], []]
    assert r.docids_of(["d7", "zz", "d1"]) == {"d7": 6, "d1": 0}
    with pytest.raises(IndexError):
        r.forward([7])


def test_stats_json(hand_index):
    text = (hand_index / "stats.json").read_text()
    stats = json.loads(text)
    assert list(stats) == sorted(stats)
    # "forward": false: the forward index is never in the postings index's directory
    assert stats["num_buckets"] == 4 and stats["format_version"] == 4 and stats["forward"] is False
    assert Analyzer.from_dict(stats["analyzer"]) == HAND


def test_postings_are_in_their_bucket_and_sorted(hand_index):
    """terms.parquet's (bucket, start, df) rows of each term hold its postings, terms and docids ascending."""
    terms = pq.read_table(hand_index / "terms.parquet").to_pylist()
    for b in range(4):
        t = pq.read_table(hand_index / f"postings/bucket-{b:04d}.parquet")
        in_bucket = [row for row in terms if row["bucket"] == b]
        assert all(bucket_of(row["term"], 4) == b for row in in_bucket)
        term_of_row = [None] * t.num_rows
        for row in in_bucket:
            for i in range(row["start"], row["start"] + row["df"]):
                assert term_of_row[i] is None
                term_of_row[i] = row["term"]
        assert None not in term_of_row  # every row belongs to exactly one term
        keys = list(zip(term_of_row, t.column("docid").to_pylist()))
        assert keys == sorted(keys)
        # the positions file: a row per token, a term's after the terms before it in the bucket,
        # a posting's after the postings before it (tf rows each), ascending within a posting
        positions = pq.read_table(hand_index / f"positions/bucket-{b:04d}.parquet").column("position").to_pylist()
        tfs = t.column("tf").to_pylist()
        assert len(positions) == sum(tfs) == sum(row["cf"] for row in in_bucket)
        ends = np.cumsum([0] + tfs)
        for lo, hi in zip(ends[:-1], ends[1:]):
            assert positions[lo:hi] == sorted(set(positions[lo:hi]))


def test_old_format_is_refused(hand_index, tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    stats = json.loads((hand_index / "stats.json").read_text())
    (old / "stats.json").write_text(json.dumps(dict(stats, format_version=2)))
    with pytest.raises(InputFormatError, match=r"stats\.json.*format_version 4.*found '2'"):
        IndexReader(old)


def test_the_index_holds_no_forward_index_and_the_reader_says_where_it_looked(tmp_path):
    """The postings index has no forward/; forward() without a forward index names the directory it looked in."""
    index = build(DOCS, tmp_path, "index/idx", num_shards=3)
    assert not (index / "forward").exists()
    assert IndexReader(index).forward_path == tmp_path / "forward" / "idx"
    with pytest.raises(InputFormatError, match=r"forward/idx: expected a forward index directory with stats\.json"):
        IndexReader(index).forward([0])


# ------------------------------------------------------------- determinism


def test_byte_identical_for_any_shard_count(tmp_path):
    a = Analyzer()
    ref = file_hashes(build(DOCS, tmp_path, "one", num_shards=1, analyzer=a))
    for k in (2, 3, 5):
        assert file_hashes(build(DOCS, tmp_path, f"k{k}", num_shards=k, analyzer=a)) == ref
    assert file_hashes(build(DOCS, tmp_path, "empty", num_shards=3, analyzer=a, empty_at=1)) == ref
    assert file_hashes(build(DOCS, tmp_path, "threads", num_shards=3, analyzer=a, scheduler="threads")) == ref


@pytest.mark.slow
def test_small_runs_and_default_process_scheduler(tmp_path, monkeypatch):
    ref = file_hashes(build(DOCS, tmp_path, "ref", num_shards=1))
    assert tasks_mod._term_groups(np.array([2, 1, 9, 1, 1, 1, 0]), 3) == [(0, 2), (2, 3), (3, 7)]
    # a run per document, and a word table that must grow many times, give the same index
    monkeypatch.setattr(tasks_mod, "RUN_TOKENS", 1)
    monkeypatch.setattr(tasks_mod, "READ_BATCH_ROWS", 1)
    monkeypatch.setattr(tasks_mod._Vocabulary, "INITIAL_SLOTS", 2)
    # bucket merges in groups of a few tokens, frequent terms streamed alone
    monkeypatch.setattr(tasks_mod, "TOKENS_PER_BUCKET", 3)
    assert file_hashes(build(DOCS, tmp_path, "runs", num_shards=2)) == ref
    monkeypatch.undo()
    # a local pool of processes, and the default for these small shards (threads)
    assert file_hashes(build(DOCS, tmp_path, "procs", num_shards=3, scheduler="processes", num_workers=2,
                             progress=True)) == ref
    assert file_hashes(build(DOCS, tmp_path, "default", num_shards=3, scheduler=None, num_workers=2, progress=True)) == ref


def test_a_build_without_a_scheduler_uses_threads_for_small_shards_and_processes_for_large(tmp_path, monkeypatch):
    shards = [(tmp_path / f"part-{i}.parquet", 10) for i in range(2)]
    for path, _ in shards:
        path.write_bytes(b"x" * 1000)
    monkeypatch.setattr(build_mod, "THREADS_BELOW_BYTES", 2001)
    assert build_mod.default_local_scheduler([path for path, _ in shards]) == "threads"
    monkeypatch.setattr(build_mod, "THREADS_BELOW_BYTES", 2000)  # 2,000 bytes in all: not below
    assert build_mod.default_local_scheduler([path for path, _ in shards]) == "processes"
    # what the workflow's build_index job reserves: one core on threads, all it has on processes,
    # all it has while the shards are still to be written
    assert build_mod.local_build_cores(tmp_path, 2) == 2
    monkeypatch.setattr(build_mod, "THREADS_BELOW_BYTES", 2001)
    assert build_mod.local_build_cores(tmp_path, 2) == 1
    assert build_mod.local_build_cores(tmp_path / "not-yet", 2) == 2


@pytest.mark.slow
def test_a_large_collection_is_built_on_threads_only_when_its_analysis_is_almost_all_gil_free(tmp_path, monkeypatch):
    def shards(name, texts):
        directory = tmp_path / name
        directory.mkdir()
        pq.write_table(pa.table({"docno": [f"d{i}" for i in range(len(texts))], "text": texts}),
                       directory / "part-0000.parquet")
        return sorted(directory.glob("part-*.parquet"))

    monkeypatch.setattr(build_mod, "THREADS_BELOW_BYTES", 1)  # every collection counts as large
    plain = Analyzer.from_dict({"tokenizer": "lucene", "stemmer": "none"})
    # 1,000 plain words a document, one distinct word with punctuation in all: 1 / 2,000 of the words
    words = " ".join(f"w{i % 50}" for i in range(1000))
    ascii_words = shards("ascii", [words + " end.", words + " end."])
    assert build_mod.python_analysed_share(ascii_words, plain) == pytest.approx(1 / 2002)
    assert build_mod.default_local_scheduler(ascii_words, plain) == "threads"
    # the same words with a stemmer: every distinct word goes through Python (51 of 2,002)
    porter = Analyzer.from_dict({"tokenizer": "lucene", "stemmer": "porter"})
    assert build_mod.python_analysed_share(ascii_words, porter) == pytest.approx(51 / 2002)
    assert build_mod.default_local_scheduler(ascii_words, porter) == "processes"
    # Chinese runs between spaces: each a new word for Python's tokenizer
    chinese = shards("chinese", ["資訊檢索 的 模型。 " * 3, "短語 模型 與 不可分性。"])
    assert build_mod.default_local_scheduler(chinese, Analyzer.from_dict({"tokenizer": "cjk"})) == "processes"
    # a punctuated word in every tenth: above the share
    punctuated = shards("punctuated", [" ".join(f"w{i}," if i % 10 == 0 else f"w{i}" for i in range(1000))])
    assert build_mod.default_local_scheduler(punctuated, plain) == "processes"
    # without an analyzer (the workflow sizing its job before the build): the size rule alone
    assert build_mod.default_local_scheduler(ascii_words) == "processes"
    # a large build on threads is given every core: only the small-shard rule reserves one
    assert build_mod.local_build_cores(ascii_words[0].parent, 2) == 2
    # build_index given no scheduler asks with its analyzer, and its bytes are those of a build on processes
    chosen = []
    choose = build_mod.default_local_scheduler
    monkeypatch.setattr(build_mod, "default_local_scheduler", lambda *args: chosen.append(choose(*args)) or chosen[-1])
    build_index(ascii_words[0].parent, tmp_path / "default-index", plain, num_buckets=2, progress=False, num_workers=2)
    build_index(ascii_words[0].parent, tmp_path / "processes-index", plain, num_buckets=2, scheduler="processes",
                progress=False, num_workers=2)
    assert chosen == ["threads"]
    threads, processes = file_hashes(tmp_path / "default-index"), file_hashes(tmp_path / "processes-index")
    assert threads == processes


def test_shards_of_one_worker_vocabulary_share_its_ids_and_give_the_same_index(tmp_path, monkeypatch):
    # the bucket tasks keep one local-id table per worker vocabulary (not one per shard): shards
    # analysed by one worker name the same vocabulary, and the index is the bytes of a 1-shard build
    ref = file_hashes(build(DOCS, tmp_path, "ref", num_shards=1))
    results = []
    analyze = build_mod.analyze_shard
    monkeypatch.setattr(build_mod, "analyze_shard", lambda *a, **k: results.append(analyze(*a, **k)) or results[-1])
    assert file_hashes(build(DOCS, tmp_path, "one-worker", num_shards=4, scheduler="sync")) == ref
    assert len(results) == 4 and len({r["vocabulary"] for r in results}) == 1
    # a bucket task given no vocabulary names (per-shard tables, as before) writes the same bytes
    merge = build_mod.merge_bucket

    def merge_without_vocabulary_names(b, tmp, shard_results, **k):
        return merge(b, tmp, [{k: v for k, v in r.items() if k != "vocabulary"} for r in shard_results], **k)

    monkeypatch.setattr(build_mod, "merge_bucket", merge_without_vocabulary_names)
    assert file_hashes(build(DOCS, tmp_path, "per-shard-tables", num_shards=4, scheduler="sync")) == ref


def test_a_lost_workers_analysis_finishing_late_changes_no_byte(tmp_path, monkeypatch):
    # Dask runs a lost worker's shard again elsewhere while the lost worker, closing gracefully
    # (scancel sends SIGTERM), may finish its own run after it: here each shard's second run, in a
    # thread of its own (another worker vocabulary, other local ids), ends after the counted one.
    ref = file_hashes(build(DOCS, tmp_path, "ref", num_shards=1))
    analyze = build_mod.analyze_shard
    late = []

    def analysis_with_a_late_second_run(*args, **kwargs):
        counted = analyze(*args, **kwargs)
        thread = threading.Thread(target=lambda: late.append(analyze(*args, **kwargs)))
        thread.start()
        thread.join()
        return counted

    monkeypatch.setattr(build_mod, "analyze_shard", analysis_with_a_late_second_run)
    assert file_hashes(build(DOCS, tmp_path, "late-runs", num_shards=4, scheduler="sync")) == ref
    assert len(late) == 4 and len({r["vocabulary"] for r in late}) == 4  # each late run had its own ids


def test_a_bucket_merge_run_again_after_its_first_run_finished_changes_no_byte(tmp_path, monkeypatch):
    # a worker lost after finishing a bucket, before telling the scheduler: the bucket's task runs
    # again, its pieces already removed; and a second run overlapping the first, which removes the
    # pieces while the second still reads them
    ref = file_hashes(build(DOCS, tmp_path, "ref", num_shards=3))
    merge = build_mod.merge_bucket
    summaries = []

    def merged_twice(b, tmp, shard_results):
        first = merge(b, tmp, shard_results)
        summaries.append((first, merge(b, tmp, shard_results)))
        return summaries[-1][1]

    monkeypatch.setattr(build_mod, "merge_bucket", merged_twice)
    assert file_hashes(build(DOCS, tmp_path, "merged-twice", num_shards=3)) == ref
    assert len(summaries) == 4 and all(first == second and first["postings"] for first, second in summaries)

    load = tasks_mod._load_arrays
    overlapping = []

    def merged_while_another_run_finishes(b, tmp, shard_results):
        def load_after_the_other_run(path):
            if not overlapping or overlapping[-1][0] != b:  # the other run ends as this one reads its first piece
                overlapping.append([b, None])
                overlapping[-1][1] = merge(b, tmp, shard_results)  # its own reads come here too: b is listed
            return load(path)

        with monkeypatch.context() as patch:
            patch.setattr(tasks_mod, "_load_arrays", load_after_the_other_run)
            second = merge(b, tmp, shard_results)
        assert second == overlapping[-1][1]
        return second

    monkeypatch.setattr(build_mod, "merge_bucket", merged_while_another_run_finishes)
    assert file_hashes(build(DOCS, tmp_path, "overlapping", num_shards=3)) == ref
    assert len(overlapping) == 4


def test_a_bucket_merge_frees_its_worker_threads_vocabulary(tmp_path, monkeypatch):
    # the sync scheduler runs every task in this thread: the shards leave it a vocabulary, which
    # the first merge drops (the analysis is over), and later builds here start a new one
    states = []
    merge = build_mod.merge_bucket

    def merge_noting_the_vocabulary(b, tmp, shard_results, **k):
        before = getattr(tasks_mod._VOCABULARIES, "current", None)
        result = merge(b, tmp, shard_results, **k)
        states.append((before is not None, getattr(tasks_mod._VOCABULARIES, "current", None) is None))
        return result

    monkeypatch.setattr(build_mod, "merge_bucket", merge_noting_the_vocabulary)
    ref = file_hashes(build(DOCS, tmp_path, "ref", num_shards=3))
    assert len(states) == 4 and states[0] == (True, True) and all(dropped for _, dropped in states)
    assert file_hashes(build(DOCS, tmp_path, "again", num_shards=2)) == ref


def test_concatenating_a_bucket_column_frees_its_pieces():
    parts = [np.arange(3, dtype=np.int32), np.arange(5, 7, dtype=np.int32)]
    refs = [weakref.ref(part) for part in parts]
    out = tasks_mod._concatenate_freeing(parts)
    assert out.tolist() == [0, 1, 2, 5, 6] and parts == []
    assert all(ref() is None for ref in refs)  # the list held the only references
    empty = tasks_mod._concatenate_freeing([])
    assert empty.dtype == np.int32 and len(empty) == 0


@pytest.mark.slow
def test_distributed_cluster_gives_same_bytes(tmp_path):
    distributed = pytest.importorskip("distributed")
    ref = file_hashes(build(DOCS, tmp_path, "ref", num_shards=1))
    # a scheduler and two worker processes on loopback, as on a cluster (one machine here)
    with distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, protocol="tcp://", host="127.0.0.1",
        dashboard_address=None,
    ) as cluster, distributed.Client(cluster) as client:
        out = build(DOCS, tmp_path, "dist", num_shards=3, scheduler=client)
        assert file_hashes(out) == ref
        out2 = build(DOCS, tmp_path, "dist-addr", num_shards=2, scheduler=cluster.scheduler_address, progress=True)
        assert file_hashes(out2) == ref


# ------------------------------------------------------------------ property

WORDS = ["alpha", "beta", "gamma", "the", "cats", "cat's", "running", "run", "x1", "3.14", "Alpha", "élan", "Ωmega",
         "zoë", "漢字"]


def brute_force(docs, analyzer):
    postings: dict[str, dict[int, list[int]]] = defaultdict(dict)
    for docid, (_, text) in enumerate(docs):
        terms, positions = analyzer.analyze_with_positions(text)
        for t, p in zip(terms, positions):
            postings[t].setdefault(docid, []).append(p)
    return postings


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join), min_size=1, max_size=12),
    num_shards=st.integers(1, 4),
    num_buckets=st.integers(1, 5),
)
def test_postings_equal_brute_force(texts, num_shards, num_buckets):
    docs = [(f"doc{i}", t) for i, t in enumerate(texts)]
    analyzer = Analyzer()
    with tempfile.TemporaryDirectory() as tmp:
        out = build(docs, Path(tmp), "idx", num_shards=min(num_shards, len(docs)), analyzer=analyzer,
                    num_buckets=num_buckets)
        r = IndexReader(out)
        expected = brute_force(docs, analyzer)
        got = r.postings(list(expected) + ["nothere"], positions=True)
        assert set(got) == set(expected)
        for term, by_doc in expected.items():
            p = got[term]
            assert p.docids.tolist() == sorted(by_doc)
            assert p.tfs.tolist() == [len(by_doc[d]) for d in sorted(by_doc)]
            assert [x.tolist() for x in p.positions] == [by_doc[d] for d in sorted(by_doc)]
        stats = r.term_stats(expected)
        assert stats == {t: (len(v), sum(map(len, v.values()))) for t, v in expected.items()}
        lengths = [len(analyzer(t)) for _, t in docs]
        assert r.doc_lengths.tolist() == lengths
        build_forward_index(out, Path(tmp) / "forward")
        forward = IndexReader(out, forward_path=Path(tmp) / "forward").forward(range(len(docs)))
        assert forward == [analyzer(t) for _, t in docs]
        assert r.num_terms == len(expected)
        # postings copied straight into a query set's flat arrays: each term at every place asked for
        placed = sorted(expected)[1::2] + sorted(expected)[:1]
        placements, at = {}, 0
        for term in placed + placed[:1]:  # the first term placed twice, as a term two queries share
            placements.setdefault(term, []).append(at)
            at += len(expected[term])
        docids, tfs = np.full(at, -1, np.int32), np.full(at, -1, np.int32)
        r.postings_into(placements, docids, tfs)
        for term, starts in placements.items():
            by_doc = expected[term]
            for start in starts:
                assert docids[start:start + len(by_doc)].tolist() == sorted(by_doc)
                assert tfs[start:start + len(by_doc)].tolist() == [len(by_doc[d]) for d in sorted(by_doc)]
        # the flat arrays of window counting: the same postings, some terms at a time
        asked = sorted(expected)[::2] + ["nothere"]
        flat = r.positional_postings(asked)
        assert set(flat.spans) == set(asked) - {"nothere"}
        assert flat.offsets[-1] == len(flat.positions) and flat.offsets.dtype == np.int64
        for term, (lo, hi) in flat.spans.items():
            by_doc = expected[term]
            assert flat.docids[lo:hi].tolist() == sorted(by_doc)
            assert flat.tfs[lo:hi].tolist() == [len(by_doc[d]) for d in sorted(by_doc)]
            assert [flat.positions[flat.offsets[i]:flat.offsets[i + 1]].tolist() for i in range(lo, hi)] == [
                by_doc[d] for d in sorted(by_doc)]


# --------------------------------------------------------------- selective IO


def test_postings_read_only_the_needed_buckets(hand_index, monkeypatch):
    opened = []
    real = reader_mod.pq.read_table

    def spy(path, *args, **kwargs):
        opened.append(f"{Path(path).parent.name}/{Path(path).name}")
        return real(path, *args, **kwargs)

    r = IndexReader(hand_index)
    r.term_stats(["cat"])  # the term dictionary is loaded once
    monkeypatch.setattr(reader_mod.pq, "read_table", spy)
    real_file = reader_mod.pq.ParquetFile
    monkeypatch.setattr(reader_mod.pq, "ParquetFile", lambda path, *a, **k: (spy(path) and None) or real_file(path, *a, **k))
    real_pages = pages_mod.PostingsPages.__init__  # the postings' pages are read without pyarrow
    monkeypatch.setattr(pages_mod.PostingsPages, "__init__", lambda self, path: (spy(path) and None) or real_pages(self, path))
    r.postings(["cat", "bone"])
    expected = {f"postings/bucket-{bucket_of(t, 4):04d}.parquet" for t in ("cat", "bone")}
    assert set(opened) == expected and len(opened) == len(expected)  # no positions read
    opened.clear()
    r.postings(["cat"], positions=True)
    assert opened == [f"positions/bucket-{bucket_of('cat', 4):04d}.parquet"]  # the postings file is open already


def test_term_filter_skips_row_groups(tmp_path, monkeypatch):
    monkeypatch.setattr(tasks_mod, "POSTINGS_ROW_GROUP", 2)
    monkeypatch.setattr(tasks_mod, "POSITIONS_ROW_GROUP", 2)
    docs = [(f"d{i}", " ".join(f"w{j}" for j in range(i, i + 5))) for i in range(20)]
    out = build(docs, tmp_path, "idx", num_shards=3, analyzer=HAND, num_buckets=1)
    path = out / "postings/bucket-0000.parquet"
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups > 10
    assert all(meta.row_group(i).num_rows <= 2 for i in range(meta.num_row_groups))
    assert pq.ParquetFile(out / "positions/bucket-0000.parquet").metadata.num_row_groups > 10
    read_groups = []
    real = pq.ParquetFile.read_row_groups
    monkeypatch.setattr(pq.ParquetFile, "read_row_groups",
                        lambda self, groups, *a, **k: read_groups.append(list(groups)) or real(self, groups, *a, **k))
    real_pages = pages_mod.read_rows
    monkeypatch.setattr(pages_mod, "read_rows",
                        lambda pages, groups, *a: read_groups.append(groups.tolist()) or real_pages(pages, groups, *a))
    p = IndexReader(out).postings(["w7"], positions=True)["w7"]
    assert p.docids.tolist() == [3, 4, 5, 6, 7]
    assert [x.tolist() for x in p.positions] == [[4], [3], [2], [1], [0]]
    # w7's 5 rows span 3 row groups at most, in the postings file (its pages) and in the positions file (tf 1)
    assert len(read_groups) == 2 and all(1 <= len(groups) <= 3 for groups in read_groups)


# ------------------------------------------------------------------ failures


def corrupt_data_pages(path: Path) -> None:
    """Overwrite the column data of a Parquet file, keeping its footer readable."""
    raw = bytearray(path.read_bytes())
    footer_len = int.from_bytes(raw[-8:-4], "little")
    data_end = len(raw) - 8 - footer_len
    for i in range(4, data_end):
        raw[i] = 0xFF
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("scheduler", ["sync", "threads", pytest.param("processes", marks=pytest.mark.slow)])
def test_failed_build_leaves_no_index(tmp_path, scheduler):
    docs = [(f"d{i}", f"text number {i} with words") for i in range(30)]
    shards = write_shards(docs, tmp_path / "in", 3)
    assert pq.ParquetFile(shards / "part-0001.parquet").metadata.num_rows == 10  # footer fine before
    corrupt_data_pages(shards / "part-0001.parquet")
    assert pq.ParquetFile(shards / "part-0001.parquet").metadata.num_rows == 10  # still readable footer

    out = tmp_path / "idx"
    with pytest.raises(InputFormatError, match="part-0001.parquet"):
        build_index(shards, out, HAND, num_buckets=2, scheduler=scheduler, progress=False)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]

    # a failed rebuild keeps the previous complete index untouched
    good = build(DOCS, tmp_path, "good", num_shards=2)
    before = file_hashes(good)
    with pytest.raises(InputFormatError):
        build_index(shards, good, HAND, num_buckets=2, scheduler=scheduler, progress=False)
    assert file_hashes(good) == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((".tmp", ".old")) or ".tmp-" in p.name]


def test_rebuild_replaces_existing_index(tmp_path):
    out = build(DOCS, tmp_path, "idx", num_shards=2)
    (out / "stale-file").write_text("x")
    shards = write_shards(DOCS[:3], tmp_path / "small", 1)
    build_index(shards, out, HAND, num_buckets=4, scheduler="sync", progress=False)
    assert not (out / "stale-file").exists()
    assert IndexReader(out).num_docs == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["idx", "idx-in", "small"])


def test_input_errors(tmp_path):
    with pytest.raises(InputFormatError, match="part-"):
        build_index(tmp_path, tmp_path / "idx", HAND, scheduler="sync", progress=False)
    bad = tmp_path / "bad"
    bad.mkdir()
    pq.write_table(pa.table({"id": ["a"], "text": ["x"]}), bad / "part-0000.parquet")
    with pytest.raises(InputFormatError, match="docno"):
        build_index(bad, tmp_path / "idx", HAND, scheduler="sync", progress=False)
    dup = write_shards([("a", "x"), ("b", "y"), ("a", "z")], tmp_path / "dup", 2)
    with pytest.raises(InputFormatError, match="unique docnos, found \"duplicates 'a'\"$"):
        build_index(dup, tmp_path / "idx", HAND, scheduler="sync", progress=False)
    assert not (tmp_path / "idx").exists()


def test_shard_errors_survive_pickling():
    import pickle

    err = tasks_mod.ShardFormatError("p.parquet", 3, "x", "y")
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, InputFormatError) and str(again) == str(err)


# The build analyses each distinct whitespace-separated word once and concatenates;
# that equals analysing the whole text because no token spans whitespace.  Checked
# here on arbitrary text: Unicode whitespace, marks, apostrophes, ideographs...
TEXT_ALPHABET = st.sampled_from(list(
    "abcXYZ019 \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2000\u2028\u3000\u200b"
    "'\u2019.,;:_-!/\u0301\u0308\u200d\u00e9\u00df\u0130\u03a9\u6f22\u5b57\u3042\U0001F600"
))


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.text(TEXT_ALPHABET, max_size=40), min_size=1, max_size=6),
    stemmer=st.sampled_from(["none", "porter"]),
    stopwords=st.sampled_from(["none", "lucene"]),
    tokenizer=st.sampled_from(["lucene", "alnum"]),
)
def test_word_by_word_analysis_equals_whole_text_analysis(texts, stemmer, stopwords, tokenizer):
    from irgrid.index.kernels import expand_tokens

    analyzer = Analyzer(tokenizer=tokenizer, stemmer=stemmer, stopwords=stopwords)
    vocabulary = tasks_mod._Vocabulary(analyzer, 3)
    vocabulary.table = np.zeros((4, 3), np.uint64)  # grows while the words arrive
    word_doc_offsets, word_ids = vocabulary.word_ids(pa.array(texts, pa.string()))
    terms, docids, positions, lengths, unique = expand_tokens(
        word_doc_offsets, word_ids, vocabulary.word_info, vocabulary.kept_terms, vocabulary.kept_rel, 0,
        np.full(len(vocabulary.terms), -1, np.int32),
    )
    strings = vocabulary.terms.to_pylist()
    for d, text in enumerate(texts):
        expected_terms, expected_positions = analyzer.analyze_with_positions(text)
        rows = docids == d
        assert [strings[t] for t in terms[rows]] == expected_terms, text
        assert positions[rows].tolist() == expected_positions, text
        assert lengths[d] == len(expected_terms)
        assert unique[d] == len(set(expected_terms))


def test_cli_index_then_forward_index(tmp_path):
    """`irgrid index` writes no forward index (there is no option for one); `irgrid forward-index` makes it."""
    from irgrid import cli

    shards = write_shards(DOCS, tmp_path / "in", 2)
    analyzer = json.dumps(HAND.to_dict())
    index, forward = tmp_path / "index" / "hand", tmp_path / "forward" / "hand"
    assert cli.main(["index", "--docs", str(shards), "--analyzer", analyzer, "--out", str(index)]) == 0
    with pytest.raises(SystemExit):
        cli.main(["index", "--docs", str(shards), "--analyzer", analyzer, "--no-forward", "--out", str(index)])
    assert not (index / "forward").exists() and not forward.exists()
    assert cli.main(["forward-index", "--index", str(index), "--workers", "2", "--out", str(forward)]) == 0
    assert IndexReader(index).forward([0, 2]) == [["cat", "sat", "mat"], []]
