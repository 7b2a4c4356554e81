"""numba's share of a fresh retrieval process's fixed cost, and what ahead-of-time compiled code costs instead.

    python benchmarks/numba_share.py --index DIR --topics TOPICS.parquet [--repeats 5] [--scratch DIR]

Two measurements, each in fresh child processes (CPU seconds of the process: user + system):

1. **The open and the first BM25 query** as scale.py times them (``Scorer(IndexReader).prepare(topics)``,
   ``list(prepared)``, then ``Scorer.top`` of query 0), with numba's own work timed inside it: every
   dispatcher's ``_compile_for_args`` (a kernel's first call with new argument types: numba's typing
   and lowering registries, installed once per process, and the machine code loaded from the cache).
   ``numba`` and irgrid are imported before the clock starts, as scale.py does.
2. **One kernel, two ways** (a dense docid -> slot pass, the shape of ``candidate_slots``): the same
   Python function as a cached ``@njit`` kernel (``import numba`` + first call), and compiled ahead of
   time by ``numba.pycc`` into an extension module in ``--scratch`` (import + first call; the module
   needs numpy only). The difference is the fixed cost a process would not pay with ahead-of-time
   kernels.

The parent prints the median [min-max] of each figure and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SINGLE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")}

KERNEL_SOURCE = '''
def dense_slots(docids, slot_of_doc):
    n = 0
    for p in range(len(docids)):
        d = docids[p]
        if slot_of_doc[d] < 0:
            slot_of_doc[d] = n
            n += 1
    return n
'''


def open_child(index: str, topics_path: str) -> dict:
    import numba  # noqa: F401
    import pandas as pd
    from numba.core import dispatcher

    import irgrid.index
    import irgrid.models
    import irgrid.retrieve  # noqa: F401
    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer

    topics = pd.read_parquet(topics_path)
    model = get_model("bm25")
    point = model.check_point({"k1": 1.2, "b": 0.75})
    numba_s = [0.0]
    first_calls: list[str] = []
    compile_for_args = dispatcher._DispatcherBase._compile_for_args
    depth = [0]

    def timed(self, *args, **kws):
        # nested first calls (a kernel calling another) are counted once, by the outermost
        depth[0] += 1
        start = time.process_time()
        try:
            return compile_for_args(self, *args, **kws)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                numba_s[0] += time.process_time() - start
                first_calls.append(f"{self.py_func.__module__}.{self.py_func.__name__}")

    dispatcher._DispatcherBase._compile_for_args = timed
    start = time.process_time()
    scorer = Scorer(IndexReader(index))
    prepared = scorer.prepare(topics)
    list(prepared)
    opened = time.process_time()
    scorer.top(model, prepared, point, 1000, 0, 1)
    first = time.process_time()
    return {"open_s": opened - start, "first_query_s": first - opened, "numba_s": numba_s[0],
            "kernels": first_calls}


def jit_child(scratch: str) -> dict:
    start = time.process_time()
    import numpy as np
    numpy_done = time.process_time()
    import numba
    imported = time.process_time()
    sys.path.insert(0, scratch)
    from jit_cache_kernel import dense_slots  # build_aot wrote it: numba caches kernels of files only

    kernel = numba.njit(cache=True)(dense_slots)
    docids = np.arange(1000, dtype=np.int32)
    kernel(docids, np.full(2000, -1, np.int32))
    called = time.process_time()
    return {"numpy_import_s": numpy_done - start, "import_s": imported - numpy_done, "first_call_s": called - imported}


def aot_child(scratch: str) -> dict:
    start = time.process_time()
    import numpy as np
    numpy_done = time.process_time()
    sys.path.insert(0, scratch)
    import irgrid_aot_kernel  # the extension module build_aot made
    imported = time.process_time()
    docids = np.arange(1000, dtype=np.int32)
    irgrid_aot_kernel.dense_slots(docids, np.full(2000, -1, np.int32))
    called = time.process_time()
    return {"numpy_import_s": numpy_done - start, "import_s": imported - numpy_done, "first_call_s": called - imported}


def build_aot(scratch: Path) -> None:
    """``numba.pycc`` compiles KERNEL_SOURCE for int32 arrays into ``scratch/irgrid_aot_kernel*.so``."""
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "jit_cache_kernel.py").write_text(KERNEL_SOURCE, encoding="utf-8")
    script = (
        "import sys\n"
        "from numba.pycc import CC\n"
        f"sys.path.insert(0, {str(scratch)!r})\n"
        "from jit_cache_kernel import dense_slots\n"
        f"cc = CC('irgrid_aot_kernel'); cc.output_dir = {str(scratch)!r}\n"
        "cc.export('dense_slots', 'i8(i4[:], i4[:])')(dense_slots)\n"
        "cc.compile()\n")
    subprocess.run([sys.executable, "-W", "ignore", "-c", script], check=True, cwd=scratch)


def run(kind: str, args: list[str], cwd: Path) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = handle.name
    env = {**os.environ, **SINGLE_THREAD_ENV}
    subprocess.run([sys.executable, "-W", "ignore", str(Path(__file__).resolve()), "--_child", kind, out, *args],
                   check=True, env=env, cwd=cwd)
    with open(out, encoding="utf-8") as handle:
        result = json.load(handle)
    os.unlink(out)
    result["load"] = os.getloadavg()[0]
    return result


def spread(values, fmt="{:.3f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def main() -> None:
    if len(sys.argv) >= 4 and sys.argv[1] == "--_child":
        kind, out, rest = sys.argv[2], sys.argv[3], sys.argv[4:]
        result = {"open": lambda: open_child(*rest), "jit": lambda: jit_child(*rest), "aot": lambda: aot_child(*rest)}[kind]()
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(result, handle)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", required=True)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "irgrid-numba-share")
    args = parser.parse_args()
    build_aot(args.scratch)
    run("jit", [str(args.scratch)], args.scratch)  # writes the jit kernel's cache, so every timed call loads it
    print(f"index {args.index}, topics {args.topics}, {args.repeats} fresh processes a line "
          f"(CPU s, median [min-max]); load {os.getloadavg()[0]:.1f}", flush=True)
    opens, jits, aots = [], [], []
    for _ in range(args.repeats):  # interleaved, so a change of load falls on every line alike
        opens.append(run("open", [args.index, args.topics], HERE.parent))
        jits.append(run("jit", [str(args.scratch)], args.scratch))
        aots.append(run("aot", [str(args.scratch)], args.scratch))
    print("1. the open and the first BM25 query (numba and irgrid imported before)")
    print(f"  open (Scorer + prepare + list)  {spread([r['open_s'] for r in opens])}")
    print(f"  first query                     {spread([r['first_query_s'] for r in opens])}")
    print(f"  of both, numba's first calls    {spread([r['numba_s'] for r in opens])}  "
          f"({len(opens[0]['kernels'])} kernels: {', '.join(sorted(set(opens[0]['kernels'])))})")
    share = [r["numba_s"] / (r["open_s"] + r["first_query_s"]) for r in opens]
    print(f"  numba's share                   {spread(share, '{:.2f}')}")
    print("2. one kernel (a dense docid -> slot pass), fresh process")
    for name, runs in (("cached @njit", jits), ("numba.pycc AOT", aots)):
        print(f"  {name:15s} numpy import {spread([r['numpy_import_s'] for r in runs])}  "
              f"import {spread([r['import_s'] for r in runs])}  first call {spread([r['first_call_s'] for r in runs])}")
    print(f"load average (1 min) at the children: {spread([r['load'] for r in opens + jits + aots], '{:.2f}')}")


if __name__ == "__main__":
    main()
