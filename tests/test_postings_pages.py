"""irgrid.index.pages: a bucket's postings decoded from its Parquet pages, against pyarrow's read of
the same rows (the reader's other path), for files written by the build's own postings writer and
by other Parquet options (which go through the pyarrow path)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irgrid.index.tasks as tasks_mod
from irgrid.analysis import Analyzer
from irgrid.index import IndexReader, build_index
from irgrid.index.format import POSTINGS_ROW_GROUP, POSTINGS_SCHEMA
from irgrid.index.pages import OK, UNSUPPORTED, PostingsPages, read_rows
from irgrid.index.reader import _groups_of

INT32_MAX = 2**31 - 1


def write_bucket(path: Path, docids, tfs, row_group: int = POSTINGS_ROW_GROUP) -> Path:
    """A postings file as the build writes one (tasks._PostingsWriter's postings writer), in pieces."""
    writer = tasks_mod._PostingsWriter(path, path.with_suffix(".positions"))
    writer.postings.row_group = row_group
    docids, tfs = np.asarray(docids, np.int32), np.asarray(tfs, np.int32)
    with writer:
        for lo in range(0, len(docids), 5000):  # added in pieces, as a bucket's merge does
            writer.postings.add(pa.Table.from_arrays([pa.array(docids[lo:lo + 5000]), pa.array(tfs[lo:lo + 5000])],
                                                     schema=POSTINGS_SCHEMA))
    return path


def decode(path: Path, spans, dests, size: int):
    """``read_rows`` of the spans ``(start, count)`` to ``dests``: (status, docids, tfs)."""
    pages = PostingsPages(path)
    starts = np.array([s for s, _ in spans], np.int64).reshape(-1)
    counts = np.array([c for _, c in spans], np.int64).reshape(-1)
    groups, _ = _groups_of(pages.group_starts, starts, counts)
    docids, tfs = np.full(size, -7, np.int32), np.full(size, -7, np.int32)
    status, _ = read_rows(pages, groups, starts, counts, np.asarray(dests, np.int64).reshape(-1), docids, tfs)
    return status, docids, tfs


def expected(path: Path, spans, dests, size: int):
    table = pq.read_table(path)
    docids, tfs = np.full(size, -7, np.int32), np.full(size, -7, np.int32)
    all_docids, all_tfs = table.column("docid").to_numpy(), table.column("tf").to_numpy()
    for (start, count), at in zip(spans, dests):
        docids[at:at + count] = all_docids[start:start + count]
        tfs[at:at + count] = all_tfs[start:start + count]
    return docids, tfs


def check(path: Path, spans, dests=None):
    if dests is None:  # one after the other
        dests = np.concatenate([[0], np.cumsum([c for _, c in spans])[:-1]]).astype(np.int64) if spans else []
    size = int(max([at + c for (_, c), at in zip(spans, dests)], default=0))
    status, docids, tfs = decode(path, spans, dests, size)
    want_docids, want_tfs = expected(path, spans, dests, size)
    assert status == OK
    assert docids.tolist() == want_docids.tolist()
    assert tfs.tolist() == want_tfs.tolist()


def term_postings(draw_dfs, gaps, tf_values):
    """Terms' rows one after the other: within a term docids ascending by the gaps."""
    docids, tfs = [], []
    k = 0
    for df in draw_dfs:
        docid = 0
        for i in range(df):
            docid = min(docid + (gaps[k % len(gaps)] if i else gaps[k % len(gaps)] - 1), INT32_MAX)
            docids.append(docid)
            tfs.append(tf_values[k % len(tf_values)])
            k += 1
    return np.array(docids, np.int32), np.array(tfs, np.int32)


@st.composite
def buckets(draw):
    dfs = draw(st.lists(st.integers(1, 400), min_size=1, max_size=25))
    gaps = draw(st.lists(st.one_of(st.integers(1, 3), st.integers(1, 2**16), st.integers(2**30, INT32_MAX)),
                         min_size=1, max_size=50))
    tf_values = draw(st.lists(st.one_of(st.integers(1, 3), st.integers(1, 2**20)), min_size=1, max_size=40))
    row_group = draw(st.sampled_from([128, 1000, POSTINGS_ROW_GROUP]))
    return dfs, gaps, tf_values, row_group


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(bucket=buckets(), data=st.data())
def test_random_term_ranges_equal_pyarrows_read(tmp_path_factory, bucket, data):
    dfs, gaps, tf_values, row_group = bucket
    path = write_bucket(tmp_path_factory.mktemp("b") / "bucket.parquet", *term_postings(dfs, gaps, tf_values),
                        row_group=row_group)
    term_starts = np.concatenate([[0], np.cumsum(dfs)[:-1]]).tolist()
    chosen = data.draw(st.lists(st.integers(0, len(dfs) - 1), min_size=1, max_size=2 * len(dfs)))
    spans = [(term_starts[t], dfs[t]) for t in chosen]  # a term may be placed twice (two queries hold it)
    order = data.draw(st.permutations(range(len(spans))))  # laid out in another order than the file's
    dests, at = [0] * len(spans), 0
    for i in order:
        dests[i] = at
        at += spans[i][1]
    check(path, spans, dests)


def test_df_one_terms_and_the_last_row_of_the_file(tmp_path):
    docids = np.arange(3000, dtype=np.int32) * 7 % 1000
    tfs = (np.arange(3000) % 5 + 1).astype(np.int32)
    path = write_bucket(tmp_path / "b.parquet", docids, tfs, row_group=1000)
    check(path, [(2999, 1)])
    check(path, [(0, 1), (999, 1), (1000, 1), (2999, 1), (1500, 1)])
    check(path, [(2990, 10)])


def test_a_term_spanning_row_groups(tmp_path):
    docids = np.concatenate([np.arange(50), np.arange(0, 50_000, 2), np.arange(7)]).astype(np.int32)
    tfs = np.ones(len(docids), np.int32)
    path = write_bucket(tmp_path / "b.parquet", docids, tfs, row_group=8192)
    assert pq.ParquetFile(path).metadata.num_row_groups == 4
    check(path, [(50, 25_000)])
    check(path, [(50, 25_000), (25_050, 7), (0, 50)])


def test_tfs_of_several_bit_widths_and_huge_docid_gaps(tmp_path):
    tfs = np.concatenate([np.ones(500), np.arange(1, 3000), np.arange(1, 2**20, 997), [INT32_MAX, 1, 2]])
    docids = np.zeros(len(tfs), np.int64)
    docids[1::2] = INT32_MAX  # every other row a gap of 2^31 - 1 up, then down again (a new term)
    docids[2::4] = 2**30
    path = write_bucket(tmp_path / "b.parquet", docids.astype(np.int32), tfs.astype(np.int32), row_group=1024)
    everything = [(0, len(tfs))]
    check(path, everything)
    check(path, [(1, 1), (2, 2), (700, 900), (len(tfs) - 3, 3)])


@pytest.mark.parametrize("options", [
    {"compression": "zstd", "use_dictionary": ["tf"], "column_encoding": {"docid": "DELTA_BINARY_PACKED"}},
    {"compression": "none", "use_dictionary": False},  # PLAIN both
])
def test_other_writer_options_are_refused_or_read_alike(tmp_path, options):
    docids = (np.arange(20_000) * 13 % 9001).astype(np.int32)
    tfs = (np.arange(20_000) % 17 + 1).astype(np.int32)
    path = tmp_path / "b.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(docids), pa.array(tfs)], schema=POSTINGS_SCHEMA), path,
                   row_group_size=8192, **options)
    spans = [(5, 10), (8000, 400), (19_999, 1)]
    if options["compression"] == "zstd":
        assert decode(path, spans, [0, 10, 410], 411)[0] == UNSUPPORTED
    else:
        check(path, spans)


