"""What a 30,000- and a 100,000-cell grid cost the workflow: planning, a full run, reruns, bytes.

    python benchmarks/big_grid.py [--workdir DIR] [--before-src DIR] [--before-grids 30k 100k]
                                  [--skip-run | --skip-plan] [--run-k1 100] [--run-b 50] [--cores 1]
                                  [--run-collections adi med] [--repeats 3]

The grids (issue 30): BM25 at K1 values of k1 x B values of b plus query likelihood at 4 mu values,
on the six classic collections (cranfield, cacm, cisi, med, npl, adi): 100 x 50 + 4 = 5,004 cells a
collection, 30,024 in all; 100 x 167 + 4 = 16,704 a collection, 100,224 in all. Each runs in a
scratch directory of its own (``--directory``; results/ of the checkout is not touched), with
one experiment of one table (best point), as a user's sweep would be.

Printed, each a median where repeated, with the peak resident memory of the Snakemake process
(GNU time's maximum RSS):

1. ``snakemake -n`` of each grid from nothing (cells, jobs, seconds, MB); with ``--before-src``
   the same with another checkout's package, workflow and config/ (the code before a change),
   measured in this run, and the ratio;
2. unless ``--skip-run``: the 30,024-cell grid (or one of ``--run-k1`` k1 and ``--run-b`` b values over its
   ranges: ``--run-b 167`` is the 100,224-cell grid) run on
   ``--run-collections`` (the two smallest by default), ``--cores`` cores
   (``--config collections_only=...``): seconds, jobs, bytes of
   results/ (and of results/ less the indexes, shards and benchmark files: what the grid stores),
   bytes per cell; then a no-op ``snakemake -n`` (seconds, MB); then one changed b value
   (0.5 -> 0.505): the jobs its dry run lists and the seconds of the rerun.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
COLLECTIONS = ["cranfield", "cacm", "cisi", "med", "npl", "adi"]
MUS = [500, 1000, 1500, 2000]
EXPERIMENT = "big_grid"


def grid_values(count: int, low: float, high: float) -> list[float]:
    """``count`` evenly spaced values from low to high, rounded to 4 decimals (distinct grid points)."""
    step = (high - low) / (count - 1)
    return [round(low + i * step, 4) for i in range(count)]


def write_workdir(workdir: Path, k1_values: int, b_values: int, mirror: str | None, repo: Path = REPO) -> int:
    """A workflow directory with ``repo``'s config/ (a checkout's own: its schema may differ) and one
    experiment; returns the number of cells."""
    shutil.copytree(repo / "config", workdir / "config")
    b = grid_values(b_values, 0.0, 1.0)
    if 0.5 not in b:  # the value the rerun step changes
        b[len(b) // 2] = 0.5
    experiment = {
        "title": f"BM25 {k1_values} k1 x {b_values} b and QL at {len(MUS)} mu (benchmark)",
        "collections": COLLECTIONS,
        "analyzer": "porter",
        "models": {
            "bm25": {"family": "bm25", "grid": {"k1": grid_values(k1_values, 0.1, 5.0), "b": sorted(set(b))}},
            "ql_dirichlet": {"family": "ql_dirichlet", "grid": {"mu": MUS}},
        },
        "baseline": "ql_dirichlet",
        "select_by": "AP",
        "table_measures": ["AP", "P@10"],
        "tables": ["best"],
        "figures": False,
    }
    (workdir / "config" / "experiments" / f"{EXPERIMENT}.yaml").write_text(yaml.safe_dump(experiment, sort_keys=False))
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    config["experiments"] = {EXPERIMENT: f"config/experiments/{EXPERIMENT}.yaml"}
    if mirror:
        config["mirror"] = mirror
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return len(COLLECTIONS) * (k1_values * len(set(b)) + len(MUS))


def snakemake(workdir: Path, src: Path, args: list[str], log: Path) -> tuple[float, float, str]:
    """Snakemake with ``src``'s Snakefile and package; (wall seconds, peak RSS MB, output). The CPU
    seconds of the Snakemake process (user + system) are in the output's IRGRID_TIME line too."""
    env = {**os.environ, "PYTHONPATH": str(src / "src")}
    command = ["/usr/bin/time", "-f", "IRGRID_TIME %e %M %U %S", sys.executable, "-m", "snakemake",
               "--snakefile", str(src / "Snakefile"), "--directory", str(workdir),
               "--configfile", str(workdir / "config" / "config.yaml"), *args]
    result = subprocess.run(command, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write_text(result.stdout)
    match = re.search(r"IRGRID_TIME ([\d.]+) (\d+)", result.stdout)
    if result.returncode != 0 or match is None:
        raise SystemExit(f"snakemake {' '.join(args)} failed in {workdir} (log {log}):\n{result.stdout[-3000:]}")
    return float(match.group(1)), int(match.group(2)) / 1024, result.stdout


def job_total(output: str) -> int:
    found = re.findall(r"^total\s+(\d+)$", output, re.MULTILINE)
    return int(found[0]) if found else 0


def job_table(output: str) -> dict[str, int]:
    lines = output.splitlines()
    if "Job stats:" not in lines:
        return {}
    table = {}
    for line in lines[lines.index("Job stats:") + 3:]:
        name, _, count = line.partition(" ")
        if name == "total" or not count.strip():
            break
        table[name] = int(count)
    return table


def tree_bytes(root: Path, skip=()) -> int:
    return sum(path.stat().st_size for path in root.rglob("*")
               if path.is_file() and not any(part in skip for part in path.relative_to(root).parts))


def cpu_seconds(output: str) -> float:
    match = re.search(r"IRGRID_TIME [\d.]+ \d+ ([\d.]+) ([\d.]+)", output)
    return float(match.group(1)) + float(match.group(2))


def plan(label: str, workdir: Path, src: Path, repeats: int, extra: list[str], logs: Path) -> dict:
    times, cpu, memory, jobs = [], [], [], 0
    for repeat in range(repeats):
        seconds, mb, output = snakemake(workdir, src, ["-n", "--cores", "1", *extra], logs / f"{label}-{repeat}.log")
        times.append(seconds)
        cpu.append(cpu_seconds(output))
        memory.append(mb)
        jobs = job_total(output)
    return {"label": label, "seconds": statistics.median(times), "cpu_seconds": statistics.median(cpu),
            "max_rss_mb": statistics.median(memory), "jobs": jobs, "repeats": repeats}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=None, help="scratch directory (default: a new temporary one)")
    parser.add_argument("--before-src", type=Path, default=None,
                        help="another checkout (Snakefile, src/) planned on the same grids, for the ratio")
    parser.add_argument("--before-grids", nargs="+", default=["30k", "100k"],
                        help="the grids --before-src plans (the code before may need minutes and GB for 100k)")
    parser.add_argument("--skip-run", action="store_true", help="planning only")
    parser.add_argument("--skip-plan", action="store_true", help="the run, no-op and changed value only")
    parser.add_argument("--run-k1", type=int, default=100,
                        help="k1 values of the grid the full run runs (100: the 30k grid; fewer on a loaded machine)")
    parser.add_argument("--run-b", type=int, default=50,
                        help="b values of the grid the full run runs (50: the 30k grid; 167: the 100k grid)")
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--run-collections", nargs="+", default=["adi", "med"])
    parser.add_argument("--repeats", type=int, default=3, help="dry runs per measurement (median)")
    parser.add_argument("--mirror", default=os.environ.get("IRGRID_MIRROR"))
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    root = args.workdir or Path(tempfile.mkdtemp(prefix="irgrid-big-grid-"))
    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    figures: dict = {"plans": []}
    grids = {"30k": (100, 50), "100k": (100, 167)}
    if args.skip_plan:
        grids = {}
    if not args.skip_run:
        grids["run"] = (args.run_k1, args.run_b)
    workdirs = {}
    for name, (k1_values, b_values) in grids.items():
        workdirs[name] = root / name
        if workdirs[name].exists():
            shutil.rmtree(workdirs[name])
        workdirs[name].mkdir(parents=True)
        cells = write_workdir(workdirs[name], k1_values, b_values, args.mirror)
        figures[f"cells_{name}"] = cells
    load = os.getloadavg()
    print(f"load average at the start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} ({os.cpu_count()} cores)")
    print(f"{'plan (snakemake -n)':<38} {'cells':>8} {'jobs':>6} {'wall s':>8} {'CPU s':>7} {'MB':>7}")
    for name, workdir in workdirs.items():
        if name == "run":
            continue
        rows = [plan(f"after-{name}", workdir, REPO, args.repeats, [], logs)]
        if args.before_src and name in args.before_grids:
            before = root / f"{name}-before"  # the same grid, the other checkout's config/
            shutil.rmtree(before, ignore_errors=True)
            before.mkdir(parents=True)
            write_workdir(before, *grids[name], args.mirror, repo=args.before_src)
            rows.append(plan(f"before-{name}", before, args.before_src, 1, [], logs))
        for row in rows:
            row["cells"] = figures[f"cells_{name}"]
            figures["plans"].append(row)
            print(f"{row['label'] + ' (median of ' + str(row['repeats']) + ')':<38} {row['cells']:>8,} {row['jobs']:>6,} "
                  f"{row['seconds']:>8.1f} {row['cpu_seconds']:>7.1f} {row['max_rss_mb']:>7.0f}", flush=True)
        if len(rows) == 2:
            print(f"{'  before / after':<38} {'':>8} {'':>6} {rows[1]['seconds'] / rows[0]['seconds']:>7.1f}x "
                  f"{rows[1]['cpu_seconds'] / rows[0]['cpu_seconds']:>6.1f}x "
                  f"{rows[1]['max_rss_mb'] / rows[0]['max_rss_mb']:>6.1f}x", flush=True)
    if not args.skip_run:
        workdir = workdirs["run"]
        subset = [f"collections_only=[{','.join(args.run_collections)}]"]
        run_cells = len(args.run_collections) * (figures["cells_run"] // len(COLLECTIONS))
        started = time.perf_counter()
        seconds, mb, output = snakemake(workdir, REPO, ["--profile", str(REPO / "config/profiles/local"),
                                                         "--cores", str(args.cores), "--config", *subset],
                                        logs / "full-run.log")
        jobs = job_table(output)
        results = workdir / "results"
        total = tree_bytes(results)
        grid_bytes = tree_bytes(results, skip={"index", "docs", "benchmarks"})
        figures["run"] = {"collections": args.run_collections, "cells": run_cells, "seconds": seconds,
                          "max_rss_mb": mb, "jobs": jobs, "results_bytes": total, "grid_bytes": grid_bytes,
                          "wall": time.perf_counter() - started}
        print(f"\nfull run of the grid of {args.run_k1} k1 x {args.run_b} b + {len(MUS)} mu on "
              f"{', '.join(args.run_collections)} "
              f"({run_cells:,} cells), "
              f"--cores {args.cores}: {seconds:.0f} s, Snakemake peak {mb:.0f} MB, jobs {json.dumps(jobs)}", flush=True)
        print(f"results/: {total / 1e6:.1f} MB; less indexes, shards, benchmarks: {grid_bytes / 1e6:.2f} MB "
              f"= {grid_bytes / run_cells:.0f} bytes a cell (x {figures['cells_run']:,} cells = "
              f"{grid_bytes / run_cells * figures['cells_run'] / 1e6:.0f} MB)",
              flush=True)
        noop = plan("no-op", workdir, REPO, args.repeats, ["--config", *subset], logs)
        figures["noop"] = noop
        print(f"no-op snakemake -n after it: {noop['seconds']:.1f} s wall, {noop['cpu_seconds']:.1f} CPU s, "
              f"{noop['max_rss_mb']:.0f} MB, {noop['jobs']} jobs", flush=True)
        experiment = workdir / "config" / "experiments" / f"{EXPERIMENT}.yaml"
        text = experiment.read_text()
        changed = re.sub(r"(?m)^(\s+- )0\.5$", r"\g<1>0.505", text, count=1)
        assert changed != text, "no b value 0.5 to change"
        experiment.write_text(changed)
        seconds_n, mb_n, dry = snakemake(workdir, REPO, ["-n", "--cores", "1", "--config", *subset],
                                         logs / "changed-dry.log")
        seconds_r, mb_r, _ = snakemake(workdir, REPO, ["--profile", str(REPO / "config/profiles/local"),
                                                        "--cores", str(args.cores), "--config", *subset],
                                       logs / "changed-run.log")
        figures["changed"] = {"jobs": job_table(dry), "plan_seconds": seconds_n, "run_seconds": seconds_r}
        print(f"one b value changed (0.5 -> 0.505): dry run {seconds_n:.1f} s lists {json.dumps(job_table(dry))}; "
              f"rerun {seconds_r:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    print(f"\nscratch directory: {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
