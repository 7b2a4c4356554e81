"""numba's on-disk cache of irgrid's kernels filled once, before the processes of a test run start.

numba writes a kernel's compiled code to its cache (``__pycache__`` beside the module) when a
process first compiles it; every process that starts before then compiles the kernel too. A
parallel run starts several at once (pytest-xdist's workers, each Snakemake run's jobs), so in a
fresh checkout each of them would compile the page decoder, the ranking kernels and the
evaluation's. :func:`warm_numba_cache` runs, in the one process that starts the others, what a
workflow's jobs run (a synthetic collection indexed and read through the postings' page decoder,
BM25 and QL grids retrieved and evaluated), so the kernels are compiled once and loaded by every
later process. It changes no test's outcome: a kernel loaded from the cache is the kernel compiled.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from irgrid.collections.synthetic import SyntheticSpec, write_synthetic_collection
from irgrid.grid import encode_point
from irgrid.index import build_index
from irgrid.jobs.chunk import evaluate_chunk
from irgrid.runs import read_topics

#: the analyzer the workflow tests' experiments use (common.ANALYZER)
ANALYZER = {"tokenizer": "lucene", "lowercase": True, "possessive": True, "stemmer": "porter", "stopwords": "none"}
SPEC = SyntheticSpec(num_docs=300, vocabulary_size=400, num_queries=4, docs_per_shard=150, query_rank_band=(5, 300))
#: two points of each family: a grid's block kernels as well as one point's
CELLS = [("bm25", "bm25", encode_point({"k1": k1, "b": 0.75}, ["k1", "b"])) for k1 in (0.9, 1.2)] + [
    ("ql", "ql_dirichlet", encode_point({"mu": mu}, ["mu"])) for mu in (500, 1000)]


def warm_numba_cache() -> None:
    with tempfile.TemporaryDirectory(prefix="irgrid-numba-warm-") as tmp:
        collection = write_synthetic_collection(SPEC, Path(tmp) / "collection")
        index = Path(tmp) / "index"
        build_index(collection / "docs", index, ANALYZER, scheduler="sync", progress=False)
        read_topics(collection / "topics.parquet")
        evaluate_chunk(index, collection / "topics.parquet", collection / "qrels.parquet", CELLS, ["AP", "P@10"])
