"""What evaluating a chunk of runs costs: `irgrid evaluate` over P runs against the same over one run.

    python benchmarks/evaluation.py                                   # CACM from the mirror, 20 BM25 runs, 5 repeats
    python benchmarks/evaluation.py --synthetic benchmarks/.data/syn-1000000 \\
        --index benchmarks/.data/indexes/syn-1000000/irgrid             # scale.py's 1M collection and index
    python benchmarks/evaluation.py --json benchmarks/results/evaluation-cacm.json

The workflow evaluates a retrieval chunk (up to ``retrieval.chunk_size`` grid points of a model) in
one job: ``irgrid evaluate --run R1 .. RP --qrels Q --topics T --measures M --out E1 .. EP``
(workflow/rules/evaluate.smk). This measures that command as the rule runs it, each in a fresh
process (Python start-up and imports counted both ways), for one run and for P runs, interleaved,
``--repeats`` times: wall seconds, CPU seconds of the process (user + system: on a shared, loaded
machine the wall time is mostly waiting), the seconds the command logs itself (all, imports, evaluation
and writing), peak RSS of the process tree; medians [min-max] and the ratio P runs / 1 run (the
goal: <= 2). Then, in this process and warm, where a run's evaluation goes: the qrels read and the
evaluator built (once per job), and per run the read, ir-measures' evaluation, the write.

Set-up (once, kept in ``--work``): CACM's shards, topics, qrels and index through the package
API (the mirror: ``IRGRID_MIRROR`` or /work/shared/collections), or a synthetic collection of
``irgrid.collections.synthetic`` with its index (its qrels are written when missing); then the runs of P BM25
points (``retrieve_grid``, depth 1000). The measures are config/config.yaml's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(HERE))

POINTS = [{"k1": k1, "b": b} for k1 in (0.6, 0.9, 1.2, 1.5, 1.8) for b in (0.3, 0.5, 0.75, 0.9)]
LOGGED = re.compile(r"evaluated (\d+) runs in ([\d.]+)s \(imports ([\d.]+)s, evaluation and writing ([\d.]+)s\)")


def config_measures() -> list[str]:
    import yaml

    with open(REPO / "config" / "config.yaml", encoding="utf-8") as handle:
        return list(yaml.safe_load(handle)["measures"])


def prepare_cacm(work: Path) -> tuple[Path, Path, Path]:
    """CACM's index, topics and qrels in ``work`` (built once)."""
    from grid_scoring import configured_analyzer

    from irgrid.collections import load_registry, resolve_files, write_document_shards, write_topics
    from irgrid.collections.writers import write_qrels
    from irgrid.index import build_index

    index, topics, qrels = work / "index", work / "topics.parquet", work / "qrels.parquet"
    if not (index / "stats.json").is_file():
        os.environ.setdefault("IRGRID_MIRROR", "/work/shared/collections")
        spec = load_registry(REPO / "config" / "collections.yaml")["cacm"]
        files = resolve_files(spec, download=False)
        write_document_shards(spec, files, work / "docs", num_shards=2)
        write_topics(spec, files, "text", topics)
        write_qrels(spec, files, qrels)
        build_index(work / "docs", index, configured_analyzer("porter"), num_buckets=16, scheduler="sync",
                    progress=False)
    return index, topics, qrels


def prepare_synthetic(collection: Path) -> tuple[Path, Path]:
    """A synthetic collection's topics and qrels (the qrels written if the collection predates them)."""
    from irgrid.collections.synthetic import SyntheticSpec, write_synthetic_qrels

    qrels = collection / "qrels.parquet"
    if not qrels.is_file():
        spec = json.loads((collection / "spec.json").read_text())
        spec = SyntheticSpec(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()})
        write_synthetic_qrels(spec, qrels)
    return collection / "topics.parquet", qrels


def make_runs(index: Path, topics: Path, runs_dir: Path, points: list[dict]) -> list[Path]:
    from irgrid.grid import encode_point
    from irgrid.index import IndexReader
    from irgrid.retrieve import retrieve_grid
    try:
        from irgrid.runs import read_topics, write_run
    except ImportError:  # a checkout from before run files had their own module (the "before" side)
        from irgrid.retrieve import read_topics, write_run

    paths = [runs_dir / f"{encode_point(point, list(point))}.parquet" for point in points]
    if not all(path.is_file() for path in paths):
        runs_dir.mkdir(parents=True, exist_ok=True)
        for path, run in zip(paths, retrieve_grid(IndexReader(index), read_topics(topics), "bm25", points,
                                                  as_arrow=True)):
            write_run(run, path)
    return paths


def evaluate_command(runs: list[Path], topics: Path, qrels: Path, measures: list[str], out_dir: Path) -> dict:
    """One ``irgrid evaluate`` in a fresh process: wall seconds, its own logged seconds, peak tree RSS."""
    from harness import TreeRSS

    outs = [out_dir / f"{run.stem}.parquet" for run in runs]
    command = [sys.executable, "-m", "irgrid", "evaluate", "--run", *map(str, runs), "--qrels", str(qrels),
               "--topics", str(topics), "--measures", json.dumps(measures), "--out", *map(str, outs)]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    with tempfile.TemporaryFile("w+") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True, env=env)
        monitor = TreeRSS(proc.pid)
        monitor.start()
        # wait4: the child's own CPU seconds, which a loaded machine inflates far less than its wall time
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        monitor.halt.set()
        monitor.join()
        log.seek(0)
        stderr = log.read()
    if proc.returncode != 0:
        raise RuntimeError(f"irgrid evaluate failed (exit {proc.returncode}):\n{stderr[-3000:]}")
    logged = LOGGED.search(stderr)
    result = {"runs": len(runs), "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
              "peak_rss_mib": monitor.peak / 2**20, "loadavg_1min": os.getloadavg()[0]}
    if logged:
        result.update(logged_s=float(logged.group(2)), imports_s=float(logged.group(3)),
                      evaluation_s=float(logged.group(4)))
    return result


