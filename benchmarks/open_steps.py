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
times it. Each step (but the parts of "postings") and the public open also gets the process's
getrusage(RUSAGE_SELF) deltas: user and system CPU seconds and minor page faults (a fault of a fresh
page the kernel zeroes: on a VM its system time varies from one process to the next for the same
faults), and the growth of its resident anonymous memory (/proc/self/status RssAnon) with, in
parentheses, the growth of its transparent huge pages (smaps_rollup AnonHugePages): how much fresh
memory the faults mapped. The parent prints the median [min-max] of each step and the load average
(the memory: medians). Works with any
checkout's src on PYTHONPATH (main's, a branch's) and its index.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
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
#: getrusage deltas kept per step besides its CPU seconds, and the growth of the process's anonymous memory
#: (a minor fault maps a 4 KiB page or a 2 MiB huge page: the MB say how much fresh memory the faults were):
#: (key suffix, heading)
USAGE = ((" user", "user s"), (" sys", "sys s"), (" faults", "minor faults"), (" anon MB", "anon MB (of huge)"))


def anon_kib() -> tuple[int, int]:
    """The process's resident anonymous memory and, of it, the transparent huge pages' (KiB; 0s off Linux)."""
    found = {"RssAnon:": 0}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    found["RssAnon:"] = int(line.split()[1])
        with open("/proc/self/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("AnonHugePages:"):
                    return found["RssAnon:"], int(line.split()[1])
    except OSError:
        pass
    return found["RssAnon:"], 0
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

    try:
        import irgrid.retrieve.populated as populated
    except ImportError:  # a checkout without it
        populated = None

    topics = pd.read_parquet(topics_path)
    clock = time.process_time
    out: dict = {}

    @contextlib.contextmanager
    def step(name: str):
        """``name``'s CPU seconds, and its user, system seconds and minor faults (getrusage deltas)."""
        anon_before = anon_kib()
        before, start = resource.getrusage(resource.RUSAGE_SELF), clock()
        yield
        out[name] = clock() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        anon_after = anon_kib()
        out[name + " user"] = after.ru_utime - before.ru_utime
        out[name + " sys"] = after.ru_stime - before.ru_stime
        out[name + " faults"] = after.ru_minflt - before.ru_minflt
        out[name + " anon MB"] = (anon_after[0] - anon_before[0]) / 1024
        out[name + " huge MB"] = (anon_after[1] - anon_before[1]) / 1024

    if public:
        with step("public open"):
            prepared = Scorer(IndexReader(index)).prepare(topics)
            list(prepared)
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
    with step("reader"):
        reader = IndexReader(index)
    with step("scorer"):
        scorer = Scorer(reader)
    with step("analysis"):
        queries = analyse_queries(reader, topics)
    terms, term_offsets, query_term_offsets, placements = flat_query_layout(queries)
    # the flat arrays as the checkout's Scorer._read_flat allocates them
    flat_postings = getattr(populated, "flat_postings", None) if populated is not None else None
    with step("postings"):
        if flat_postings is not None:
            docids, tfs = flat_postings(int(term_offsets[-1]))
        else:  # numpy's
            docids = np.empty(term_offsets[-1], dtype=np.int32)
            tfs = np.empty(term_offsets[-1], dtype=np.int32)
        reader.postings_into(placements, docids, tfs)
    out["decode"] = decoded["seconds"]
    out["pages"] = decoded_by_pages["seconds"]
    out["rows decoded"] = decoded["rows"] + decoded_by_pages["rows"]
    out["rows needed"] = int(sum(t.df for t in {t.term: t for t in terms}.values()))
    out["postings placed"] = int(term_offsets[-1])
    with step("numba start"):
        candidate_slots(docids[:10], np.array([0, min(10, len(docids))], np.int64), np.array([0, 1], np.int64),
                        reader.num_docs)
    with step("candidate slots"):  # kept to the end, as a prepared set keeps them (its anonymous memory)
        slots = candidate_slots(docids, term_offsets, query_term_offsets, reader.num_docs)
    try:  # a checkout whose set takes the scorer (its float64 document arrays made on first use)
        prepared = PreparedQuerySet([str(q) for q in queries], terms, term_offsets, query_term_offsets, docids, tfs,
                                    scorer)
    except TypeError:  # an older one: the arrays themselves
        prepared = PreparedQuerySet([str(q) for q in queries], terms, term_offsets, query_term_offsets, docids, tfs,
                                    scorer.doc_lengths, scorer.doc_unique_terms)
    with step("query views"):
        list(prepared)
    del slots
    return out


def run_child(args, public: bool) -> dict:
    env = dict(os.environ, **SINGLE_THREAD_ENV)
    command = [sys.executable, __file__, "--_child", "--index", str(args.index), "--topics", str(args.topics)]
    if public:
        command.append("--public")
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values, form: str = ".3f") -> str:
    return f"{statistics.median(values):{form}} [{min(values):{form}}-{max(values):{form}}]"


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
        public.append(run_child(args, public=True))
        loads.append(os.getloadavg()[0])
    print(f"  {'':16s} {'CPU s':20s} " + " ".join(f"{heading:20s}" for _, heading in USAGE))

    def line(name: str, children: list[dict]) -> str:
        usage = [spread([c[name + suffix] for c in children], ".0f" if suffix == " faults" else ".3f")
                 for suffix, _ in USAGE[:3] if name + suffix in children[0]]
        if name + " anon MB" in children[0]:
            usage.append(f"{statistics.median([c[name + ' anon MB'] for c in children]):.1f} "
                         f"({statistics.median([c[name + ' huge MB'] for c in children]):.0f})")
        return f"  {name:16s} {spread([c[name] for c in children]):20s} " + " ".join(f"{u:20s}" for u in usage)

    for step in STEPS:
        print(line(step, steps).rstrip())
    summed = [{"sum of steps" + suffix: sum(s[step + suffix] for step in STEPS if step not in PARTS)
               for suffix in ["", " huge MB"] + [suffix for suffix, _ in USAGE]} for s in steps]
    print(line("sum of steps", summed).rstrip())
    print(line("public open", public).rstrip())
    print("  (public open: Scorer(IndexReader(index)).prepare(topics) + list: scale.py's open)")
    first = steps[0]
    print(f"  rows decoded {first['rows decoded']:,} for {first['rows needed']:,} postings of the distinct terms "
          f"({first['rows decoded'] / max(1, first['rows needed']):.2f}x), {first['postings placed']:,} placed")
    print(f"  load average (1 min) at the children: {spread(loads)}")


if __name__ == "__main__":
    main()
