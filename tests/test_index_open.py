"""Tests of what a fresh ranking process reads when it opens an index: the stored docno ranks,
the docno strings and the documents' unique-term counts on first use, the row-group starts made
without each group's metadata, and a prepared query's slots made on first use."""

from __future__ import annotations

import json
import mmap
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from test_index import HAND, build

import irgrid.index.reader as reader_mod
from irgrid.analysis import Analyzer
from irgrid.index import IndexReader
from irgrid.index.format import DOCS_SCHEMA
from irgrid.index.reader import ROW_GROUP_ROWS, _group_starts
from irgrid.models import MODEL_FAMILIES, get_model
from irgrid.retrieve import Scorer
from irgrid.retrieve import populated as populated_module
from irgrid.runs import read_topics

# docnos whose order is not the documents' (nor their lengths'), with ties in the scores below:
# "d10" sorts before "d9", "B" before "a", "é" after every ASCII docno
DOCS = [
    ("d9", "cat dog"),
    ("d10", "cat dog"),
    ("a", "dog bone cat"),
    ("B", "cat"),
    ("é", "cat dog"),
    ("d1", "bone"),
    ("c", ""),
    ("d100", "dog dog cat"),
]


@pytest.fixture(scope="module")
def unsorted_index(tmp_path_factory) -> Path:
    return build(DOCS, tmp_path_factory.mktemp("open"), "idx", num_shards=3, analyzer=HAND)


class WithoutStoredRanks:
    """A reader that has no ``docno_rank`` nor Arrow docnos (as an in-memory index of a test):
    the Scorer sorts the docnos itself."""

    def __init__(self, reader):
        self._reader = reader

    def __getattr__(self, name):
        if name in ("docno_rank", "docnos_arrow"):
            raise AttributeError(name)
        return getattr(self._reader, name)


@pytest.mark.parametrize("num_shards", [1, 3])
def test_stored_docno_rank_is_each_documents_place_among_the_sorted_docnos(tmp_path, num_shards):
    out = build(DOCS, tmp_path, "idx", num_shards=num_shards, analyzer=HAND)
    reader = IndexReader(out)
    docnos = [d for d, _ in DOCS]
    by_docno = sorted(docnos)  # code point order: UTF-8 byte order, pyarrow's
    assert reader.docno_rank.tolist() == [by_docno.index(d) for d in docnos]
    assert reader.docno_rank.dtype == np.int32
    assert pq.read_schema(out / "docs.parquet").equals(DOCS_SCHEMA)


def test_scorer_takes_the_stored_ranks_and_a_reader_without_them_gives_the_same(unsorted_index):
    reader = IndexReader(unsorted_index)
    stored = Scorer(reader)
    sorted_here = Scorer(WithoutStoredRanks(reader))
    assert stored.docno_order.tolist() == sorted_here.docno_order.tolist() == reader.docno_rank.tolist()
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "text": ["cat", "dog cat", "bone"]})
    model = get_model("bm25")
    point = model.check_point({"k1": 1.2, "b": 0.75})
    runs = [scorer.run_table(model, scorer.prepare(topics), point, depth=10) for scorer in (stored, sorted_here)]
    assert runs[0].equals(runs[1])
    # the ties of "cat" (equal lengths score equal) are ranked by docno: "B" < "d10" < "d9" < "é"
    cat = runs[0].filter(pc.equal(runs[0].column("qid"), "1")).column("docno").to_pylist()
    scores = runs[0].filter(pc.equal(runs[0].column("qid"), "1")).column("score").to_pylist()
    for (d1, s1), (d2, s2) in zip(zip(cat, scores), zip(cat[1:], scores[1:])):
        assert s1 > s2 or (s1 == s2 and d1 < d2)


