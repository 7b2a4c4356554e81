"""The index format, before and after, in one run: size on disk, build, and open + prepare.

    python benchmarks/index_format.py --docs DIR --topics FILE [--before-src /work/main/src]
                                      [--repeats 3] [--peers tantivy] [--scratch DIR] [--json OUT]

Systems, each built and opened in fresh child processes, interleaved (repeat 1 of every system,
then repeat 2, ...): "before" (the package at --before-src: main's format), "after" (this
checkout's src) with the forward index (build_index, then build_forward_index into the index's
forward/, timed together as "before" built it in one) and "after-noforward" without it, and the
peers (benchmarks/peers.py). Analyzer lucene, no stemmer, no stop words, positions;
Dask local processes, 2 workers, as benchmarks/scale.py.

  build         CPU seconds of the build process and all its descendants (user + system,
                wait4: the Dask workers are the child's children), wall seconds, peak RSS of the
                process tree (psutil, every 50 ms), bytes on disk per top-level entry.
  open          CPU seconds (time.process_time) of open + prepare of the whole query set for BM25
                top-1000 in a fresh process, one thread (scale.py's "open": irgrid
                Scorer(IndexReader).prepare; tantivy open + searcher + query objects).

On a shared machine wall times are mostly waiting: compare CPU seconds and the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from harness import SINGLE_THREAD_ENV, TreeRSS  # noqa: E402
from scale import ANALYZER, BM25_POINT, make_system, read_topics  # noqa: E402

DEPTH = 1000


def child(task: dict) -> dict:
    out: dict = {}
    if task["kind"] == "build":
        if task["system"] == "tantivy":
            peer = make_system("tantivy", {})
            out["info"] = peer.build(task["docs"], task["out"])
        else:
            from irgrid.index import build_index

            # "before" (format 2) wrote its forward index inside the index; this checkout builds it apart
            stats = build_index(task["docs"], task["out"], ANALYZER, num_buckets=None, scheduler=None,
                                progress=False, num_workers=2)
            if task["forward"] and task["system"] != "before":
                from irgrid.index.forward import build_forward_index

                build_forward_index(task["out"], Path(task["out"]) / "forward", workers=2)
            out["info"] = {k: stats[k] for k in ("num_docs", "num_terms", "num_buckets", "format_version")}
    else:
        topics = read_topics(task["topics"], None)
        system = make_system("irgrid-bm25" if task["system"] != "tantivy" else "tantivy", {})
        start = time.process_time()
        if task["system"] == "tantivy":
            system.open(task["index"], topics, BM25_POINT["k1"], BM25_POINT["b"], DEPTH)
        else:
            system.open(task["index"], topics, DEPTH)
        out["open_cpu_s"] = time.process_time() - start
    out["loadavg_1min"] = os.getloadavg()[0]
    return out


def run_child(task: dict, src: str, log: Path, single_thread: bool) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(task, handle)
    result_path = handle.name + ".out"
    env = dict(os.environ, PYTHONPATH=src)
    if single_thread:
        env.update(SINGLE_THREAD_ENV)
    start = time.perf_counter()
    with open(log, "a", encoding="utf-8") as out:
        proc = subprocess.Popen([sys.executable, __file__, "--_child", handle.name, result_path],
                                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=str(REPO))
        monitor = TreeRSS(proc.pid)
        monitor.start()
        _, status, usage = os.wait4(proc.pid, 0)  # usage: the child and every descendant it waited for
        proc.returncode = os.waitstatus_to_exitcode(status)
        monitor.halt.set()
        monitor.join()
    wall = time.perf_counter() - start
    os.unlink(handle.name)
    if proc.returncode != 0:
        raise RuntimeError(f"child {task} failed; log {log}")
    with open(result_path, encoding="utf-8") as f:
        result = json.load(f)
    os.unlink(result_path)
    result.update(wall_s=wall, tree_cpu_s=usage.ru_utime + usage.ru_stime, peak_rss_bytes=monitor.peak)
    return result


def sizes(path: Path) -> dict[str, int]:
    """Bytes on disk of each top-level entry of an index directory, and the total."""
    out = {}
    for entry in sorted(path.iterdir()):
        files = [entry] if entry.is_file() else [f for f in entry.rglob("*") if f.is_file()]
        out[entry.name] = sum(f.stat().st_size for f in files)
    out["total"] = sum(out.values())
    return out


def med(values):
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", required=True)
    parser.add_argument("--topics", required=True)
    parser.add_argument("--before-src", default="/work/main/src")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peers", default="tantivy")
    parser.add_argument("--scratch", default=None, help="where the indexes are built (default: a temporary dir)")
    parser.add_argument("--skip-build", action="store_true", help="reuse the indexes of --scratch")
    parser.add_argument("--before-index", default=None,
                        help="an index the code of --before-src built (read only): opened as 'before', not rebuilt")
    parser.add_argument("--systems", default=None, help="comma-separated subset of before,after,after-noforward "
                        "and the peers (default: all); after-noforward's size is after's without forward/")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="index-format-"))
    scratch.mkdir(parents=True, exist_ok=True)
    log = scratch / "children.log"
    after_src = str(REPO / "src")
    systems = {
        "before": (args.before_src, True),
        "after": (after_src, True),
        "after-noforward": (after_src, False),
        **{peer: (after_src, True) for peer in filter(None, args.peers.split(","))},
    }
    if args.systems:
        systems = {name: value for name, value in systems.items() if name in args.systems.split(",")}
    builds = {name: [] for name in systems}
    opens = {name: [] for name in systems if name != "after-noforward"}
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} docs {args.docs}; load {os.getloadavg()[0]:.1f}", flush=True)
    index_of = {name: scratch / name for name in systems}
    if args.before_index:
        index_of["before"] = Path(args.before_index)
        builds["before"].append({"tree_cpu_s": float("nan"), "wall_s": float("nan"), "peak_rss_bytes": float("nan"),
                                 "bytes": sizes(index_of["before"])})
    for repeat in range(args.repeats):
        for name, (src, forward) in systems.items():
            index = index_of[name]
            if not args.skip_build and not (name == "before" and args.before_index):
                if index.exists():
                    shutil.rmtree(index)
                result = run_child({"kind": "build", "system": name, "docs": args.docs, "out": str(index),
                                    "forward": forward}, src, log, single_thread=False)
                result["bytes"] = sizes(index)
                builds[name].append(result)
                print(f"build {name} #{repeat}: {result['tree_cpu_s']:.1f} CPU s, {result['wall_s']:.1f} wall s, "
                      f"peak RSS {result['peak_rss_bytes'] / 2**20:.0f} MiB, "
                      f"{result['bytes']['total'] / 2**20:.1f} MiB, load {result['loadavg_1min']:.1f}", flush=True)
        for name in opens:
            src = systems[name][0]
            result = run_child({"kind": "open", "system": name, "index": str(index_of[name]), "topics": args.topics},
                               src, log, single_thread=True)
            opens[name].append(result)
            print(f"open {name} #{repeat}: {result['open_cpu_s']:.2f} CPU s, {result['wall_s']:.1f} process wall s, "
                  f"load {result['loadavg_1min']:.1f}", flush=True)

    print("\n## medians")
    for name, runs in builds.items():
        if runs:
            mib = {k: round(v / 2**20, 1) for k, v in runs[-1]["bytes"].items()}
            print(f"build {name:16s} CPU {med([r['tree_cpu_s'] for r in runs]):7.1f} s  "
                  f"wall {med([r['wall_s'] for r in runs]):6.1f} s  "
                  f"peak RSS {med([r['peak_rss_bytes'] for r in runs]) / 2**20:6.0f} MiB  size MiB {mib}")
    for name, runs in opens.items():
        values = [r["open_cpu_s"] for r in runs]
        print(f"open+prepare {name:16s} CPU {med(values):.2f} s  [{min(values):.2f}-{max(values):.2f}]")
    if builds.get("before") and builds.get("after"):
        b, a = builds["before"], builds["after"]
        print(f"after/before: size {a[-1]['bytes']['total'] / b[-1]['bytes']['total']:.3f}, "
              f"build CPU {med([r['tree_cpu_s'] for r in a]) / med([r['tree_cpu_s'] for r in b]):.3f}, "
              f"peak RSS {med([r['peak_rss_bytes'] for r in a]) / med([r['peak_rss_bytes'] for r in b]):.3f}")
    open_cpu = {name: med([r["open_cpu_s"] for r in runs]) for name, runs in opens.items()}
    if "after" in open_cpu and "before" in open_cpu:
        print(f"after/before: open+prepare CPU {open_cpu['after'] / open_cpu['before']:.3f}")
    if "tantivy" in builds and builds["tantivy"]:
        t = builds["tantivy"][-1]["bytes"]["total"]
        for name in ("before", "after", "after-noforward"):
            if builds.get(name):
                print(f"size {name} / tantivy: {builds[name][-1]['bytes']['total'] / t:.2f}")
    if builds.get("after"):
        without = builds["after"][-1]["bytes"]["total"] - builds["after"][-1]["bytes"].get("forward", 0)
        print(f"size after without forward/: {without / 2**20:.1f} MiB"
              + (f", / tantivy {without / builds['tantivy'][-1]['bytes']['total']:.2f}" if builds.get("tantivy") else ""))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"builds": builds, "opens": opens, "docs": args.docs}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        with open(sys.argv[2], encoding="utf-8") as f:
            task = json.load(f)
        result = child(task)
        with open(sys.argv[3], "w", encoding="utf-8") as f:
            json.dump(result, f)
    else:
        main()
