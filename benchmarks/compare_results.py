"""Do two workflow results trees hold the same values?  (A change that must keep every value.)

    python benchmarks/compare_results.py RESULTS_BEFORE RESULTS_AFTER [--only-common]

Every file that holds values is compared, whatever made it:

- Parquet (runs, evaluations, topics, qrels, shards, indexes, violations): the same rows and
  columns, value for value (``pyarrow.Table.equals``), with the schema metadata left out, as it
  records what made a file (a run's provenance, pandas' column notes), not values; whether the
  bytes are the same too is counted separately;
- text (tables' .csv/.md/.tex, phrase weights .tsv, findings, per-query tables, stats.json):
  the same bytes.

Not compared: results/benchmarks/ (times), figures (.svg/.png: values are drawn, and the files
carry a date), report.html and the tables' .html (they show times and digests; their values are
those of the .csv/.md).  ``--only-common`` compares the files both trees have (a partial run) and
lists none as missing.  Prints a line per kind and each file that differs; exits 1 if any does.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

SKIPPED_SUFFIXES = {".svg", ".png", ".html", ".log"}
TEXT_SUFFIXES = {".csv", ".md", ".tex", ".tsv", ".json", ".txt", ".trec"}


def value_files(root: Path) -> set[str]:
    files = set()
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if not path.is_file() or relative.parts[0] == "benchmarks" or path.suffix in SKIPPED_SUFFIXES:
            continue
        if path.name.startswith(".") or path.name.endswith(".tmp"):
            continue  # a killed job's temporary, or Snakemake's markers
        files.add(str(relative))
    return files


def same_parquet(a: Path, b: Path) -> bool:
    import pyarrow.parquet as pq

    with pq.ParquetFile(a) as left, pq.ParquetFile(b) as right:
        return left.read().replace_schema_metadata(None).equals(right.read().replace_schema_metadata(None))


def compare(before: Path, after: Path, only_common: bool) -> int:
    left, right = value_files(before), value_files(after)
    common = sorted(left & right)
    counts: Counter[str] = Counter()
    problems = []
    if not only_common:
        problems += [f"only in {before}: {name}" for name in sorted(left - right)]
        problems += [f"only in {after}: {name}" for name in sorted(right - left)]
    for name in common:
        a, b = before / name, after / name
        suffix = a.suffix
        same_bytes = a.read_bytes() == b.read_bytes()
        if suffix == ".parquet":
            kind = "parquet"
            same = same_bytes or same_parquet(a, b)
        elif suffix in TEXT_SUFFIXES:
            kind = f"text {suffix}"
            same = same_bytes
        else:
            kind = f"other {suffix or '(none)'}"
            same = same_bytes
        counts[(kind, "same values" if same else "DIFFERENT")] += 1
        counts[(kind, "same bytes" if same_bytes else "other bytes")] += 1
        if not same:
            problems.append(f"different: {name}")
    for (kind, verdict), count in sorted(counts.items()):
        print(f"{kind:16} {verdict:12} {count:6}")
    print(f"{len(common)} files compared ({len(left)} in {before}, {len(right)} in {after})")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--only-common", action="store_true", help="compare the files both trees hold")
    args = parser.parse_args(argv)
    return compare(args.before, args.after, args.only_common)


if __name__ == "__main__":
    sys.exit(main())