def test_open_reads_no_docno_until_asked(unsorted_index, monkeypatch):
    asked = []
    real = reader_mod.read_parquet_file

    def spy(path, columns=None, **options):
        asked.append((Path(path).name, columns))
        return real(path, columns, **options)

    monkeypatch.setattr(reader_mod, "read_parquet_file", spy)
    reader = IndexReader(unsorted_index)
    assert asked == [("docs.parquet", ["length", "docno_rank"])]
    Scorer(reader)  # the Scorer needs no docno either, nor the unique-term counts
    assert len(asked) == 1 and "docnos_arrow" not in vars(reader)
    assert reader.doc_unique_terms.tolist() == [len(set(text.split())) for _, text in DOCS]
    assert asked[1:] == [("docs.parquet", ["unique_terms"])]
    assert reader.docnos.tolist() == [d for d, _ in DOCS]
    assert reader.docnos_arrow.to_pylist() == [d for d, _ in DOCS]
    assert asked[2:] == [("docs.parquet", ["docno"])]  # read once
    analyzer = HAND
    assert reader.doc_lengths.tolist() == [len(analyzer(t)) for _, t in DOCS]


@pytest.mark.parametrize("rows_per_chunk", [None, 2])
def test_the_term_table_is_one_chunk_a_column_however_the_read_cuts_it(unsorted_index, monkeypatch, rows_per_chunk):
    """The term dictionary as the reader keeps it (one chunk per column, which term lookups take
    whole) against ``pq.read_table``'s, from a read that gives one chunk per column or several."""
    real = reader_mod.read_parquet_file

    def read_cut(path, columns=None, memory_map=False):
        table = real(path, columns, memory_map)
        return table if rows_per_chunk is None else pa.Table.from_batches(table.to_batches(max_chunksize=rows_per_chunk))

    monkeypatch.setattr(reader_mod, "read_parquet_file", read_cut)
    reader = IndexReader(unsorted_index)
    expected = pq.read_table(unsorted_index / "terms.parquet")
    table = reader._term_table()
    assert table.column_names == expected.column_names
    for name in expected.column_names:
        assert table.column(name).num_chunks == 1
        assert table.column(name).chunk(0).to_pylist() == expected.column(name).to_pylist()
    terms = expected.column("term").to_pylist()
    assert reader.term_ids(["zzz", *reversed(terms)]).tolist() == [-1, *reversed(range(len(terms)))]


def group_starts_one_by_one(metadata) -> list[int]:
    """The first row of each row group and the row count, from each group's own metadata."""
    return np.concatenate([[0], np.cumsum([metadata.row_group(i).num_rows
                                           for i in range(metadata.num_row_groups)])]).tolist()


def test_row_group_starts_of_a_built_index(unsorted_index):
    for kind in ("postings", "positions"):
        for path in sorted((unsorted_index / kind).glob("*.parquet")):
            metadata = pq.ParquetFile(path).metadata
            assert _group_starts(metadata, ROW_GROUP_ROWS[kind]).tolist() == group_starts_one_by_one(metadata)


@pytest.mark.parametrize("groups", [[3, 3, 2], [3, 3, 3], [2, 3, 3], [3, 2, 3], [3, 3, 3, 1, 2], [], [1]])
def test_row_group_starts_of_groups_of_any_size(tmp_path, groups):
    """Groups of ``rows_per_group`` rows but the last take their starts from arithmetic; any other
    file, its groups' metadata: the same starts either way."""
    path = tmp_path / "groups.parquet"
    schema = pa.schema([pa.field("docid", pa.int32())])
    with pq.ParquetWriter(path, schema) as writer:
        first = 0
        for rows in groups:
            writer.write_table(pa.table({"docid": pa.array(range(first, first + rows), pa.int32())}),
                               row_group_size=rows)
            first += rows
    metadata = pq.ParquetFile(path).metadata
    assert metadata.num_row_groups == len(groups)
    assert _group_starts(metadata, 3).tolist() == group_starts_one_by_one(metadata) == np.cumsum([0] + groups).tolist()


