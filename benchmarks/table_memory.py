"""What a table, figure or findings job holds: peak RSS and CPU seconds of the real entry points
(``irgrid table``, ``figures``, ``findings``) over a grid's chunk evaluation files, each in a fresh process.

    python benchmarks/table_memory.py generate DIR [--k1 100 --b 167 --mu 4] [--chunk-size 400]
    python benchmarks/table_memory.py measure DIR --src before=/other/src --src after=src \\
        [--jobs table table_cv figures findings] [--collections adi med] [--repeats 3] [--cap-gib 12]
    python benchmarks/table_memory.py compare DIR [--collections adi med]
    python benchmarks/table_memory.py load RUN_DIR        # load_cells over a finished run's chunk files

``generate`` writes a synthetic grid (irgrid.tables.synthetic: BM25 over k1 x b points and query likelihood
over mu points on six collections of 50 to 225 queries, ten measures and tie rows, chunks of
``--chunk-size`` cells in the workflow's layout) and its cells (``DIR/cells.json``, shuffled with a fixed
seed as an experiment orders its cells). ``measure`` runs each job with each ``--src`` checkout's package
(``PYTHONPATH``) in a fresh process, ``--repeats`` times, and prints the median CPU seconds (user +
system) and peak RSS (``ru_maxrss``) of each; a process whose resident memory passes ``--cap-gib`` is
killed (the machine has 24 GiB, shared) and reported as such. ``--collections``: only those collections'
cells. ``compare`` checks, in one process, that every row and the cells' aggregates give equal frames
(summaries, chosen points, findings, curves). ``load`` is the earlier measurement:
``irgrid.tables.load_cells`` over every cell of a finished run directory (``benchmarks/big_grid.py
--workdir DIR`` leaves one in ``DIR/run``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = {"cranfield": 225, "cacm": 64, "cisi": 112, "med": 50, "npl": 93, "adi": 50}
SPEC = {"experiment": "memory", "models": ["ql", "bm25"], "baseline": "ql", "measures": ["AP", "P@10"],
        "select_by": "AP"}
CLAIMS = [{"better": "bm25", "than": "ql", "measure": "AP"}, {"better": "bm25", "than": "ql", "measure": "P@10"}]


def generate(args) -> None:
    # deferred: the driver (measure) runs without importing the package it measures
    from irgrid.tables.synthetic import bm25_ql_grid, write_synthetic_grid

    started = time.process_time()
    cells = write_synthetic_grid(args.dir, QUERIES, bm25_ql_grid(args.k1, args.b, args.mu), chunk_size=args.chunk_size)
    cells = cells.sample(frac=1.0, random_state=1).reset_index(drop=True)
    (args.dir / "cells.json").write_text(cells.to_json(orient="records"))
    files = list((args.dir / "results").rglob("chunk-*.parquet"))
    print(f"{len(cells):,} cells in {len(files):,} files, {sum(f.stat().st_size for f in files) / 2**20:,.0f} MiB; "
          f"{time.process_time() - started:.0f} CPU s")


def job_argv(job: str, work: Path) -> list[str]:
    spec = dict(SPEC, selection="cv" if job in ("table_cv", "findings") else "best")
    if job in ("table", "table_cv"):
        return ["table", "--spec", json.dumps(spec), "--cells", "-", "--out-dir", str(work), "--stem", job]
    if job == "figures":
        return ["figures", "--spec", json.dumps(spec), "--cells", "-", "--out-dir", str(work)]
    if job == "findings":
        return ["findings", "--spec", json.dumps(SPEC), "--claims", json.dumps(CLAIMS), "--verdict-selection", "cv",
                "--cells", "-", "--table-dir", str(work), "--figure-dir", str(work)]
    raise ValueError(f"unknown job {job!r}")


def child(args) -> None:
    """One job in this process: the CLI's entry point, the cells on standard input; prints a JSON line."""
    import io

    # deferred: the package of the checkout on PYTHONPATH, in the measured process only
    import irgrid
    from irgrid import cli

    cells = json.loads(Path(args.cells).read_text())
    if args.collections:
        cells = [cell for cell in cells if cell["collection"] in args.collections]
    sys.stdin = io.StringIO(json.dumps(cells))
    args.work.mkdir(parents=True, exist_ok=True)
    started, wall = time.process_time(), time.perf_counter()
    code = cli.main(job_argv(args.job, args.work))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"code": code, "package": irgrid.__file__, "cells": len(cells),
                      "cpu": time.process_time() - started, "wall": time.perf_counter() - wall,
                      "peak_mib": usage.ru_maxrss / 1024}))


def run_capped(argv: list[str], env: dict, cap_gib: float) -> tuple[dict | None, float]:
    """Run ``argv``; kill it when its resident memory passes ``cap_gib``. (result or None, highest RSS seen)."""
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    highest = 0.0
    while process.poll() is None:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
            rss = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) / 1024
        except (OSError, StopIteration):
            rss = 0.0
        highest = max(highest, rss)
        if rss > cap_gib * 1024:
            process.kill()
            process.wait()
            return None, highest
        time.sleep(0.1)
    out = process.stdout.read()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    return (json.loads(lines[-1]) if process.returncode == 0 and lines else None), highest


