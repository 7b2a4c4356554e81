"""Are the runs of the default experiments' grids the same bytes before and after a change to the scorer?

    # once with the code before the change (another checkout's src), once with the code after:
    PYTHONPATH=/path/to/before/src python benchmarks/same_runs.py --out /tmp/runs-before
    python benchmarks/same_runs.py --out /tmp/runs-after
    python benchmarks/same_runs.py --compare /tmp/runs-before /tmp/runs-after

Writes, for one collection (default CACM, from the mirror), every cell of config/config.yaml's
experiments whose query set needs nothing but the topics (no parses, phrases, judged candidates),
grid after grid as `irgrid retrieve` does (``retrieve_grid(..., as_arrow=True)`` + ``write_run``),
into OUT/{analyzer}/{queryset}/{model}/{params}.parquet. The indexes, topics and shards are built
in OUT/_inputs once per analyzer (through the package API). ``--compare A B`` lists every file that
differs or is missing on one side and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_runs(out: Path, collection: str, families: set[str] | None) -> int:
    from irgrid.analysis import Analyzer
    from irgrid.collections import load_registry, resolve_files, write_document_shards, write_topics
    from irgrid.config import all_cells, load_config, load_yaml
    from irgrid.grid import decode_point
    from irgrid.index import IndexReader, build_index
    from irgrid.index.forward import build_forward_index, forward_index_dir
    from irgrid.retrieve import retrieve_grid
    try:
        from irgrid.runs import read_topics, write_run
    except ImportError:  # a checkout from before run files had their own module (the "before" side)
        from irgrid.retrieve import read_topics, write_run

    os.environ.setdefault("IRGRID_MIRROR", "/work/shared/collections")
    config = load_config(load_yaml(REPO / "config" / "config.yaml"))
    grids: dict[tuple, list] = defaultdict(list)
    for cell in all_cells(config):
        if cell.collection != collection or "+" in cell.queryset:
            continue
        if families is not None and cell.family not in families:
            continue
        grids[(cell.analyzer, cell.queryset, cell.model, cell.family)].append(cell.params)
    spec = load_registry(REPO / "config" / "collections.yaml")[collection]
    files = resolve_files(spec, download=False)
    inputs = out / "_inputs"
    if not (inputs / "docs").is_dir():
        write_document_shards(spec, files, inputs / "docs", num_shards=2)
    written = 0
    for (analyzer, queryset, model, family), params in sorted(grids.items()):
        index = inputs / "index" / analyzer
        if not (index / "stats.json").is_file():
            build_index(inputs / "docs", index, Analyzer.from_dict(config["analyzers"][analyzer]).to_dict(),
                        num_buckets=16, scheduler="sync", progress=False)
        if "+" in family and not forward_index_dir(index).is_dir():  # feedback reads the documents' terms
            build_forward_index(index, forward_index_dir(index))
        topics = inputs / "topics" / f"{queryset}.parquet"
        if not topics.is_file():
            write_topics(spec, files, queryset, topics)
        start = time.perf_counter()
        runs = retrieve_grid(IndexReader(index), read_topics(topics), family, [decode_point(p) for p in params],
                             as_arrow=True)
        for p, run in zip(params, runs):
            write_run(run, out / analyzer / queryset / model / f"{p}.parquet")
        written += len(runs)
        print(f"{analyzer}/{queryset}/{model}: {len(runs)} runs in {time.perf_counter() - start:.2f} s", flush=True)
    return written


def compare(a: Path, b: Path) -> int:
    def runs(root: Path) -> set[Path]:
        return {p.relative_to(root) for p in root.rglob("*.parquet") if "_inputs" not in p.parts}

    left, right = runs(a), runs(b)
    bad = sorted(left ^ right)
    for path in bad:
        print(f"only in {a if path in left else b}: {path}")
    for path in sorted(left & right):
        if (a / path).read_bytes() != (b / path).read_bytes():
            print(f"differs: {path}")
            bad.append(path)
    print(f"{len(left & right)} runs in both, {len(bad)} differing or missing")
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--collection", default="cacm")
    parser.add_argument("--families", help="comma-separated model families (default: all that need only topics)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if not args.out:
        parser.error("--out or --compare")
    families = set(args.families.split(",")) if args.families else None
    print(f"{write_runs(args.out, args.collection, families)} runs written to {args.out}")


if __name__ == "__main__":
    main()
