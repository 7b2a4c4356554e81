"""Where a workflow run's job time went: Snakemake's benchmark files summed by stage.

    python benchmarks/run_stages.py [results/benchmarks] [--slowest 20]

Every rule writes ``results/benchmarks/<its log path>.tsv`` (Snakemake's ``benchmark:``: wall
seconds ``s`` and ``cpu_time``, among others). The stage of a file is the directory after the
collection (``runs``, ``eval``, ``index``, ``phrases``, ``topics``; ``docs`` and ``qrels`` are
files there) or the top directory for the cross-collection steps (``tables``, ``figures``,
``axioms``, ``report``). Prints jobs, wall and CPU seconds per stage and the slowest jobs. The sum
of wall times is job time, not the run's wall time: jobs run side by side, and Snakemake's own
work between them is not in any file.
"""

from __future__ import annotations

import argparse
import csv
from collections import Counter
from pathlib import Path

CROSS_COLLECTION = {"tables", "figures", "axioms"}


def stage_of(relative: Path) -> str:
    parts = relative.parts
    if parts[0] in CROSS_COLLECTION:
        return parts[0]
    if len(parts) == 1:  # report.tsv
        return relative.stem
    return parts[1] if len(parts) > 2 else Path(parts[1]).stem


def read_benchmark(path: Path) -> tuple[float, float]:
    """(wall s, CPU s) of a benchmark file; CPU 0 where Snakemake wrote none."""
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows:
        raise SystemExit(f"{path}: no benchmark row (expected Snakemake's header and one row)")
    row = rows[-1]
    cpu = row.get("cpu_time") or "0"
    return float(row["s"]), float(cpu if cpu != "NA" else 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default="results/benchmarks", type=Path)
    parser.add_argument("--slowest", type=int, default=20, help="how many of the slowest jobs to list")
    args = parser.parse_args()
    files = sorted(args.directory.rglob("*.tsv"))
    if not files:
        raise SystemExit(f"{args.directory}: no benchmark files (run the workflow first)")
    wall, cpu, jobs = Counter(), Counter(), Counter()
    timed = []
    for path in files:
        relative = path.relative_to(args.directory)
        seconds, cpu_seconds = read_benchmark(path)
        stage = stage_of(relative)
        wall[stage] += seconds
        cpu[stage] += cpu_seconds
        jobs[stage] += 1
        timed.append((seconds, cpu_seconds, str(relative)))
    print(f"{'stage':<10} {'jobs':>5} {'wall s':>9} {'CPU s':>9}")
    for stage, seconds in wall.most_common():
        print(f"{stage:<10} {jobs[stage]:>5} {seconds:>9.1f} {cpu[stage]:>9.1f}")
    print(f"{'all':<10} {sum(jobs.values()):>5} {sum(wall.values()):>9.1f} {sum(cpu.values()):>9.1f}")
    print(f"\nslowest {args.slowest} jobs (wall s, CPU s):")
    for seconds, cpu_seconds, name in sorted(timed, reverse=True)[: args.slowest]:
        print(f"{seconds:>8.1f} {cpu_seconds:>8.1f}  {name}")


if __name__ == "__main__":
    main()
