"""The constraint experiment's ``violation_table`` job of a finished workflow run: peak RSS and CPU seconds of
``irgrid violation-table`` with each checkout's package, each repeat a fresh process, and its outputs compared.

    python benchmarks/violation_table_memory.py WORKDIR --src before=/other/src --src after=src \\
        [--experiment constraints] [--repeats 3] [--out /tmp/violation-table]

WORKDIR is a workflow directory whose ``results/`` holds the experiment's per-document violation counts and
chunk evaluations (``snakemake results/tables/constraints/violations.csv`` there). The job's shell command is
the one ``snakemake --dry-run --printshellcmds --forcerun violation_table`` prints there, its table and figure
directories moved under ``--out``/<src name>-<repeat>. The checkouts run interleaved (before, after, before,
...), each with its ``src`` on ``PYTHONPATH``; the process ``exec``s the command, so ``wait4`` gives the job's
own peak RSS (``ru_maxrss``) and CPU seconds (user + system). Every output is compared (cmp) with the first
checkout's first repeat. Prints each run, then the medians, and the load averages before and after.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
from pathlib import Path

OUTPUTS = {"tables": ["violations.csv", "violations.html", "violations.md", "violations.tex", "violations_claims.csv"],
           "figures": ["violations_vs_measure.png", "violations_vs_measure.svg"]}


def job_command(workdir: Path, experiment: str) -> str:
    """The violation_table job's shell command as Snakemake prints it (with its here-document of cells)."""
    target = f"results/tables/{experiment}/violations.csv"
    printed = subprocess.run(["snakemake", "--profile", "config/profiles/local", "--dry-run", "--printshellcmds",
                              "--forcerun", "violation_table", target], cwd=workdir, capture_output=True, text=True,
                             check=True).stdout.split("\n")
    start = next(i for i, line in enumerate(printed) if line.startswith("Shell command: irgrid violation-table"))
    end = printed.index("IRGRID_CELLS", start)
    command = "\n".join([printed[start].removeprefix("Shell command: "), *printed[start + 1:end + 1]])
    return command.replace(f" 2> logs/tables/{experiment}/violations.log", "")


def run_once(command: str, workdir: Path, src: Path, out: Path, experiment: str) -> dict:
    for directory in ("tables", "figures"):
        (out / directory).mkdir(parents=True, exist_ok=True)
    command = (command.replace(f"--table-dir results/tables/{experiment}", f"--table-dir {out / 'tables'}")
               .replace(f"--figure-dir results/figures/{experiment}", f"--figure-dir {out / 'figures'}"))
    env = dict(os.environ, PYTHONPATH=str(src))
    script = out / "job.sh"  # a file: the cells outgrow one command-line argument
    script.write_text("exec " + command + "\n")
    with open(out / "stderr.log", "w") as stderr:
        process = subprocess.Popen(["bash", str(script)], cwd=workdir, env=env, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the job failed ({out / 'stderr.log'})")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "max_rss_mib": usage.ru_maxrss / 1024}


def differing(out: Path, reference: Path) -> list[str]:
    return [f"{directory}/{name}" for directory, names in OUTPUTS.items() for name in names
            if not filecmp.cmp(out / directory / name, reference / directory / name, shallow=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--src", action="append", required=True, help="NAME=PATH of a checkout's src directory")
    parser.add_argument("--experiment", default="constraints")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/violation-table"))
    args = parser.parse_args()
    sources = [(name, Path(path).resolve()) for name, path in (entry.split("=", 1) for entry in args.src)]
    workdir = args.workdir.resolve()
    command = job_command(workdir, args.experiment)
    print(f"load before: {os.getloadavg()}")
    runs: dict[str, list[dict]] = {name: [] for name, _ in sources}
    reference = None
    for repeat in range(args.repeats):
        for name, src in sources:
            out = args.out.resolve() / f"{name}-{repeat}"
            result = run_once(command, workdir, src, out, args.experiment)
            reference = reference or out
            result["differ"] = differing(out, reference)
            runs[name].append(result)
            print(f"{name} repeat {repeat}: {result['cpu_s']:.2f} CPU s, max RSS {result['max_rss_mib']:,.0f} MiB, "
                  f"outputs differing from {reference.name}: {result['differ'] or 'none'} (load {os.getloadavg()})")
            sys.stdout.flush()
    print(f"load after: {os.getloadavg()}")
    for name, results in runs.items():
        print(f"{name}: median of {len(results)}: {statistics.median(r['cpu_s'] for r in results):.2f} CPU s, "
              f"max RSS {statistics.median(r['max_rss_mib'] for r in results):,.0f} MiB "
              f"[{min(r['max_rss_mib'] for r in results):,.0f}-{max(r['max_rss_mib'] for r in results):,.0f}]")


if __name__ == "__main__":
    main()