def test_postings_of_an_index_of_small_row_groups_equal_those_of_one_group(tmp_path, monkeypatch):
    """The reader finds a term's rows in row groups of any size: an index of groups of 3 rows (not
    the format's size, so the starts come from each group's metadata) reads what one of a group does."""
    import irgrid.index.tasks as tasks_mod

    docs = [(f"d{i}", " ".join(f"w{(i * j) % 11}" for j in range(1, 7))) for i in range(30)]
    whole = IndexReader(build(docs, tmp_path, "whole", num_shards=2, analyzer=Analyzer(), num_buckets=2))
    monkeypatch.setattr(tasks_mod, "POSTINGS_ROW_GROUP", 3)
    monkeypatch.setattr(tasks_mod, "POSITIONS_ROW_GROUP", 3)
    small = IndexReader(build(docs, tmp_path, "small", num_shards=2, analyzer=Analyzer(), num_buckets=2))
    assert pq.ParquetFile(small.bucket_path(0)).metadata.num_row_groups > 3
    rng = np.random.default_rng(7)
    vocabulary = whole.vocabulary
    for _ in range(5):
        terms = list(rng.choice(vocabulary, size=rng.integers(1, len(vocabulary)), replace=False))
        a, b = whole.postings(terms, positions=True), small.postings(terms, positions=True)
        assert list(a) == list(b)
        for term in a:
            assert a[term].docids.tolist() == b[term].docids.tolist()
            assert a[term].tfs.tolist() == b[term].tfs.tolist()
            assert [p.tolist() for p in a[term].positions] == [p.tolist() for p in b[term].positions]


def test_a_query_of_a_prepared_set_makes_its_slots_from_the_set(unsorted_index):
    """A query's slots (made on first use) are its postings' places among its candidates: the set's
    global slots less the query's first candidate, and the candidate at each slot is the posting's docid."""
    scorer = Scorer(IndexReader(unsorted_index))
    topics = pd.DataFrame({"qid": ["1", "2", "3", "4"], "text": ["cat dog", "bone", "the", "dog bone cat"]})
    queries = scorer.prepare(topics)
    assert [q.qid for q in queries] == ["1", "2", "3", "4"]
    for q, query in enumerate(queries):
        base = queries.candidate_offsets[q]
        first, last = queries.query_term_offsets[q], queries.query_term_offsets[q + 1]
        expected = [queries.global_slots[queries.term_offsets[i]:queries.term_offsets[i + 1]] - base
                    for i in range(first, last)]
        assert len(query.slots) == len(query.terms) == last - first
        for term, slots, want in zip(query.terms, query.slots, expected):
            assert slots.tolist() == want.tolist()
            assert query.candidates[slots].tolist() == term.docids.tolist()
        assert query.slots is query.slots  # made once
    assert queries[-1].qid == "4" and [q.qid for q in queries[1:3]] == ["2", "3"]
    with pytest.raises(IndexError):
        queries[4]


def test_the_open_reads_the_tables_pq_read_table_reads(unsorted_index, tmp_path):
    """The reader's tables (read without pyarrow.dataset) against ``pq.read_table``'s, the old read."""
    reader = IndexReader(unsorted_index)
    docs = pq.read_table(unsorted_index / "docs.parquet")
    assert reader.doc_lengths.tolist() == docs.column("length").to_pylist()
    assert reader.doc_unique_terms.tolist() == docs.column("unique_terms").to_pylist()
    assert reader.docno_rank.tolist() == docs.column("docno_rank").to_pylist()
    assert reader.docnos_arrow.equals(docs.column("docno").combine_chunks())
    terms = pq.read_table(unsorted_index / "terms.parquet")
    assert reader._term_table().column_names == terms.column_names
    assert all(reader._term_table().column(name).equals(terms.column(name)) for name in terms.column_names)
    assert reader.vocabulary == terms.column("term").to_pylist()
    # topics: a retrieval job's read against pandas' read of the same file
    topics = pd.DataFrame({"qid": ["2", "10", "é"], "text": ["cat dog", "", "bone é"]})
    pq.write_table(pa.Table.from_pandas(topics), tmp_path / "topics.parquet")
    pd.testing.assert_frame_equal(read_topics(tmp_path / "topics.parquet"),
                                  pq.read_table(tmp_path / "topics.parquet").to_pandas(), check_exact=True)


