"""Index build on the local pool against a dask.distributed cluster, and a cost model of the build.

    python benchmarks/cluster_build.py [--docs 1000000] [--collection DIR] [--work DIR] [--repeats 2]
                                       [--configs local-2,cluster-2,cluster-1] [--json OUT]

The collection is scale.py's synthetic one (``SyntheticSpec(num_docs=N)``, generated when missing),
the analyzer scale.py's (lucene, no stemmer, no stop words, positions kept), ``num_buckets=None``.
Configurations (each build in a fresh child process, repeats interleaved, medians [min-max]):

  local-W     ``build_index(..., scheduler=None, num_workers=W)``: the local pool irgrid uses by default
              (threads for this collection of plain words, ``default_local_scheduler``; processes
              for one whose analysis runs in Python); per-task start and stop from
              ``dask.diagnostics.Profiler``
  cluster-W   a ``distributed.LocalCluster(n_workers=W, threads_per_worker=1, processes=True)``
              started in the child (its start-up timed apart), its scheduler address passed to
              ``build_index(..., scheduler=address)`` as the workflow passes ``dask.scheduler``;
              per-task timings from ``distributed.get_task_stream``, the workers' file I/O (bytes
              through read/write calls, ``psutil``) before and after the build

Per build: wall seconds of the ``build_index`` call, docs/s, peak RSS of the child's whole process
tree (scale.py's sampler: the child, the pool or the cluster's nanny and worker processes), and
the sha256 of every file of the index: every configuration must write the same bytes.

The cost model (printed, and written down in benchmarks/HISTORY.md): the build is split into the driver's
serial head (input sizing, the graph) and tail (stats, removing the pieces, installing the index),
and per-task durations by phase (analyze per shard, postings per bucket, docs, terms; forward per
part in builds from before the forward index became its own output) with the phases' dependencies
(buckets and docs after every shard; terms and forward parts after every bucket). The wall time on W
workers is predicted by list-scheduling the measured task durations on W workers (plus the measured
gap between two tasks on a worker: the scheduler's overhead per task) and adding head and tail. The
model is checked by predicting the 2-worker build from the 1-worker one; the slowdown of the tasks
themselves when two run at once (shared CPU caches, memory bandwidth, the page cache and disk) is
the measured contention factor.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import scale  # noqa: E402  (the analyzer is scale.py's)

#: aggregate bandwidths of a shared file system (MB/s) at which the model states the I/O bound of a cluster build
FS_BANDWIDTHS_MB_S = (500, 1000, 2000)
#: the build's tasks in dependency order; a phase waits for every task of the phases it names
PHASE_DEPENDS = {"analyze": (), "postings": ("analyze",), "docs": ("analyze",),
                 "terms": ("postings",), "forward": ("postings",)}


# ============================================================ child: one build


def phase_of(key) -> str:
    """``analyze`` of ``('irgrid-analyze-<token>', 3)``: the task's kind without irgrid's prefix and token."""
    from dask.utils import key_split

    name = key_split(key)
    return name[len("irgrid-"):] if name.startswith("irgrid-") else name


def task_index(key) -> int:
    """The shard / bucket / part number of a task key (0 for the single tasks)."""
    if isinstance(key, tuple):
        return int(key[-1])
    text = str(key)
    if text.startswith("(") and text.rstrip(")").split(",")[-1].strip().isdigit():
        return int(text.rstrip(")").split(",")[-1])
    return 0


def io_of_this_process() -> dict:
    import psutil

    counters = psutil.Process().io_counters()
    return {"read_chars": counters.read_chars, "write_chars": counters.write_chars,
            "read_bytes": counters.read_bytes, "write_bytes": counters.write_bytes}


def task_cpu_plugin():
    """A worker plugin recording each task's CPU seconds (the worker process's, from executing to done):
    on a shared machine a task's wall time is mostly waiting for a core, its CPU time is its work."""
    from distributed import WorkerPlugin

    class TaskCPU(WorkerPlugin):
        name = "irgrid-task-cpu"

        def setup(self, worker):
            self.started, self.cpu = {}, {}

        def transition(self, key, start, finish, **kwargs):
            if finish == "executing":
                self.started[key] = time.process_time()
            elif start == "executing" and key in self.started:
                self.cpu[str(key)] = time.process_time() - self.started.pop(key)

    return TaskCPU()


