"""Which chunk jobs one changed grid value reruns: the 30,000- and 100,000-cell grids of big_grid.py.

    PYTHONPATH=<checkout>/src python benchmarks/changed_value_chunks.py [--grids 30k 100k]

For each grid (big_grid.py's experiment: BM25 at k1 x b values and QL at 4 mu values on the six
classic collections), the chunks ``irgrid.config.retrieval_chunks`` plans from the config (what
Snakemake's ``chunk`` jobs are) before and after one edit of the experiment file:

  b 0.5 -> 0.505    one b value changed (big_grid.py's rerun step)
  k1 changed        the middle k1 value moved by 0.0001
  b added           one more b value (0.5025)

A chunk reruns when its label or its cells differ from every chunk of the plan before (its output
path or its params change). Printed: chunks before, chunks rerun after the edit, the cells those
chunks hold (what the reruns score) against the cells the edit adds (what must be scored). Plans
only: no job runs, so it takes seconds; the package on PYTHONPATH decides the chunking, so two
checkouts compare side by side.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from big_grid import EXPERIMENT, grid_values, write_workdir  # noqa: E402  (the grids big_grid.py runs)

from irgrid.config import load_config, retrieval_chunks  # noqa: E402

GRIDS = {"30k": (100, 50), "100k": (100, 167)}


@contextlib.contextmanager
def working_directory(path: Path):
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def plan(workdir: Path) -> dict[tuple, tuple]:
    """(collection, analyzer, query set, label) -> the chunk's cells, as the workflow plans them."""
    with working_directory(workdir):
        config = load_config(yaml.safe_load((workdir / "config" / "config.yaml").read_text()), "config/config.yaml")
        return {(c.collection, c.analyzer, c.queryset, c.label): c.cells for c in retrieval_chunks(config)}


def edit_grid(workdir: Path, edit) -> None:
    path = workdir / "config" / "experiments" / f"{EXPERIMENT}.yaml"
    experiment = yaml.safe_load(path.read_text())
    grid = experiment["models"]["bm25"]["grid"]
    grid["k1"], grid["b"] = edit(list(grid["k1"]), list(grid["b"]))
    path.write_text(yaml.safe_dump(experiment, sort_keys=False))


def changed_b(k1, b):
    return k1, [0.505 if value == 0.5 else value for value in b]


def changed_k1(k1, b):
    middle = k1[len(k1) // 2]
    return [round(value + 0.0001, 4) if value == middle else value for value in k1], b


def added_b(k1, b):
    return k1, sorted({*b, 0.5025})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grids", nargs="+", default=list(GRIDS), choices=list(GRIDS))
    parser.add_argument("--mirror", default=os.environ.get("IRGRID_MIRROR"))
    args = parser.parse_args()
    import irgrid

    print(f"package: {Path(irgrid.__file__).parent}")
    for name in args.grids:
        k1_values, b_values = GRIDS[name]
        with tempfile.TemporaryDirectory() as scratch:
            workdir = Path(scratch)
            cells = write_workdir(workdir, k1_values, b_values, args.mirror)
            before = plan(workdir)
            print(f"{name}: {k1_values} k1 x {b_values} b + 4 mu on six collections = {cells:,} cells, "
                  f"{len(before)} chunks (k1 {grid_values(k1_values, 0.1, 5.0)[0]}..5.0)")
            for label, edit in [("b 0.5 -> 0.505", changed_b), ("k1 changed", changed_k1), ("b added", added_b)]:
                write_workdir(workdir_fresh := workdir / label.replace(" ", "_"), k1_values, b_values, args.mirror)
                edit_grid(workdir_fresh, edit)
                after = plan(workdir_fresh)
                old = set(before.items())
                rerun = [(key, members) for key, members in after.items() if (key, members) not in old]
                old_cells = {(key[:3], cell) for key, members in before.items() for cell in members}
                new_cells = {(key[:3], cell) for key, members in after.items() for cell in members} - old_cells
                rescored = sum(len(members) for _, members in rerun)
                print(f"  {label:15s} reruns {len(rerun):4d} of {len(after)} chunks "
                      f"({len(rerun) / len(after):.0%}), {rescored:,} cells scored for {len(new_cells):,} new")


if __name__ == "__main__":
    main()
