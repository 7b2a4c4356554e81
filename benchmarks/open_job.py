"""A fresh retrieval process's open and first query (BM25 unless told), two checkouts' src alternating,
in CPU seconds of fresh processes.

    python benchmarks/open_job.py --index DIR --topics TOPICS.parquet --src A/src --src B/src [--repeats 5]
    python benchmarks/open_job.py --index DIR --topics TOPICS.parquet --src A/src --aot-dir DIR [--repeats 5]
    python benchmarks/open_job.py ... --src A/src --aot-dir A_DIR --src B/src --aot-dir B_DIR
        [--model ql_dirichlet --point mu=1000]

Each child imports numba and the modules a retrieval job loads (irgrid.index, irgrid.models,
irgrid.retrieve, irgrid.runs: not counted, as in scale.py) and then times, in CPU seconds of the
process (user + system), one of two opens:

  job    the topics read as a retrieval job reads them (irgrid.runs.read_topics), then
         Scorer(IndexReader(index)).prepare(topics) and list(prepared)
  scale  the same with the topics read by pandas before the clock starts (scale.py's "open":
         pandas' read imports pyarrow.dataset, outside the time)

and the first BM25 query after it (Scorer.top of the first query, k1 1.2, b 0.75, depth 1000). The
children run in turns (checkout A job, B job, A scale, B scale, ...); the parent prints the median
[min-max] of each checkout's steps and the load average (1 min) at the children.

With ``--aot-dir`` and one ``--src``, the two sides are that checkout with its ahead-of-time kernel
module disabled (``IRGRID_AOT=0``: the JIT kernels) and loaded from ``--aot-dir`` (``irgrid aot build
--directory``); each child says whether the module served its calls (``aot used``). With two of
each, each checkout loads its own module. Each child also lists the JIT kernels that ran (numba
dispatchers of irgrid with a compiled signature): any one of them starts numba's machinery.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SINGLE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")}
WAYS = ("job", "scale")


def child(index: str, topics_path: str, way: str, family: str = "bm25", point_text: str = "k1=1.2,b=0.75") -> dict:
    import numba  # noqa: F401
    import pandas as pd

    import irgrid.index
    import irgrid.models
    import irgrid.retrieve
    import irgrid.runs  # noqa: F401
    from irgrid.index import IndexReader
    from irgrid.models import get_model
    from irgrid.retrieve import Scorer
    from irgrid.runs import read_topics

    model = get_model(family)
    point = model.check_point({name: float(value) for name, value in (pair.split("=") for pair in point_text.split(","))})
    clock = time.process_time
    topics = pd.read_parquet(topics_path) if way == "scale" else None
    out: dict = {"dataset imported before": "pyarrow.dataset" in sys.modules}
    start = clock()
    if topics is None:
        topics = read_topics(topics_path)
    out["topics"] = clock() - start
    at = clock()
    reader = IndexReader(index)
    out["reader"] = clock() - at
    at = clock()
    scorer = Scorer(reader)
    prepared = scorer.prepare(topics)
    list(prepared)
    out["scorer + prepare"] = clock() - at
    out["open"] = clock() - start
    at = clock()
    scorer.top(model, prepared, point, 1000, 0, 1)
    out["first query"] = clock() - at
    out["open + first query"] = clock() - start
    out["dataset imported after"] = "pyarrow.dataset" in sys.modules
    import gc

    from numba.core.registry import CPUDispatcher
    out["jit kernels run"] = sorted(f"{obj.__module__}.{obj.__name__}" for obj in gc.get_objects()
                                    if isinstance(obj, CPUDispatcher) and obj.signatures
                                    and obj.__module__.startswith("irgrid"))
    try:  # a checkout with irgrid.aot: whether its module served the kernels
        from irgrid.aot import loader
        out["aot used"] = bool(loader.functions())
    except ImportError:
        out["aot used"] = None
    return out


def run_child(args, side: tuple[str, str, dict], way: str) -> dict:
    _, src, extra = side
    env = dict(os.environ, PYTHONPATH=src, **SINGLE_THREAD_ENV, **extra)
    command = [sys.executable, "-W", "ignore", __file__, "--_child", way, "--index", str(args.index),
               "--topics", str(args.topics), "--model", args.model, "--point", args.point]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load"] = os.getloadavg()[0]
    return result


def spread(values) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--src", action="append", default=[], help="a checkout's src (twice: A and B)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--aot-dir", action="append", default=[],
                        help="with one --src: that checkout with its AOT module off, then from here; with two: each "
                             "checkout's module, in the order of --src")
    parser.add_argument("--model", default="bm25", help="the model family (default bm25)")
    parser.add_argument("--point", default="k1=1.2,b=0.75", help="its point, name=value,... (default k1=1.2,b=0.75)")
    parser.add_argument("--_child", choices=WAYS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child:
        print(json.dumps(child(args.index, args.topics, args._child, args.model, args.point)))
        return
    if len(args.aot_dir) == 1 and len(args.src) == 1:
        sides = [(f"{args.src[0]} IRGRID_AOT=0", args.src[0], {"IRGRID_AOT": "0"}),
                 (f"{args.src[0]} IRGRID_AOT_DIR={args.aot_dir[0]}", args.src[0],
                  {"IRGRID_AOT": "1", "IRGRID_AOT_DIR": args.aot_dir[0]})]
    elif len(args.src) == 2 and len(args.aot_dir) == 2:
        sides = [(f"{src} IRGRID_AOT_DIR={aot}", src, {"IRGRID_AOT": "1", "IRGRID_AOT_DIR": aot})
                 for src, aot in zip(args.src, args.aot_dir)]
    elif len(args.src) == 2 and not args.aot_dir:
        sides = [(src, src, {}) for src in args.src]
    else:
        parser.error("give --src twice (the two checkouts' src, with --aot-dir twice or not at all), "
                     "or once with --aot-dir")
    print(f"{args.model} at {args.point}; index {args.index}, topics {args.topics}, {args.repeats} fresh processes "
          f"a line (CPU s, median [min-max]); load {os.getloadavg()[0]:.1f}", flush=True)
    results: dict = {(side[0], way): [] for side in sides for way in WAYS}
    for _ in range(args.repeats):
        for way in WAYS:
            for side in sides:  # alternating sides, one fresh process each
                results[(side[0], way)].append(run_child(args, side, way))
    steps = ["topics", "reader", "scorer + prepare", "open", "first query", "open + first query"]
    for way in WAYS:
        for label, _, _ in sides:
            runs = results[(label, way)]
            print(f"{way} open, {label} (pyarrow.dataset imported before the clock: "
                  f"{runs[0]['dataset imported before']}, after: {runs[0]['dataset imported after']}; "
                  f"aot used: {sorted({str(r['aot used']) for r in runs})}; JIT kernels run: "
                  f"{sorted({kernel for r in runs for kernel in r['jit kernels run']})})")
            for step in steps:
                print(f"  {step:20s} {spread([r[step] for r in runs])}")
            print(f"  {'load (1 min)':20s} {spread([r['load'] for r in runs])}")


if __name__ == "__main__":
    main()
