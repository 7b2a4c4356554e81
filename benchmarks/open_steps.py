"""Where a fresh retrieval process's open goes: scale.py's "open" (IndexReader + Scorer + prepare of
the whole query set), step by step, in CPU seconds of fresh processes.

    python benchmarks/open_steps.py --index DIR --topics TOPICS.parquet [--repeats 5]

Each repeat is a fresh child (``--_child``) that imports irgrid first (not counted, as in scale.py)
and then times, in CPU seconds of the process (user + system: on a shared machine wall time is
mostly waiting):

  reader          IndexReader(index)
  scorer          Scorer(reader)
  analysis        the queries' analysis and the term statistics (the term dictionary's read)
  postings        reader.postings_into: every query term's postings into the query set's flat
                  arrays (Scorer._read_flat's steps), of which "decode" is pyarrow's
                  read_row_groups and "pages" irgrid.index.pages.read_rows (a checkout that has
                  it: the page decoder, the first numba call of the process included); rows
                  decoded (docid rows of either) against rows needed
  numba start     the first call of a cached kernel (candidate_slots on ten postings): numba's
                  typing and lowering registries, installed once per process
  candidate slots candidate_slots of the whole query set
  query views     list(prepared): one PreparedQuery a query (scale.py's per-query API input)

and, apart, the same open through the public calls (Scorer(IndexReader).prepare + list) as scale.py
times it. The parent prints the median [min-max] of each step and the load average. Works with any
checkout's src on PYTHONPATH (main's, a branch's) and its index.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import flat_query_layout  # noqa: E402  (the layout Scorer._read_flat makes)

STEPS = ["reader", "scorer", "analysis", "postings", "decode", "pages", "numba start", "candidate slots", "query views"]
#: steps that are parts of "postings", not added to the sum
PARTS = ("decode", "pages")
SINGLE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")}


def child(index: str, topics_path: str, public: bool) -> dict:
    import numpy as np
    import pandas as pd
    import pyarrow.parquet as pq

    import irgrid.index
    import irgrid.models
    import irgrid.retrieve  # noqa: F401
    from irgrid.index import IndexReader
    from irgrid.retrieve import Scorer
    from irgrid.retrieve.prepared import PreparedQuerySet, analyse_queries
    from irgrid.retrieve.ranking import candidate_slots

    topics = pd.read_parquet(topics_path)
    clock = time.process_time
    out: dict = {}
    if public:
        start = clock()
        prepared = Scorer(IndexReader(index)).prepare(topics)
        list(prepared)
        out["public open"] = clock() - start
        return out
    decoded = {"rows": 0, "seconds": 0.0}
    read_row_groups = pq.ParquetFile.read_row_groups

    def counted(self, *args, **kwargs):
        start = clock()
        table = read_row_groups(self, *args, **kwargs)
        decoded["seconds"] += clock() - start
        decoded["rows"] += table.num_rows
        return table

    pq.ParquetFile.read_row_groups = counted
    decoded_by_pages = {"rows": 0, "seconds": 0.0}
    try:
        import irgrid.index.pages as pages
    except ImportError:  # a checkout without the page decoder
        pages = None
    if pages is not None:
        read_rows = pages.read_rows

        def counted_pages(*args):
            start = clock()
            status, rows = read_rows(*args)
            decoded_by_pages["seconds"] += clock() - start
            decoded_by_pages["rows"] += rows
            return status, rows

        pages.read_rows = counted_pages
    start = clock()
    reader = IndexReader(index)
    out["reader"] = clock() - start
    start = clock()
    scorer = Scorer(reader)
    out["scorer"] = clock() - start
    start = clock()
    queries = analyse_queries(reader, topics)
    out["analysis"] = clock() - start
    terms, term_offsets, query_term_offsets, placements = flat_query_layout(queries)
    start = clock()
    docids = np.empty(term_offsets[-1], dtype=np.int32)
    tfs = np.empty(term_offsets[-1], dtype=np.int32)
    reader.postings_into(placements, docids, tfs)
    out["postings"] = clock() - start
    out["decode"] = decoded["seconds"]
    out["pages"] = decoded_by_pages["seconds"]
    out["rows decoded"] = decoded["rows"] + decoded_by_pages["rows"]
    out["rows needed"] = int(sum(t.df for t in {t.term: t for t in terms}.values()))
    out["postings placed"] = int(term_offsets[-1])
    start = clock()
    candidate_slots(docids[:10], np.array([0, min(10, len(docids))], np.int64), np.array([0, 1], np.int64),
                    reader.num_docs)
    out["numba start"] = clock() - start
    start = clock()
    candidate_slots(docids, term_offsets, query_term_offsets, reader.num_docs)
    out["candidate slots"] = clock() - start
    prepared = PreparedQuerySet([str(q) for q in queries], terms, term_offsets, query_term_offsets, docids, tfs,
                                scorer.doc_lengths, scorer.doc_unique_terms)
    start = clock()
    list(prepared)
    out["query views"] = clock() - start
    return out


def run_child(args, public: bool) -> dict:
    env = dict(os.environ, **SINGLE_THREAD_ENV)
    command = [sys.executable, __file__, "--_child", "--index", str(args.index), "--topics", str(args.topics)]
    if public:
        command.append("--public")
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--topics", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--public", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child:
        print(json.dumps(child(str(args.index), str(args.topics), args.public)))
        return
    print(f"index {args.index}, topics {args.topics}, {args.repeats} fresh processes a line (CPU s, "
          f"median [min-max]); load {os.getloadavg()[0]:.1f}", flush=True)
    steps, public, loads = [], [], []
    for _ in range(args.repeats):  # interleaved: a step-by-step child, then a public one
        steps.append(run_child(args, public=False))
        public.append(run_child(args, public=True)["public open"])
        loads.append(os.getloadavg()[0])
    for step in STEPS:
        print(f"  {step:16s} {spread([s[step] for s in steps])}")
    total = [sum(s[step] for step in STEPS if step not in PARTS) for s in steps]
    print(f"  {'sum of steps':16s} {spread(total)}")
    print(f"  {'public open':16s} {spread(public)}  (Scorer(IndexReader(index)).prepare(topics) + list: scale.py's open)")
    first = steps[0]
    print(f"  rows decoded {first['rows decoded']:,} for {first['rows needed']:,} postings of the distinct terms "
          f"({first['rows decoded'] / max(1, first['rows needed']):.2f}x), {first['postings placed']:,} placed")
    print(f"  load average (1 min) at the children: {spread(loads)}")


if __name__ == "__main__":
    main()
