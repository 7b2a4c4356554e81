"""What the tie scan adds to an evaluation: `irgrid evaluate` on a chunk of runs, with and without
``--no-tie-scan`` (irgrid.evaluation.ties.TiedRelevantScan: where ties touch a relevant document, and E[m] beside).

    python benchmarks/tie_scan.py --runs results/cacm/runs/porter/text/bm25/*.parquet \\
        --qrels results/cacm/qrels.parquet --topics results/cacm/topics/text.parquet \\
        --out benchmarks/results/tie-scan-cacm.txt

Both commands run as the rule runs them, each in a fresh process, interleaved ``--repeats`` times:
wall seconds, CPU seconds (user + system of the child: on a shared machine the wall time is partly
waiting), the seconds the command logs for evaluation and writing, peak RSS; medians [min-max] and the
ratio with / without the scan. Then what the scan wrote: rows added, queries with a tie touching a
relevant document, runs given E[m] rows. The measures are config/config.yaml's.
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


def config_measures() -> list[str]:
    import yaml

    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())["measures"]


def evaluate(runs: list[Path], qrels: Path, topics: Path, measures: list[str], out_dir: Path, scan: bool) -> dict:
    outs = [out_dir / f"{number}.parquet" for number in range(len(runs))]
    command = [sys.executable, "-m", "irgrid", "evaluate", "--run", *map(str, runs), "--qrels", str(qrels),
               "--topics", str(topics), "--measures", json.dumps(measures), "--out", *map(str, outs)]
    if not scan:
        command.append("--no-tie-scan")
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, text=True)
        _, status, usage = os.wait4(process.pid, 0)  # this process's own CPU and peak RSS
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        stderr.seek(0)
        log = stderr.read()
    if process.returncode:
        raise SystemExit(f"irgrid evaluate failed:\n{log}")
    logged = re.search(r"evaluation and writing ([0-9.]+)s", log)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "evaluation": float(logged.group(1)) if logged else float("nan"),
            "rss_mb": usage.ru_maxrss / 1024, "outs": outs}


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, nargs="+", required=True, help="the chunk's runs (irgrid Parquet)")
    parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--topics", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    import pandas as pd

    from irgrid.evaluation.ties import FIRST_TIED_RELEVANT, is_tie_measure

    measures = config_measures()
    timings: dict[bool, list[dict]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as work:
        for repeat in range(args.repeats):
            for scan in (True, False) if repeat % 2 == 0 else (False, True):
                out_dir = Path(work) / ("scan" if scan else "plain")
                out_dir.mkdir(exist_ok=True)
                timings[scan].append(evaluate(args.runs, args.qrels, args.topics, measures, out_dir, scan))
        with_scan = [pd.read_parquet(path) for path in timings[True][0]["outs"]]
        without = [pd.read_parquet(path) for path in timings[False][0]["outs"]]
    added = sum(len(a) - len(b) for a, b in zip(with_scan, without))
    tied = [int((frame["measure"] == FIRST_TIED_RELEVANT).sum()) for frame in with_scan]
    expected = sum(bool(frame["measure"].map(is_tie_measure).any()) for frame in with_scan)
    queries = without[0]["qid"].nunique()
    lines = [f"irgrid evaluate on {len(args.runs)} runs ({args.runs[0].parent}), {queries} judged queries, "
             f"measures {measures}; {args.repeats} repeats, interleaved; median [min-max]",
             f"{'':<22}{'with scan':>22}{'--no-tie-scan':>22}{'ratio':>8}"]
    for key, label, fmt in (("wall", "wall s", "{:.2f}"), ("cpu", "CPU s", "{:.2f}"),
                            ("evaluation", "logged evaluation s", "{:.2f}"), ("rss_mb", "peak RSS MB", "{:.0f}")):
        a, b = [t[key] for t in timings[True]], [t[key] for t in timings[False]]
        lines.append(f"{label:<22}{spread(a, fmt):>22}{spread(b, fmt):>22}"
                     f"{statistics.median(a) / statistics.median(b):>8.2f}")
    lines.append(f"rows added: {added} over {sum(len(b) for b in without)}; queries with a tie touching a "
                 f"relevant document per run: {min(tied)}-{max(tied)} of {queries}; runs given E[m] rows: "
                 f"{expected} of {len(with_scan)}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
