"""PISA's retrieval with and without pyterrier-pisa's pandas layer, on scale.py's PISA index.

    python benchmarks/pisa_engine.py [--collection benchmarks/.data/syn-1000000]
                                     [--index benchmarks/.data/indexes/syn-1000000/pisa] [--repeats 2]

The whole query set, BM25 k1=1.2 b=0.75, block_max_wand, 1 thread, through the extension's own
``_pisathon.retrieve`` (the call ``PisaRetrieve.transform`` makes, docnos included) at top 1000 and
top 10, then through ``transform`` at top 1000: queries per CPU second of this process (and per wall
second). scale.py's per-query PISA line goes through ``transform`` one row at a time; this tells how
much of it is PISA.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection", type=Path, default=HERE / ".data" / "syn-1000000")
    parser.add_argument("--index", type=Path, default=HERE / ".data" / "indexes" / "syn-1000000" / "pisa")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import numpy as np
    import pandas as pd
    import pyarrow.parquet as pq
    from pyterrier_pisa import PisaIndex, _pisathon

    topics = pq.read_table(args.collection / "topics.parquet").to_pandas()
    frame = pd.DataFrame({"qid": topics["qid"].astype(str), "query": topics["text"]})
    retriever = PisaIndex(str(args.index), stemmer="none", stops="none").bm25(k1=1.2, b=0.75, num_results=1000, threads=1)
    n = len(frame)

    def line(label, cpu, wall, rows):
        print(f"{label:44s} {n / cpu:8,.0f} q per CPU s  ({n / wall:8,.0f} q/s wall)  {rows:,} rows  "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)

    for k in (1000, 10):
        shape = (n * k,)
        arrays = {"result_qidxs": np.empty(shape, np.int32), "result_docnos": np.empty(shape, object),
                  "result_ranks": np.empty(shape, np.int32), "result_scores": np.empty(shape, np.float32)}
        for _ in range(args.repeats):
            cpu, wall = time.process_time(), time.perf_counter()
            rows = _pisathon.retrieve(retriever._ctxt, "block_max_wand", list(enumerate(frame["query"])), k=k,
                                      threads=1, query_weighted=0, pretokenised=False, **arrays)
            line(f"top {k}: _pisathon.retrieve, whole set", time.process_time() - cpu, time.perf_counter() - wall, rows)
    for _ in range(args.repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        rows = len(retriever.transform(frame))
        line("top 1000: PisaRetrieve.transform, whole set", time.process_time() - cpu, time.perf_counter() - wall, rows)


if __name__ == "__main__":
    main()
