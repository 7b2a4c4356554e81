"""A local build's Arrow memory pool: jemalloc with a short decay while the build runs, the
previous default pool afterwards (irgrid.index.build.purging_memory_pool)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import irgrid.index.build as build_mod
from irgrid.errors import InputFormatError
from irgrid.index import IndexReader, build_index


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


def _shard(directory: Path, docnos: list[str]) -> Path:
    directory.mkdir(parents=True)
    texts = ["alpha beta", "beta gamma gamma", "delta alpha"][: len(docnos)]
    pq.write_table(pa.table({"docno": docnos, "text": texts}), directory / "part-0000.parquet")
    return directory


@pytest.mark.skipif(not _has_jemalloc(), reason="this pyarrow has no jemalloc")
def test_a_local_build_allocates_from_jemalloc_and_puts_the_default_pool_back(tmp_path, monkeypatch):
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    before = pa.default_memory_pool().backend_name
    pools_in_tasks = []
    merge_terms = build_mod.merge_terms

    def recording_merge_terms(*args):
        pools_in_tasks.append(pa.default_memory_pool().backend_name)
        return merge_terms(*args)

    monkeypatch.setattr(build_mod, "merge_terms", recording_merge_terms)
    analyzer = {"stemmer": "none", "stopwords": "none"}
    docs = _shard(tmp_path / "docs", ["d1", "d2", "d3"])
    for scheduler in ("threads", "sync"):
        build_index(docs, tmp_path / scheduler, analyzer, num_buckets=2, scheduler=scheduler, progress=False)
        assert IndexReader(tmp_path / scheduler).num_terms == 4  # alpha, beta, gamma, delta
    assert pools_in_tasks == ["jemalloc", "jemalloc"]
    assert pa.default_memory_pool().backend_name == before

    # a failed build (an empty docno) puts it back too
    bad = _shard(tmp_path / "bad", ["d1", ""])
    with pytest.raises(InputFormatError):
        build_index(bad, tmp_path / "bad-index", analyzer, num_buckets=2, scheduler="threads", progress=False)
    assert pa.default_memory_pool().backend_name == before

    # a pool the environment chose is left alone
    pools_in_tasks.clear()
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", before)
    build_index(docs, tmp_path / "chosen", analyzer, num_buckets=2, scheduler="threads", progress=False)
    assert pools_in_tasks == [before]
