"""One irgrid index build as scale.py times it (a fresh child, peak RSS of its process tree), no peer.

    python benchmarks/build_only.py --docs 10000000 [--collection DIR] [--out DIR] [--forward] [--keep] [--json OUT]

For the sizes where a whole scale.py run (tantivy's build, the query sets, the grid) is more than
the question: does the build's memory stay flat from 1M to 10M documents, at what docs/s. The
index holds no forward index (like tantivy's); ``--forward`` builds one after it in the same child
(``irgrid.index.forward.build_forward_index``, into the index's ``forward/``), timed with it. The
build is scale.py's (``build_index(..., scheduler=None, num_workers=2)``, its
analyzer); the collection is scale.py's synthetic one (generated when missing); the index is
removed afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import scale  # noqa: E402


def child(task: dict) -> dict:
    """The build, in a fresh process: wall and CPU seconds (this process's threads and its reaped workers)."""
    from irgrid.index import build_index

    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = time.process_time()
    start = time.perf_counter()
    stats = build_index(task["docs"], task["out"], dict(scale.ANALYZER, stemmer="none"), num_buckets=None,
                        scheduler=None, progress=False, num_workers=2)
    if task["forward"]:
        from irgrid.index.forward import build_forward_index

        build_forward_index(task["out"], Path(task["out"]) / "forward", workers=2)
    seconds = time.perf_counter() - start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "seconds": seconds,
        "cpu_seconds": (time.process_time() - cpu_before + children.ru_utime - children_before.ru_utime
                        + children.ru_stime - children_before.ru_stime),
        "info": {k: stats[k] for k in ("num_docs", "num_terms", "num_buckets") if k in stats},
        "self_maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "loadavg_1min": os.getloadavg()[0],
    }


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        task = json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
        Path(sys.argv[3]).write_text(json.dumps(child(task)), encoding="utf-8")
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--collection", type=Path)
    parser.add_argument("--out", type=Path, help="the index directory; default benchmarks/.data/indexes/build-only-N")
    parser.add_argument("--forward", action="store_true", help="build the forward index too")
    parser.add_argument("--keep", action="store_true", help="keep the index")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    collection = harness.ensure_collection((args.collection or harness.DEFAULT_SCRATCH / f"syn-{args.docs}").resolve(),
                                         args.docs)
    out = (args.out or harness.DEFAULT_SCRATCH / "indexes" / f"build-only-{args.docs}").resolve()
    if out.exists():
        shutil.rmtree(out)
    log_dir = out.parent / f"{out.name}-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {harness.machine()}; load {os.getloadavg()[0]:.1f}", flush=True)
    task = {"kind": "build", "system": "irgrid", "docs": str(collection / "docs"), "out": str(out),
            "forward": args.forward}
    result = harness.run_child(task, log_dir, single_thread=False, script=Path(__file__).resolve())
    result["index_bytes"] = harness.dir_bytes(out)
    result["index_breakdown"] = harness.index_breakdown(out)
    print(f"irgrid build{' with the forward index' if args.forward else ''}, {args.docs:,} docs: "
          f"{result['seconds']:.1f} s  CPU {result['cpu_seconds']:.1f} s  {args.docs / result['seconds']:,.0f} docs/s  "
          f"peak RSS (process tree) {result['peak_rss_bytes'] / harness.MIB:,.0f} MiB  "
          f"index {result['index_bytes'] / harness.MIB:,.1f} MiB  buckets {result['info'].get('num_buckets')}  "
          f"(load at the end {result['loadavg_1min']:.1f})", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"docs": args.docs, "forward": args.forward, "machine": harness.machine(),
                                         "result": result}, indent=1))
    if not args.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
