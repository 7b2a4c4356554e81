"""What irgrid.jobs.scheduler_timers buys: Snakemake's own CPU on many short jobs, patched and not.

    python benchmarks/scheduler_timers.py [--jobs 200] [--seconds 0.2] [--cores 2] [--repeats 2]
                                          [--json benchmarks/results/scheduler-timers.json]

A scratch workflow of ``--jobs`` independent jobs (each ``sleep --seconds``, nothing else) and one
target needing them all, run by ``snakemake --cores N --scheduler greedy`` (as the local profile),
with the patch applied by the Snakefile or not, interleaved. Per run: wall seconds and the CPU
seconds of the Snakemake process and everything it waited for (``RUSAGE_CHILDREN``); the jobs
themselves (``sleep`` in a shell) cost the same in both variants, so the difference is the
scheduler's. Prints medians and the ratio unpatched / patched.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SNAKEFILE = """
import os
if os.environ.get("IRGRID_BENCH_PATCH") == "1":
    from irgrid.jobs.scheduler_timers import coalesce_reevaluation_timers
    assert coalesce_reevaluation_timers()

N = {jobs}

rule all:
    input: expand("out/{{i}}.txt", i=range(N))
    output: "all.txt"
    shell: "cat {{input}} > {{output}}"

rule one:
    output: "out/{{i}}.txt"
    params: seconds={seconds}
    shell: "sleep {{params.seconds}}; echo {{wildcards.i}} > {{output}}"
"""


def run_once(workdir: Path, patched: bool, cores: int) -> dict:
    for path in (workdir / "out", workdir / "all.txt", workdir / ".snakemake"):
        subprocess.run(["rm", "-rf", str(path)], check=True)
    env = dict(os.environ, IRGRID_BENCH_PATCH="1" if patched else "0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", str(cores), "--scheduler", "greedy", "--quiet", "all"],
        cwd=workdir, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    return {"patched": patched, "wall_s": round(wall, 2), "user_s": round(user, 2), "sys_s": round(system, 2),
            "cpu_s": round(user + system, 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=0.2)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None, help="write the runs and medians here")
    args = parser.parse_args(argv)

    runs = []
    with tempfile.TemporaryDirectory(prefix="scheduler-timers-") as scratch:
        workdir = Path(scratch)
        (workdir / "Snakefile").write_text(SNAKEFILE.format(jobs=args.jobs, seconds=args.seconds))
        for repeat in range(args.repeats):
            for patched in (False, True) if repeat % 2 == 0 else (True, False):
                runs.append(run_once(workdir, patched, args.cores))
                print(json.dumps(runs[-1]), flush=True)

    medians = {}
    for patched in (False, True):
        mine = [run for run in runs if run["patched"] == patched]
        medians["patched" if patched else "unpatched"] = {
            key: round(statistics.median(run[key] for run in mine), 2) for key in ("wall_s", "cpu_s")
        }
    ratio = {key: round(medians["unpatched"][key] / medians["patched"][key], 2) for key in ("wall_s", "cpu_s")}
    print(f"{args.jobs} jobs of {args.seconds} s on {args.cores} cores, median of {args.repeats}:")
    for name, figures in medians.items():
        print(f"  {name:10} wall {figures['wall_s']:7.2f} s   CPU {figures['cpu_s']:7.2f} s")
    print(f"  unpatched / patched: wall {ratio['wall_s']}x, CPU {ratio['cpu_s']}x")
    if args.json:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        args.json.write_text(json.dumps({
            "benchmark": "scheduler_timers", "commit": commit, "date": time.strftime("%Y-%m-%d"),
            "load_1min": round(os.getloadavg()[0], 1), "jobs": args.jobs, "job_seconds": args.seconds,
            "cores": args.cores, "runs": runs, "medians": medians, "ratio_unpatched_over_patched": ratio,
        }, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
