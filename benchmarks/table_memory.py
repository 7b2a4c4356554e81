"""What a table job holds: ``irgrid.tables.load_cells`` over every cell of a finished grid's chunk files.

    python benchmarks/table_memory.py RUN_DIR            # a workflow directory holding results/
    PYTHONPATH=/other/checkout/src python benchmarks/table_memory.py RUN_DIR   # another code's

Lists every cell of every ``results/*/eval/*/*/chunk-*.parquet`` (a cell: the file's distinct model and
params), in an order unlike the files' (shuffled with a fixed seed, as an experiment's cells are ordered
by the experiment), and loads them as a table, figure or findings job does (``load_cells``): rows,
seconds, and the process's peak RSS (``ru_maxrss``). ``benchmarks/big_grid.py --workdir DIR`` leaves
such a directory in ``DIR/run``. irgrid is imported from ``PYTHONPATH`` (or the installed package), so
the same script measures any checkout.
"""

from __future__ import annotations

import argparse
import glob
import resource
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args()

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


if __name__ == "__main__":
    main()