def task_cpu_of(dask_worker) -> dict:
    return dask_worker.plugins["irgrid-task-cpu"].cpu


def child(task: dict) -> dict:
    import resource

    import irgrid.index  # noqa: F401  (imports outside the timed region)
    from irgrid.index import build_index

    mode, workers = task["mode"], task["workers"]
    out: dict = {"mode": mode, "workers": workers}
    build = dict(analyzer=scale.ANALYZER, num_buckets=None, progress=False)
    if mode == "local":
        from dask.diagnostics import Profiler

        with Profiler() as profiler:
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            stats = build_index(task["docs"], task["out"], scheduler=None, num_workers=workers, **build)
            out["seconds"] = time.perf_counter() - start_wall
            out["driver_cpu_s"] = time.process_time() - start_cpu
        out["tasks"] = [{"phase": phase_of(r.key), "index": task_index(r.key), "worker": str(r.worker_id),
                         "start": r.start_time - start_wall, "stop": r.end_time - start_wall}
                        for r in profiler.results if phase_of(r.key) in PHASE_DEPENDS]
    else:
        from distributed import Client, LocalCluster, get_task_stream

        started = time.perf_counter()
        # no memory limit: the local pool has none, and a nanny restarting a worker would change the timing
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          memory_limit=0) as cluster, Client(cluster) as client:
            client.wait_for_workers(workers)
            client.register_plugin(task_cpu_plugin())
            out["cluster_start_s"] = time.perf_counter() - started
            io_before = client.run(io_of_this_process)
            with get_task_stream(client) as stream:
                start_epoch = time.time()
                start_wall, start_cpu = time.perf_counter(), time.process_time()
                # the address, as the workflow passes dask.scheduler: build_index opens its own Client
                stats = build_index(task["docs"], task["out"], scheduler=cluster.scheduler_address, **build)
                out["seconds"] = time.perf_counter() - start_wall
                out["driver_cpu_s"] = time.process_time() - start_cpu
            io_after = client.run(io_of_this_process)
            cpu = {key: seconds for per_worker in client.run(task_cpu_of).values() for key, seconds in per_worker.items()}
        out["worker_io"] = {name: {k: io_after[addr][k] - io_before[addr][k] for k in io_after[addr]}
                            for name, addr in zip(range(len(io_after)), sorted(io_after))}
        tasks, transfer_s = [], 0.0
        for record in stream.data:
            compute = [s for s in record["startstops"] if s["action"] == "compute"]
            transfer_s += sum(s["stop"] - s["start"] for s in record["startstops"] if s["action"] == "transfer")
            if not compute or phase_of(record["key"]) not in PHASE_DEPENDS:  # not the gathering tasks
                continue
            tasks.append({"phase": phase_of(record["key"]), "index": task_index(record["key"]),
                          "worker": record["worker"], "start": compute[0]["start"] - start_epoch,
                          "stop": compute[-1]["stop"] - start_epoch, "cpu": cpu.get(str(record["key"])),
                          "nbytes": record.get("nbytes")})
        out["tasks"] = tasks
        out["transfer_s"] = transfer_s
    out["info"] = {k: stats[k] for k in ("num_docs", "num_terms", "num_buckets") if k in stats}
    out["self_maxrss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["loadavg_1min"] = os.getloadavg()[0]
    return out


# ============================================================ the cost model


def phase_table(result: dict) -> dict:
    """Per phase: tasks, sum and median of wall durations (and of CPU seconds where measured), first
    start, last stop (seconds from the build's start)."""
    table: dict = {}
    for t in result["tasks"]:
        row = table.setdefault(t["phase"], {"tasks": 0, "durations": [], "cpu": [], "first_start": t["start"],
                                            "last_stop": t["stop"]})
        row["tasks"] += 1
        row["durations"].append(t["stop"] - t["start"])
        if t.get("cpu") is not None:
            row["cpu"].append(t["cpu"])
        row["first_start"] = min(row["first_start"], t["start"])
        row["last_stop"] = max(row["last_stop"], t["stop"])
    for row in table.values():
        row["sum_s"] = sum(row["durations"])
        row["median_s"] = harness.med(row["durations"])
        row["cpu_sum_s"] = sum(row["cpu"]) if row["cpu"] else None
        row["cpu_median_s"] = harness.med(row["cpu"]) if row["cpu"] else None
    return table


def serial_parts(result: dict) -> dict:
    """The driver's head (before the first task starts) and tail (after the last one stops)."""
    starts = [t["start"] for t in result["tasks"]]
    stops = [t["stop"] for t in result["tasks"]]
    return {"head_s": min(starts), "tail_s": result["seconds"] - max(stops)}


def task_gap(result: dict) -> float:
    """Median idle time of a worker between one task's stop and its next task's start, where it had a next
    task ready (inside a phase): what the scheduler costs per task."""
    by_worker: dict = {}
    for t in result["tasks"]:
        by_worker.setdefault(t["worker"], []).append(t)
    gaps = []
    for tasks in by_worker.values():
        tasks.sort(key=lambda t: t["start"])
        for a, b in zip(tasks, tasks[1:]):
            if a["phase"] == b["phase"]:
                gaps.append(max(0.0, b["start"] - a["stop"]))
    return harness.med(gaps) if gaps else 0.0


def predict(durations: dict, workers: int, head: float, tail: float, gap: float) -> float:
    """Wall seconds of a build whose tasks take ``durations[phase]`` (a list, in submission order) on
    ``workers`` workers: a task starts when its phase's dependencies are done and a worker is free
    (earliest-free worker, tasks in order, as Dask's scheduler hands out ready tasks of equal priority),
    each paying ``gap``; plus the driver's head and tail."""
    done: dict = {}
    free = [0.0] * workers
    heapq.heapify(free)
    order = [p for p in PHASE_DEPENDS if p in durations]
    # phases whose dependencies finish at the same moment share the workers (buckets and docs; terms and forward)
    pending = list(order)
    while pending:
        # the phases whose dependencies are all done, each ready when the last of them finished
        ready_at = {p: max([done[d] for d in PHASE_DEPENDS[p] if d in durations] or [0.0]) for p in pending
                    if all(d in done for d in PHASE_DEPENDS[p] if d in durations)}
        moment = min(ready_at.values())
        batch = [p for p in ready_at if ready_at[p] == moment]
        # interleave nothing: the single tasks (docs, terms) go first, as they are on the critical path
        batch.sort(key=lambda p: len(durations[p]))
        finish = {p: moment for p in batch}
        for p in batch:
            for d in durations[p]:
                start = max(heapq.heappop(free), moment)
                stop = start + gap + d
                heapq.heappush(free, stop)
                finish[p] = max(finish[p], stop)
        done.update(finish)
        pending = [p for p in pending if p not in batch]
    return head + max(done.values()) + tail


def durations_by_phase(result: dict, cpu: bool = False) -> dict:
    """Each phase's task durations in task order: wall seconds, or the tasks' CPU seconds (what a task
    takes on a core of its own)."""
    out: dict = {}
    for t in sorted(result["tasks"], key=lambda t: (t["phase"], t["index"])):
        out.setdefault(t["phase"], []).append(t["cpu"] if cpu else t["stop"] - t["start"])
    return out


def scaled_durations(durations: dict, factor: int, phase_counts: dict) -> dict:
    """The tasks of a collection ``factor`` times larger, same spec otherwise: as many times the shards
    (docs_per_shard fixed), the buckets (one per TOKENS_PER_BUCKET tokens) and the forward parts
    (FORWARD_PART_DOCS documents each), each of the same size; docs (one task over every document)
    ``factor`` times longer; terms (one task over the vocabulary, which the spec caps) the same."""
    out = {}
    for phase, values in durations.items():
        if phase in ("docs",):
            out[phase] = [v * factor for v in values]
        elif phase in ("terms",):
            out[phase] = list(values)
        else:
            count = phase_counts.get(phase, len(values) * factor)
            out[phase] = [values[i % len(values)] for i in range(count)]
    return out


def model(results: dict, num_docs: int) -> dict:
    """Predictions from the median build (by wall time) of each cluster configuration."""
    def median_run(runs):
        return sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]

    out: dict = {"configs": {}, "predicted": {}}
    for config, runs in results.items():
        run = median_run(runs)
        out["configs"][config] = {"measured_s": run["seconds"], "serial": serial_parts(run), "gap_s": task_gap(run),
                                  "phases": {p: {k: v for k, v in row.items() if k not in ("durations", "cpu")}
                                             for p, row in phase_table(run).items()}}
        if run.get("worker_io"):
            out["configs"][config]["io"] = {k: sum(w[k] for w in run["worker_io"].values())
                                            for k in ("read_chars", "write_chars", "read_bytes", "write_bytes")}
        if "transfer_s" in run:
            out["configs"][config]["transfer_s"] = run["transfer_s"]
            out["configs"][config]["result_bytes"] = sum(t.get("nbytes") or 0 for t in run["tasks"])
    one = results.get("cluster-1")
    if not one:
        return out
    run = median_run(one)
    serial, gap = serial_parts(run), task_gap(run)
    head, tail = serial["head_s"], serial["tail_s"]
    wall, cpu = durations_by_phase(run), durations_by_phase(run, cpu=True)
    has_cpu = all(v is not None for values in cpu.values() for v in values)
    predicted = out["predicted"]
    io = out["configs"]["cluster-1"].get("io")
    if io:
        # every piece written and read again: on a cluster the workers share the file system these go through
        out["shared_fs_bytes"] = io["read_chars"] + io["write_chars"]
        out["shared_fs_seconds_at"] = {f"{bw} MB/s": out["shared_fs_bytes"] / (bw * 1e6) for bw in FS_BANDWIDTHS_MB_S}
    for w in (1, 2, 16):
        predicted[f"cluster-{w}, from cluster-1's task wall times"] = predict(wall, w, head, tail, gap)
        if has_cpu:
            predicted[f"cluster-{w}, from cluster-1's task CPU times (a core per worker)"] = predict(cpu, w, head, tail, gap)
    two = results.get("cluster-2")
    if two:
        run2 = median_run(two)
        wall2, cpu2 = durations_by_phase(run2), durations_by_phase(run2, cpu=True)
        out["contention_2_vs_1"] = {phase: {"wall": harness.med(wall2[phase]) / harness.med(wall[phase]),
                                            "cpu": (harness.med(cpu2[phase]) / harness.med(cpu[phase])
                                                    if has_cpu and None not in cpu2[phase] else None)}
                                    for phase in wall if phase in wall2}
        out["measured_cluster_2_s"] = run2["seconds"]
        # the schedule alone (dependencies, barriers, head, tail, gaps), without the contention term: the 2-worker
        # build replayed from its own task durations
        s2 = serial_parts(run2)
        predicted["cluster-2, replayed from cluster-2's own task wall times"] = predict(
            wall2, 2, s2["head_s"], s2["tail_s"], task_gap(run2))
    # ten times the documents (the 10M from 1M): the larger build's task counts
    factor = 10
    counts = {"analyze": len(wall.get("analyze", [])) * factor, "postings": run["info"]["num_buckets"] * factor,
              "forward": -(-num_docs * factor // 65536)}
    for w in (2, 16):
        predicted[f"{factor}x docs, cluster-{w}, from cluster-1's task wall times"] = predict(
            scaled_durations(wall, factor, counts), w, head * factor, tail * factor, gap)
        if has_cpu:
            predicted[f"{factor}x docs, cluster-{w}, from cluster-1's task CPU times"] = predict(
                scaled_durations(cpu, factor, counts), w, head * factor, tail * factor, gap)
    return out


# ============================================================ parent


def file_hashes(directory: Path) -> dict[str, str]:
    """sha256 of every file under ``directory``, by relative path (the parent's check of identical builds)."""
    from irgrid.collections.sources import sha256_of

    return {str(path.relative_to(directory)): sha256_of(path) for path in sorted(directory.rglob("*")) if path.is_file()}


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--_child":
        task = json.loads(Path(sys.argv[2]).read_text())
        Path(sys.argv[3]).write_text(json.dumps(child(task)))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--collection", type=Path, help="default benchmarks/.data/syn-N (scale.py's)")
    parser.add_argument("--work", type=Path, help="where the indexes go; default benchmarks/.data/cluster/<collection>")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--configs", default="local-2,cluster-2,cluster-1",
                        help="comma-separated local-W (the local process pool) / cluster-W (LocalCluster, W workers)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--report", type=Path, help="recompute and print the summary and model of an earlier --json, and stop")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        summary = summarise(saved["results"], saved["docs"])
        summary["cost_model"] = model(saved["results"], saved["docs"])
        print_summary(summary, saved["docs"])
        return

    configs = []
    for name in args.configs.split(","):
        mode, _, workers = name.partition("-")
        if mode not in ("local", "cluster") or not workers.isdigit():
            parser.error(f"bad configuration {name!r}: local-W or cluster-W")
        configs.append((name, mode, int(workers)))
    collection = harness.ensure_collection((args.collection or harness.DEFAULT_SCRATCH / f"syn-{args.docs}").resolve(),
                                         args.docs)
    work = (args.work or harness.DEFAULT_SCRATCH / "cluster" / collection.name).resolve()
    log_dir = work / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    print("command: python benchmarks/cluster_build.py " + " ".join(sys.argv[1:]), flush=True)
    print(f"machine: {harness.machine()}", flush=True)
    print(f"collection {collection} ({args.docs:,} docs), indexes in {work}", flush=True)

    results: dict[str, list] = {}
    hashes: dict[str, dict] = {}
    for r in range(args.repeats):
        for name, mode, workers in configs:
            out = work / name
            if out.exists():
                shutil.rmtree(out)
            task = {"kind": "build", "system": name, "mode": mode, "workers": workers,
                    "docs": str(collection / "docs"), "out": str(out)}
            result = harness.run_child(task, log_dir, single_thread=False, script=Path(__file__).resolve())
            result["index_bytes"] = harness.dir_bytes(out)
            digest = file_hashes(out)
            same = "" if not hashes else ("same bytes as " + next(iter(hashes)) if digest == next(iter(hashes.values()))
                                          else "DIFFERENT bytes from " + next(iter(hashes)))
            hashes.setdefault(name, digest)
            result["same_bytes"] = digest == next(iter(hashes.values()))
            results.setdefault(name, []).append(result)
            start = f"  cluster start {result['cluster_start_s']:.1f} s" if "cluster_start_s" in result else ""
            print(f"[{r + 1}/{args.repeats}] {name:10s} {result['seconds']:7.1f} s  "
                  f"{args.docs / result['seconds']:9,.0f} docs/s  "
                  f"peak RSS {result['peak_rss_bytes'] / harness.MIB:7,.0f} MiB  driver CPU {result['driver_cpu_s']:.1f} s"
                  f"{start}  {len(digest)} files, {same or 'the reference'}  (load {result['loadavg_1min']:.1f})",
                  flush=True)

    summary = summarise(results, args.docs)
    summary["cost_model"] = model(results, args.docs)
    print_summary(summary, args.docs)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"summary": summary, "results": results, "docs": args.docs,
                                         "machine": harness.machine(), "command": sys.argv[1:]}, indent=1))