def measure(args) -> None:
    sources = dict(source.split("=", 1) for source in args.src)
    print(f"load: {os.getloadavg()}")
    for job in args.jobs:
        for name, src in sources.items():
            results, killed = [], []
            for _ in range(args.repeats):
                env = dict(os.environ, PYTHONPATH=str(Path(src).resolve()))
                argv = [sys.executable, __file__, "child", str(args.dir / "cells.json"), job,
                        str(args.dir / "out" / name / job)] + (["--collections", *args.collections]
                                                              if args.collections else [])
                result, highest = run_capped(argv, env, args.cap_gib)
                if result is None:
                    killed.append(highest)
                    break  # a killed job would be killed again
                results.append(result)
            if killed:
                print(f"{job} {name}: killed at {killed[0]:,.0f} MiB resident (cap {args.cap_gib} GiB)")
                continue
            cpu = statistics.median(r["cpu"] for r in results)
            peak = statistics.median(r["peak_mib"] for r in results)
            print(f"{job} {name} ({results[0]['package']}): {results[0]['cells']:,} cells; median of {len(results)}: "
                  f"{cpu:.1f} CPU s, peak RSS {peak:,.0f} MiB (runs: "
                  + ", ".join(f"{r['cpu']:.1f} s/{r['peak_mib']:,.0f} MiB" for r in results) + ")", flush=True)
    print(f"load: {os.getloadavg()}")


def compare(args) -> None:
    """The frames and summaries from every row (load_cells) and from cells' aggregates, compared with
    DataFrame.equals (or ==) on the grid's cells of ``--collections``."""
    # deferred: the package of the checkout on PYTHONPATH, in the measured process only
    import pandas as pd

    from irgrid.report.claims import Claim
    from irgrid.report.findings import evaluate_claims
    from irgrid.tables import TableSpec, chosen_means, chosen_points, grid_positions, load_cells, read_cell_aggregates, summarise
    from irgrid.tables.figures import sensitivity_curves

    cells = pd.DataFrame(json.loads((args.dir / "cells.json").read_text()))
    cells = cells[cells["collection"].isin(args.collections)].reset_index(drop=True)
    frame = load_cells(cells)
    aggregates = read_cell_aggregates(cells, SPEC["select_by"], selection_values=True)
    print(f"{len(cells):,} cells, {len(frame):,} rows")
    claims = [Claim.from_dict(claim) for claim in CLAIMS]
    rows = list(dict.fromkeys(zip(cells["collection"], cells["queryset"])))
    for selection in ("best", "cv"):
        spec = TableSpec(**SPEC, selection=selection)
        same = summarise(frame, spec).equals(summarise(aggregates, spec))
        means = chosen_means(frame, spec, "P@10").equals(chosen_means(aggregates, spec, "P@10"))
        positions = grid_positions(frame, spec) == grid_positions(aggregates, spec)
        expected, found = chosen_points(frame, spec), chosen_points(aggregates, spec)
        values = all(expected[row][model][0] == found[row][model][0] and expected[row][model][1].reset_index(
            drop=True).equals(found[row][model][1].reset_index(drop=True)) for row in expected for model in expected[row])
        findings = evaluate_claims(frame, spec, claims, rows).equals(evaluate_claims(aggregates, spec, claims, rows))
        print(f"{selection}: summarise equal {same}; chosen_means equal {means}; grid_positions equal {positions}; "
              f"chosen points and values equal {values}; findings equal {findings}")
    print(f"sensitivity_curves equal {sensitivity_curves(frame, 'AP').equals(sensitivity_curves(aggregates, 'AP'))}")


def load(args) -> None:
    # deferred: the package of the checkout on PYTHONPATH, in the measured process only
    import pandas as pd
    import pyarrow.parquet as pq

    import irgrid
    from irgrid.tables import load_cells

    rows = []
    for path in sorted(glob.glob(str(args.run_dir / "results" / "*" / "eval" / "*" / "*" / "chunk-*.parquet"))):
        parts = Path(path).relative_to(args.run_dir / "results").parts  # collection, eval, analyzer, queryset, file
        table = pq.read_table(path, columns=["model", "params"])
        cells = dict.fromkeys(zip(table.column("model").to_pylist(), table.column("params").to_pylist()))
        rows += [(parts[0], parts[3], model, params, path) for model, params in cells]
    cells = pd.DataFrame(rows, columns=["collection", "queryset", "model", "params", "path"])
    cells = cells.sample(frac=1.0, random_state=1).reset_index(drop=True)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.process_time()
    evaluations = load_cells(cells)
    print(f"{irgrid.__file__}: {len(cells):,} cells, {len(evaluations):,} rows; load_cells "
          f"{time.process_time() - started:.1f} CPU s; peak RSS {before:,.0f} MiB before, "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("generate")
    p.add_argument("dir", type=Path)
    p.add_argument("--k1", type=int, default=100)
    p.add_argument("--b", type=int, default=167)
    p.add_argument("--mu", type=int, default=4)
    p.add_argument("--chunk-size", type=int, default=400)
    p = commands.add_parser("measure")
    p.add_argument("dir", type=Path)
    p.add_argument("--src", action="append", required=True, help="NAME=path to a checkout's src")
    p.add_argument("--jobs", nargs="+", default=["table", "table_cv", "figures", "findings"])
    p.add_argument("--collections", nargs="+")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cap-gib", type=float, default=12.0)
    p = commands.add_parser("child")
    p.add_argument("cells")
    p.add_argument("job")
    p.add_argument("work", type=Path)
    p.add_argument("--collections", nargs="+")
    p = commands.add_parser("compare")
    p.add_argument("dir", type=Path)
    p.add_argument("--collections", nargs="+", default=["adi", "med"])
    p = commands.add_parser("load")
    p.add_argument("run_dir", type=Path)
    args = parser.parse_args()
    {"generate": generate, "measure": measure, "child": child, "compare": compare, "load": load}[args.command](args)


if __name__ == "__main__":
    main()