def phases(runs: list[Path], topics: Path, qrels: Path, measures: list[str], out_dir: Path) -> dict:
    """Where the CPU time of one job goes, in this process, warm (per run: the least over the runs)."""
    from irgrid.evaluation.evaluator import RunEvaluator, read_qrels, write_evaluation
    try:
        from irgrid.runs import read_run_table as read_run  # what `irgrid evaluate` reads with
        from irgrid.runs import read_topics
    except ImportError:  # a checkout from before run files had their own module (the "before" side)
        from irgrid import retrieve
        from irgrid.retrieve import read_topics
        read_run = getattr(retrieve, "read_run_table", retrieve.read_run)
    clock = time.process_time
    t0 = clock()
    evaluator = RunEvaluator(read_qrels(qrels), measures, read_topics(topics)["qid"])
    setup = clock() - t0
    reads, evaluations, writes = [], [], []
    for run_path in runs:
        t0 = clock()
        run = read_run(run_path)
        t1 = clock()
        per_query = evaluator.evaluate(run)
        t2 = clock()
        write_evaluation(per_query, out_dir / f"phase-{run_path.stem}.parquet")
        t3 = clock()
        reads.append(t1 - t0)
        evaluations.append(t2 - t1)
        writes.append(t3 - t2)
    return {"qrels_and_evaluator_s": setup, "read_run_s": min(reads),
            "evaluate_s": min(evaluations), "write_s": min(writes),
            "rows_per_run": len(read_run(runs[0]))}


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--synthetic", type=Path, help="an irgrid.collections.synthetic collection (default: CACM)")
    parser.add_argument("--index", type=Path, help="the synthetic collection's irgrid index")
    parser.add_argument("--work", type=Path, help="runs (and CACM's index) go here "
                                                  "(default benchmarks/.data/evaluation-<name>)")
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write every measurement here")
    args = parser.parse_args()
    name = args.synthetic.name if args.synthetic else "cacm"
    work = args.work or HERE / ".data" / f"evaluation-{name}"
    work.mkdir(parents=True, exist_ok=True)
    if args.synthetic:
        if not args.index:
            parser.error("--synthetic needs --index")
        index = args.index
        topics, qrels = prepare_synthetic(args.synthetic)
    else:
        index, topics, qrels = prepare_cacm(work)
    started = time.perf_counter()
    runs = make_runs(index, topics, work / "runs", POINTS[:args.points])
    print(f"{name}: {len(runs)} runs in {work / 'runs'} ({time.perf_counter() - started:.1f} s to make or find)")
    measures = config_measures()
    one, many = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for _ in range(args.repeats):
            one.append(evaluate_command(runs[:1], topics, qrels, measures, out))
            many.append(evaluate_command(runs, topics, qrels, measures, out))
        inside = phases(runs, topics, qrels, measures, out)
    ratios = [b["wall_s"] / a["wall_s"] for a, b in zip(one, many)]
    cpu_ratios = [b["cpu_s"] / a["cpu_s"] for a, b in zip(one, many)]
    print(f"irgrid evaluate, fresh process each, {args.repeats} repeats interleaved, measures {measures}")
    print(f"{'':28} {'1 run':>22} {f'{len(runs)} runs':>22}")
    for key, label in [("wall_s", "wall s"), ("cpu_s", "CPU s (user + system)"),
                       ("logged_s", "logged s (after start-up)"), ("imports_s", "imports s"),
                       ("evaluation_s", "evaluation and writing s"), ("peak_rss_mib", "peak RSS MiB")]:
        if key in one[0]:
            fmt = "{:.0f}" if key == "peak_rss_mib" else "{:.2f}"
            print(f"{label:28} {spread([r[key] for r in one], fmt):>22} {spread([r[key] for r in many], fmt):>22}")
    print(f"{len(runs)} runs / 1 run, per repeat: wall {spread(ratios)}, CPU {spread(cpu_ratios)}  goal <= 2: "
          f"wall {'met' if statistics.median(ratios) <= 2 else 'not met'}, "
          f"CPU {'met' if statistics.median(cpu_ratios) <= 2 else 'not met'}")
    print(f"in process, warm, CPU s: qrels read + evaluator {inside['qrels_and_evaluator_s']:.3f} s once; per run "
          f"({inside['rows_per_run']:,} rows) read {inside['read_run_s']:.3f} s, evaluate {inside['evaluate_s']:.3f} s, "
          f"write {inside['write_s']:.3f} s")
    print(f"load average (1 min) at the measurements: {spread([r['loadavg_1min'] for r in one + many])}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"collection": name, "one": one, "many": many, "ratios": ratios, "cpu_ratios": cpu_ratios,
                                         "phases": inside, "measures": measures}, indent=1))


if __name__ == "__main__":
    main()
