"""What a large grid costs through Snakemake: jobs, scoring and evaluation, and everything else.

    python benchmarks/snakemake_grid.py [--chunk-size 50] [--k1-values 50] [--cores 2]
                                        [--workdir DIR] [--keep] [--mirror DIR]

Runs the workflow on ``config/experiments/scale_cranfield.yaml`` (BM25, 50 k1 x 40 b = 2,000 cells
on Cranfield) in a scratch directory (``--directory``, as the tests do; results/ is not touched):

1. untimed: the document shards, index, topics and qrels the grid needs;
2. timed: every cell's run and evaluation (the chunks' evaluation files are the targets; no
   table), ``snakemake --cores N``.

Then it prints the number of cells and jobs, the wall time of step 2, and where the core-seconds
went (``cores x wall``):

- chunk jobs: the time each ``irgrid chunk`` command logs (irgrid.cli.retrieval: from the start of the command;
  imports, then retrieval and evaluation), summed over the jobs' logs;
- process start-up: jobs x the time a bare ``irgrid --help`` takes (Python and the CLI module,
  measured here: median of 5), an estimate of what each job pays before its command starts;
- remainder: cores x wall minus all of the above = Snakemake (building the DAG, scheduling,
  spawning jobs, bookkeeping) and cores left idle.

``--chunk-size 1`` gives one job per cell, the behaviour before chunks;
with ``--k1-values 5`` (200 cells) that is a few minutes, and the per-cell figures extrapolate.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from irgrid.config import all_cells, load_config, retrieval_chunks

REPO = Path(__file__).resolve().parents[1]
EXPERIMENT = "scale_cranfield"
EXPERIMENT_FILE = f"config/experiments/{EXPERIMENT}.yaml"

CHUNK_LOG = re.compile(r"scored and evaluated (\d+) cells in ([\d.]+)s \(imports ([\d.]+)s, retrieval and evaluation ([\d.]+)s\)")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunk-size", type=int, default=None, help="retrieval.chunk_size (default: config/config.yaml's)")
    parser.add_argument("--k1-values", type=int, default=None, help="keep the first N k1 values of the grid (N x 40 cells)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=None, help="scratch directory (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--mirror", default=None, help="collections mirror (default: $IRGRID_MIRROR, ../shared/collections)")
    return parser.parse_args(argv)


def write_workdir(workdir: Path, args) -> dict:
    """The repo's config/ in ``workdir``, with the scale experiment as the only experiment."""
    shutil.copytree(REPO / "config", workdir / "config")
    config_path = workdir / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["experiments"] = {EXPERIMENT: EXPERIMENT_FILE}
    if args.chunk_size is not None:
        config.setdefault("retrieval", {})["chunk_size"] = args.chunk_size
    if args.mirror:
        config["mirror"] = args.mirror
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    if args.k1_values is not None:
        experiment_path = workdir / EXPERIMENT_FILE
        experiment = yaml.safe_load(experiment_path.read_text(encoding="utf-8"))
        grid = experiment["models"]["bm25"]["grid"]
        grid["k1"] = grid["k1"][: args.k1_values]
        experiment_path.write_text(yaml.safe_dump(experiment, sort_keys=False), encoding="utf-8")
    return config


def snakemake(workdir: Path, cores: int, targets: list[str], log_path: Path) -> float:
    """Run Snakemake on the repo's Snakefile in ``workdir``; its output goes to ``log_path``. Returns the wall time."""
    command = [
        sys.executable, "-m", "snakemake",
        "--snakefile", str(REPO / "Snakefile"),
        "--directory", str(workdir),
        "--configfile", str(workdir / "config" / "config.yaml"),
        "--cores", str(cores),
        *targets,
    ]
    started = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        result = subprocess.run(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"snakemake exited {result.returncode}; its output: {log_path}")
    return elapsed


def job_counts(log_text: str) -> dict[str, int]:
    """Jobs per step from Snakemake's first "Job stats:" table (chunk rules are named step.collection...)."""
    lines = log_text.splitlines()
    start = lines.index("Job stats:")
    counts: dict[str, int] = {}
    for line in lines[start + 3:]:
        name, count = line.split()
        if name == "total":
            return counts
        step = name.split(".")[0]
        counts[step] = counts.get(step, 0) + int(count)
    raise ValueError("unterminated Job stats table")