OPEN_CHILD = """
import json, sys
import pandas as pd
from irgrid.index import IndexReader
from irgrid.retrieve import Scorer
from irgrid.runs import read_topics
prepared = Scorer(IndexReader(sys.argv[1])).prepare(read_topics(sys.argv[2]))
print(json.dumps({"queries": len(list(prepared)), "dataset": "pyarrow.dataset" in sys.modules}))
"""


def test_a_retrieval_process_open_does_not_import_pyarrow_dataset(unsorted_index, tmp_path):
    """pq.read_table's first call imports pyarrow.dataset: a fresh process's open reads its files without it."""
    pq.write_table(pa.table({"qid": ["1", "2"], "text": ["cat", "dog bone"]}), tmp_path / "topics.parquet")
    done = subprocess.run([sys.executable, "-c", OPEN_CHILD, str(unsorted_index), str(tmp_path / "topics.parquet")],
                          check=True, capture_output=True, text=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"queries": 2, "dataset": False}


def test_a_bm25_open_and_ranking_make_no_unique_term_counts_nor_float_copies(unsorted_index, monkeypatch):
    """The reader's unique-term counts and the scorer's float64 lengths and counts are made on first
    use, not by a BM25 open and fused ranking; asked for, they are docs.parquet's columns. The flat
    postings are mapped regions holding each term's postings as the reader's own read gives them."""
    monkeypatch.setattr(populated_module, "POPULATED_BYTES", 0)  # mapped at once, however small
    reader = IndexReader(unsorted_index)
    scorer = Scorer(reader)
    prepared = scorer.prepare(pd.DataFrame({"qid": ["1", "2", "3"], "text": ["cat dog", "bone", "dog bone cat"]}))
    model = get_model("bm25")
    scorer.top(model, prepared, model.check_point({}), 5)
    assert "doc_unique_terms" not in vars(reader)
    assert not {"doc_lengths", "doc_unique_terms"} & set(vars(scorer))
    assert all(isinstance(array.base.obj, mmap.mmap) for array in (prepared.docids, prepared.tfs))  # a view of one
    postings = reader.postings(sorted({term.term for term in prepared.terms}))
    for term in prepared.terms:
        assert term.docids.tolist() == postings[term.term].docids.tolist()
        assert term.tfs.tolist() == postings[term.term].tfs.tolist()
    docs = pq.read_table(unsorted_index / "docs.parquet")
    assert reader.doc_unique_terms.dtype == np.int32
    assert reader.doc_unique_terms.tolist() == docs.column("unique_terms").to_pylist()
    assert scorer.doc_lengths.dtype == scorer.doc_unique_terms.dtype == np.float64
    assert scorer.doc_lengths.tolist() == [float(n) for n in docs.column("length").to_pylist()]
    assert scorer.doc_unique_terms.tolist() == [float(n) for n in docs.column("unique_terms").to_pylist()]
    # the numpy path (a model without a fused kernel) reads them through the set: the per-query scores
    numpy_model = next(get_model(name) for name in MODEL_FAMILIES
                       if get_model(name).weighting is None and not get_model(name).uses_features)
    point = numpy_model.check_point({})
    scores = scorer.score_all(numpy_model, prepared, point)
    for q, query in enumerate(prepared):
        lo, hi = prepared.candidate_offsets[q], prepared.candidate_offsets[q + 1]
        assert scores[lo:hi].tolist() == scorer.score(numpy_model, query, point).tolist()
