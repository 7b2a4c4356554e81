"""candidate_slots alone on a query set's flat postings, two checkouts' code in alternating fresh processes.

    # once: a query set's flat arrays (Scorer._read_flat's layout) into an .npz
    python benchmarks/candidate_slots_cpu.py --dump FLAT.npz --index DIR --topics TOPICS.parquet
    # then: each checkout's src in turn, a fresh process a call, N processes a side
    python benchmarks/candidate_slots_cpu.py --flat FLAT.npz --src A/src --src B/src [--repeats 5]

Each child imports irgrid from its ``--src``, loads the arrays, calls candidate_slots once on ten
postings (numba's start, not counted) and then times one call on the whole set in CPU seconds of the
process (user + system), as open_steps.py's "candidate slots" step does. The parent prints, per src,
the median [min-max], the load average, and a digest of the outputs, which must be the same for all.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import flat_query_layout  # noqa: E402  (the layout Scorer._read_flat makes)

SINGLE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")}


def dump(out: Path, index: str, topics_path: str) -> None:
    import numpy as np
    import pandas as pd

    from irgrid.index import IndexReader
    from irgrid.retrieve.prepared import analyse_queries

    reader = IndexReader(index)
    queries = analyse_queries(reader, pd.read_parquet(topics_path))
    terms, term_offsets, query_term_offsets, placements = flat_query_layout(queries)
    docids = np.empty(term_offsets[-1], dtype=np.int32)
    tfs = np.empty(term_offsets[-1], dtype=np.int32)
    reader.postings_into(placements, docids, tfs)
    np.savez(out, docids=docids, term_offsets=term_offsets, query_term_offsets=query_term_offsets,
             num_docs=np.int64(reader.num_docs))
    print(f"{len(queries)} queries, {len(terms)} terms, {len(docids):,} postings, {reader.num_docs:,} documents "
          f"-> {out}")


def child(flat: str) -> dict:
    import time

    import numpy as np

    from irgrid.retrieve.ranking import candidate_slots

    arrays = np.load(flat)
    docids, term_offsets = arrays["docids"], arrays["term_offsets"]
    query_term_offsets, num_docs = arrays["query_term_offsets"], int(arrays["num_docs"])
    candidate_slots(docids[:10], np.array([0, min(10, len(docids))], np.int64), np.array([0, 1], np.int64), num_docs)
    clock = time.process_time
    start = clock()
    candidates, candidate_offsets, slots = candidate_slots(docids, term_offsets, query_term_offsets, num_docs)
    seconds = clock() - start
    digest = hashlib.sha256()
    for array in (candidates, candidate_offsets, slots):
        digest.update(np.ascontiguousarray(array).astype(np.int64).tobytes())
    return {"seconds": seconds, "digest": digest.hexdigest()[:16], "postings": len(docids)}


def run_child(flat: Path, src: str) -> dict:
    env = dict(os.environ, **SINGLE_THREAD_ENV, PYTHONPATH=src)
    done = subprocess.run([sys.executable, __file__, "--_child", "--flat", str(flat)], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flat", type=Path, help="the .npz of --dump")
    parser.add_argument("--src", action="append", default=[], help="a checkout's src (repeat: one per side)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dump", type=Path, help="write the flat arrays of --index and --topics here")
    parser.add_argument("--index")
    parser.add_argument("--topics")
    parser.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        dump(args.dump, args.index, args.topics)
        return
    if args._child:
        print(json.dumps(child(str(args.flat))))
        return
    for src in args.src:  # numba's cache of each side, compiled before anything is timed
        run_child(args.flat, src)
    print(f"{args.flat}: {args.repeats} fresh processes a side, alternating; CPU s of one candidate_slots call, "
          f"median [min-max]; load {os.getloadavg()[0]:.1f}", flush=True)
    seconds: dict[str, list[float]] = {src: [] for src in args.src}
    digests: dict[str, set[str]] = {src: set() for src in args.src}
    loads = []
    postings = 0
    for _ in range(args.repeats):
        for src in args.src:
            out = run_child(args.flat, src)
            seconds[src].append(out["seconds"])
            digests[src].add(out["digest"])
            postings = out["postings"]
        loads.append(os.getloadavg()[0])
    for src in args.src:
        values = seconds[src]
        median = statistics.median(values)
        print(f"  {src}: {median:.4f} [{min(values):.4f}-{max(values):.4f}]  "
              f"{median / max(1, postings) * 1e9:.2f} ns a posting  outputs {','.join(sorted(digests[src]))}")
    print(f"  {postings:,} postings; load average (1 min) during the runs: {statistics.median(loads):.1f} "
          f"[{min(loads):.1f}-{max(loads):.1f}]")
    if len({d for ds in digests.values() for d in ds}) > 1:
        sys.exit("outputs differ")


if __name__ == "__main__":
    main()