def test_pages_v2_small_pages_and_a_dictionary_that_falls_back_to_plain(tmp_path):
    docids = (np.arange(30_000) * 31 % 20011).astype(np.int32)
    tfs = (np.arange(30_000) * 7 % 3001 + 1).astype(np.int32)
    path = tmp_path / "b.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(docids), pa.array(tfs)], schema=POSTINGS_SCHEMA), path,
                   row_group_size=8192, compression="none", use_dictionary=["tf"],
                   column_encoding={"docid": "DELTA_BINARY_PACKED"}, data_page_version="2.0",
                   data_page_size=2000, write_batch_size=256, dictionary_pagesize_limit=4000)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
    assert "PLAIN" in chunk.encodings and "RLE_DICTIONARY" in chunk.encodings  # the dictionary fell back
    check(path, [(0, 30_000)])
    check(path, [(3, 5), (4000, 3000), (29_000, 1000), (8191, 2)])


def test_a_nullable_column_is_left_to_pyarrow(tmp_path):
    schema = pa.schema([pa.field("docid", pa.int32()), pa.field("tf", pa.int32())])
    path = tmp_path / "b.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1, 2, 3], pa.int32()), pa.array([1, 1, 2], pa.int32())],
                                        schema=schema), path)
    assert decode(path, [(0, 3)], [0], 3)[0] == UNSUPPORTED


# ---------------------------------------------------------- through IndexReader


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(300)]
    docs = [(f"d{i}", " ".join(rng.choice(words, size=int(rng.integers(1, 60)), p=None)))
            for i in range(3000)]
    tmp = tmp_path_factory.mktemp("built")
    shards = tmp / "in"
    shards.mkdir()
    pq.write_table(pa.table({"docno": [d for d, _ in docs], "text": [t for _, t in docs]}), shards / "part-0000.parquet")
    out = tmp / "idx"
    build_index(shards, out, Analyzer(stemmer="none", stopwords="none"), num_buckets=3, scheduler="sync", progress=False)
    return out