def command_times(log_dir: Path, pattern: re.Pattern) -> list[tuple[float, ...]]:
    """The timing line of every job log under ``log_dir`` (one per job), as floats."""
    times = []
    for path in sorted(log_dir.rglob("*.log")):
        found = pattern.findall(path.read_text(encoding="utf-8"))
        if not found:
            raise SystemExit(f"{path}: no timing line matching {pattern.pattern!r}")
        times.append(tuple(float(value) for value in found[-1]))
    return times


def startup_seconds() -> float:
    """Median wall time of ``irgrid --help``: Python, the irgrid CLI module, argparse."""
    irgrid = Path(sys.executable).parent / "irgrid"
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([str(irgrid), "--help"], stdout=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main(argv=None) -> int:
    args = parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="irgrid-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        raw = write_workdir(workdir, args)
        # Relative paths of the config resolve inside the scratch directory, as Snakemake's do.
        raw["registry"] = str(workdir / raw["registry"])
        raw["experiments"] = {EXPERIMENT: str(workdir / EXPERIMENT_FILE)}
        config = load_config(raw)
        cells = all_cells(config)
        chunks = retrieval_chunks(config)
        collection, analyzer, queryset = cells[0].collection, cells[0].analyzer, cells[0].queryset

        prepare = [f"results/{collection}/index/{analyzer}", f"results/{collection}/topics/{queryset}.parquet",
                   f"results/{collection}/qrels.parquet"]
        prepared = snakemake(workdir, args.cores, prepare, workdir / "snakemake-prepare.log")
        wall = snakemake(workdir, args.cores, [chunk.evaluation_path for chunk in chunks], workdir / "snakemake-grid.log")
        jobs = job_counts((workdir / "snakemake-grid.log").read_text(encoding="utf-8"))

        logs = workdir / "logs" / collection
        chunk_times = command_times(logs / "eval", CHUNK_LOG)
        startup = startup_seconds()

        evaluated_cells = sum(int(t[0]) for t in chunk_times)
        if evaluated_cells != len(cells):
            raise SystemExit(f"the logs account for {evaluated_cells} cells, not {len(cells)}")
        imports, work = sum(t[2] for t in chunk_times), sum(t[3] for t in chunk_times)
        total_jobs = sum(jobs.values())
        core_seconds = args.cores * wall
        started_up = total_jobs * startup
        remainder = core_seconds - imports - work - started_up
        overhead = core_seconds - work

        chunk_size = config["retrieval"]["chunk_size"]
        print(f"grid: {EXPERIMENT} ({collection}, {analyzer}, {queryset}), retrieval.chunk_size {chunk_size}, "
              f"snakemake --cores {args.cores}, in {workdir}")
        print(f"cells:               {len(cells)}")
        print(f"chunks:              {len(chunks)} (points per chunk: min {min(len(c.params) for c in chunks)}, "
              f"mean {len(cells) / len(chunks):.1f}, max {max(len(c.params) for c in chunks)})")
        print(f"jobs:                {total_jobs} ({', '.join(f'{n} {step}' for step, n in jobs.items())})")
        print(f"preparation:         {prepared:.1f} s wall (shards, index, topics, qrels; not counted below)")
        print(f"wall time:           {wall:.1f} s = {core_seconds:.1f} core-seconds on {args.cores} cores")
        print(f"  chunk jobs:        {imports + work:8.1f} core-s in {len(chunk_times)} `irgrid chunk` commands: "
              f"imports {imports:.1f}, retrieval and evaluation {work:.1f}")
        print(f"  process start-up:  {started_up:8.1f} core-s estimated: {total_jobs} jobs x {startup:.2f} s "
              "(`irgrid --help`, median of 5)")
        print(f"  remainder:         {remainder:8.1f} core-s: Snakemake (DAG, scheduling, spawning jobs) and idle cores")
        print(f"scoring + evaluating {work:.1f} core-s vs everything else {overhead:.1f} core-s "
              f"(imports, start-up, remainder): {overhead / core_seconds:.0%} of the core-seconds")
        print(f"per cell:            {wall / len(cells) * 1000:.1f} ms wall, {work / len(cells) * 1000:.1f} ms of work, "
              f"{overhead / len(cells) * 1000:.1f} ms of the rest (core-ms)")
        if len(cells) < 2000:
            print(f"extrapolated to 2,000 cells (linear, per cell x 2,000): wall {wall / len(cells) * 2000:.0f} s, "
                  f"work {work / len(cells) * 2000:.0f} core-s, rest {overhead / len(cells) * 2000:.0f} core-s")
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