def summarise(results: dict, num_docs: int) -> dict:
    summary: dict = {"builds": {}}
    for name, runs in results.items():
        summary["builds"][name] = {
            "seconds": [r["seconds"] for r in runs],
            "docs_per_s": [num_docs / r["seconds"] for r in runs],
            "peak_rss_mib": [r["peak_rss_bytes"] / harness.MIB for r in runs],
            "driver_cpu_s": [r["driver_cpu_s"] for r in runs],
            "cluster_start_s": [r["cluster_start_s"] for r in runs if "cluster_start_s" in r],
            "index_mib": runs[-1]["index_bytes"] / harness.MIB,
            "same_bytes": all(r["same_bytes"] for r in runs),
            "loadavg": [r["loadavg_1min"] for r in runs],
            "info": runs[-1]["info"],
        }
    return summary


def print_summary(summary: dict, num_docs: int) -> None:
    spread, med = harness.spread, harness.med
    print(f"\nbuilds of {num_docs:,} documents, median [min-max]")
    for name, b in summary["builds"].items():
        start = f"  cluster start {spread(b['cluster_start_s'], '{:.1f}')} s" if b["cluster_start_s"] else ""
        print(f"  {name:10s} {spread(b['seconds'], '{:.1f}')} s  {spread(b['docs_per_s'], '{:,.0f}')} docs/s  "
              f"peak RSS {spread(b['peak_rss_mib'], '{:,.0f}')} MiB  driver CPU {spread(b['driver_cpu_s'], '{:.1f}')} s"
              f"{start}  index {b['index_mib']:,.1f} MiB  bytes identical to the first: {b['same_bytes']}  "
              f"load {spread(b['loadavg'], '{:.1f}')}  {b['info']}")
    builds = summary["builds"]
    for a, b in (("cluster-2", "local-2"), ("cluster-2", "cluster-1"), ("local-2", "cluster-1")):
        if a in builds and b in builds:
            print(f"  {a} / {b}: wall {med(builds[a]['seconds']) / med(builds[b]['seconds']):.2f}, "
                  f"peak RSS {med(builds[a]['peak_rss_mib']) / med(builds[b]['peak_rss_mib']):.2f}")
    cost = summary["cost_model"]
    print("\ncost model (the median build of each configuration; seconds from the build_index call)")
    for name, m in cost["configs"].items():
        print(f"  {name}: measured {m['measured_s']:.1f} s; serial head {m['serial']['head_s']:.2f} s, "
              f"tail {m['serial']['tail_s']:.2f} s; gap between tasks on a worker {m['gap_s'] * 1e3:.1f} ms")
        if name.startswith("local"):
            print("      (the local pool takes tasks in chunks: a task's time runs from its chunk's submission)")
        for phase, row in m["phases"].items():
            cpu = (f"  CPU sum {row['cpu_sum_s']:7.2f} s  median {row['cpu_median_s']:6.3f} s"
                   if row["cpu_sum_s"] is not None else "")
            print(f"      {phase:9s} {row['tasks']:4d} tasks  wall sum {row['sum_s']:7.2f} s  median {row['median_s']:6.3f} s"
                  f"{cpu}  from {row['first_start']:6.2f} to {row['last_stop']:6.2f} s")
        if "transfer_s" in m:
            print(f"      data moved between workers: {m['transfer_s']:.3f} s of transfers; the tasks' results "
                  f"{m['result_bytes']:,} bytes in all (file names and counts: the pieces go through the file system)")
        if m.get("io"):
            io = m["io"]
            print(f"      workers' file I/O: read {io['read_chars'] / harness.MIB:,.0f} MiB, write "
                  f"{io['write_chars'] / harness.MIB:,.0f} MiB through calls; from / to the block device "
                  f"{io['read_bytes'] / harness.MIB:,.0f} / {io['write_bytes'] / harness.MIB:,.0f} MiB")
    if cost.get("contention_2_vs_1"):
        print("  task duration, 2 workers / 1, median per phase, wall (CPU): "
              + ", ".join(f"{p} {v['wall']:.2f} ({v['cpu']:.2f})" if v["cpu"] is not None else f"{p} {v['wall']:.2f}"
                          for p, v in cost["contention_2_vs_1"].items()))
    if "shared_fs_bytes" in cost:
        print(f"  through the file system (cluster-1's workers, read + written): {cost['shared_fs_bytes'] / 2**30:.2f} GiB; "
              "on a shared file system at least "
              + ", ".join(f"{v:.1f} s at {k}" for k, v in cost["shared_fs_seconds_at"].items()) + " (10x docs: 10x)")
    for name, value in cost["predicted"].items():
        print(f"  predicted {name:70s} {value:7.1f} s")
    if "measured_cluster_2_s" in cost:
        print(f"  measured  cluster-2 {cost['measured_cluster_2_s']:.1f} s")


if __name__ == "__main__":
    main()