def flat_postings(index: Path, placements: dict[str, list[int]], size: int, pages: bool):
    reader = IndexReader(index)
    if not pages:
        reader._decode_postings = lambda *args: False
    read_by_pyarrow = []  # the buckets read by pyarrow's row groups
    reader._read_spans = lambda bucket, *a: read_by_pyarrow.append(bucket) or IndexReader._read_spans(reader, bucket, *a)
    docids, tfs = np.full(size, -7, np.int32), np.full(size, -7, np.int32)
    reader.postings_into(placements, docids, tfs)
    return docids, tfs, reader, read_by_pyarrow


def test_postings_into_and_postings_equal_pyarrows(built):
    reader = IndexReader(built)
    terms = reader.vocabulary
    df = {t: s[0] for t, s in reader.term_stats(terms).items()}
    placements, at = {}, 0
    for k, term in enumerate(terms[::3] + terms[::7]):
        placements.setdefault(term, []).append(at)
        at += df[term] + k % 3  # gaps between the terms' places stay unwritten
    fast = flat_postings(built, placements, at, pages=True)
    slow = flat_postings(built, placements, at, pages=False)
    assert fast[3] == [] and slow[3] == [0, 1, 2]
    assert fast[0].tolist() == slow[0].tolist() and fast[1].tolist() == slow[1].tolist()
    assert (fast[0] != -7).sum() == sum(df[t] * len(p) for t, p in placements.items())
    by_pages, by_pyarrow = fast[2].postings(terms), slow[2].postings(terms)
    for term in terms:
        assert by_pages[term].docids.tolist() == by_pyarrow[term].docids.tolist()
        assert by_pages[term].tfs.tolist() == by_pyarrow[term].tfs.tolist()


def test_a_bucket_written_otherwise_is_read_by_pyarrow_with_the_same_values(built, tmp_path):
    import shutil

    copy = tmp_path / "idx"
    shutil.copytree(built, copy)
    reader = IndexReader(copy)
    terms = reader.vocabulary
    df = {t: s[0] for t, s in reader.term_stats(terms).items()}
    placements = {}
    at = 0
    for term in terms:
        placements[term] = [at]
        at += df[term]
    before = flat_postings(copy, placements, at, pages=True)
    bucket = copy / "postings" / "bucket-0001.parquet"
    pq.write_table(pq.read_table(bucket), bucket, compression="zstd", row_group_size=8192)
    after = flat_postings(copy, placements, at, pages=True)
    assert before[3] == [] and after[3] == [1]
    assert after[0].tolist() == before[0].tolist() and after[1].tolist() == before[1].tolist()


def test_thrift_compact_skips_and_reads_hand_encoded_structs():
    from irgrid.index.thrift import STRUCT, skip, struct_ints

    encoded = bytes([
        0x15, 0x0A,                    # field 1, i32: zigzag(5)
        0x19, 0x1C,                    # field 2, list of 1 struct:
        0x18, 0x02, ord("a"), ord("b"),  # field 1, binary "ab"
        0x1B, 0x01, 0x55, 0x02, 0x04,  # field 2, map<i32, i32> of 1: {1: 2}
        0x00,                          # end of the listed struct
        0x11,                          # field 3, boolean true
        0x06, 0x28, 0x05,              # field 20 (id as a zigzag varint), i64: zigzag(-3)
        0x19, 0xF5, 0x14, *([0x02] * 20),  # field 21 (delta 1), list of 20 i32 (size as a varint)
        0x00,                          # end of the struct
        0xFF,                          # past it
    ])
    buf = np.frombuffer(encoded, np.uint8)
    assert skip(buf, 0, len(buf), STRUCT) == len(buf) - 1
    values = np.full(4, -1, np.int64)
    assert struct_ints(buf, 0, len(buf), values) == len(buf) - 1
    assert values.tolist() == [-1, 5, -1, 1]
    assert skip(buf, 0, len(buf) - 3, STRUCT) == -1  # cut short


def test_a_field_header_without_a_type_is_malformed():
    # a field header's low nibble is its type, 0 only in the stop byte (0x00): a byte like 0x10
    # (delta 1, type 0) is no field, and reading it as a struct's end would misread the rest
    from irgrid.index.thrift import field_header, struct_ints

    buf = np.frombuffer(bytes([0x15, 0x0A, 0x10, 0x00]), np.uint8)
    assert field_header(buf, 0, len(buf), 0) == (1, 5, 1)  # field 1, i32
    assert field_header(buf, 2, len(buf), 1)[2] == -1
    assert field_header(buf, 3, len(buf), 1) == (1, 0, 4)  # the stop byte
    assert struct_ints(buf, 0, len(buf), np.full(2, -1, np.int64)) == -1
