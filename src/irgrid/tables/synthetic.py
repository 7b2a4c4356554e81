"""A synthetic grid's chunk evaluation files, in the workflow's layout, for the table-memory benchmark
(benchmarks/table_memory.py) and the tests that compare ways of reading them.

Every cell (collection, query set, model, point) gets the per-query rows an evaluation gives: each
query's value of every measure, query after query, then the tie rows of the queries a tie touches
(``first_tied_relevant_rank`` and ``E[m]`` of the measures whose cutoff it is within). Values follow
from the seed and the cell's name alone, so a grid's files are the same however it is chunked:

* a query's base difficulty (a beta draw per collection, query set and query), plus an effect of the
  point (a smooth bump over its position in the grid) and per-query noise, clipped to [0, 1];
  ``P@k`` values are multiples of 1/k, as trec_eval's;
* every ``tie_every``-th point of a model repeats the previous point's values exactly: equal means,
  for the ties between points that the selection breaks by grid order;
* ``tie_fraction`` of the queries of a cell have tie rows, different queries in different cells.

Files: ``results/<collection>/eval/<analyzer>/<queryset>/chunk-NNNN.parquet`` with
``CHUNK_EVALUATION_SCHEMA``, each of ``chunk_size`` cells (the query set's cells shuffled by the
seed, as chunks by hash mix a grid's points). :func:`write_synthetic_grid` returns the cells as
a table job is given them (collection, queryset, model, params, path, analyzer, topics: a topics file
of the query set, qid and text, in ``root``/topics).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ..evaluation.ties import FIRST_TIED_RELEVANT
from ..grid import encode_point
from ..io import write_parquet
from ..jobs.chunk import CHUNK_EVALUATION_SCHEMA, CHUNK_WRITE_OPTIONS

DEFAULT_MEASURES = ("AP", "P@1", "P@5", "P@10", "P@20", "P@30", "nDCG@10", "Rprec", "R@1000", "RR")
#: the cutoff of each measure's tie rows (None: anywhere in the ranking)
_CUTOFFS = {"P@1": 1, "P@5": 5, "P@10": 10, "P@20": 20, "P@30": 30, "nDCG@10": 10}


def bm25_ql_grid(k1_values: int, b_values: int, mu_values: int = 4) -> dict[str, list[str]]:
    """model -> encoded points: BM25 over ``k1_values`` x ``b_values`` points and query likelihood over
    ``mu_values`` (benchmarks/big_grid.py's grids: 100 x 167 + 4 points a collection)."""
    k1 = np.linspace(0.1, 3.0, k1_values)
    b = np.linspace(0.0, 1.0, b_values)
    mu = np.geomspace(100, 5000, mu_values)
    return {"bm25": [encode_point({"k1": round(float(x), 4), "b": round(float(y), 4)}, ["k1", "b"]) for x in k1 for y in b],
            "ql": [encode_point({"mu": round(float(x), 1)}, ["mu"]) for x in mu]}


def _seed_of(*parts: object) -> int:
    return int.from_bytes(hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest(), "little")


def _cell_values(seed: int, collection: str, queryset: str, model: str, position: int, points: int,
                 difficulty: np.ndarray, measures: Sequence[str]) -> np.ndarray:
    """queries x measures values of one cell (a model's point ``position`` of ``points``)."""
    rng = np.random.default_rng(_seed_of(seed, collection, queryset, model, position))
    centre = (position / max(points - 1, 1) - 0.6) ** 2
    effect = 0.08 - 0.3 * centre + rng.normal(0, 0.01)
    base = np.clip(difficulty + effect + rng.normal(0, 0.05, len(difficulty)), 0, 1)
    out = np.empty((len(difficulty), len(measures)))
    for column, measure in enumerate(measures):
        value = np.clip(base + rng.normal(0, 0.03, len(base)), 0, 1)
        if measure.startswith("P@"):
            k = int(measure[2:])
            value = np.round(value * k) / k
        out[:, column] = value
    return out


def write_synthetic_grid(root: str | os.PathLike, queries: Mapping[str, int], grid: Mapping[str, Sequence[str]],
                         querysets: Sequence[str] = ("text",), measures: Sequence[str] = DEFAULT_MEASURES,
                         chunk_size: int = 400, analyzer: str = "porter", seed: int = 0, tie_every: int = 7,
                         tie_fraction: float = 0.1) -> pd.DataFrame:
    """Write the grid ``grid`` (model -> encoded points) on each collection of ``queries`` (collection ->
    number of queries) and query set into ``root``/results (see the module's docstring)."""
    root = Path(root)
    measure_names = [*measures, FIRST_TIED_RELEVANT, *(f"E[{measure}]" for measure in measures)]
    measure_array = pa.array(measure_names, pa.string())
    cells = []
    for collection, count in queries.items():
        for queryset in querysets:
            rng = np.random.default_rng(_seed_of(seed, collection, queryset))
            # qids with gaps (some numbers judged nowhere), as real query sets have
            numbers = np.sort(rng.choice(np.arange(1, 2 * count + 1), size=count, replace=False))
            qid_array = pa.array([str(number) for number in numbers], pa.string())
            topics = root / "topics" / f"{collection}-{queryset}.parquet"
            topics.parent.mkdir(parents=True, exist_ok=True)
            write_parquet(pa.table({"qid": qid_array, "text": pa.array([f"query {n}" for n in numbers])}), topics)
            difficulty = rng.beta(2, 5, count)
            order = [(model, position) for model, points in grid.items() for position in range(len(points))]
            order = [order[i] for i in rng.permutation(len(order))]
            directory = root / "results" / collection / "eval" / analyzer / queryset
            directory.mkdir(parents=True, exist_ok=True)
            for number, start in enumerate(range(0, len(order), chunk_size)):
                path = directory / f"chunk-{number:04d}.parquet"
                parts = [_cell_rows(seed, collection, queryset, model, position, grid[model], difficulty, measures,
                                    tie_every, tie_fraction) for model, position in order[start:start + chunk_size]]
                models = [model for model, _ in order[start:start + chunk_size]]
                params = [grid[model][position] for model, position in order[start:start + chunk_size]]
                lengths = np.array([len(part[0]) for part in parts])
                table = pa.table({
                    "model": pa.array(np.repeat(np.array(models, dtype=object), lengths), pa.string()),
                    "params": pa.array(np.repeat(np.array(params, dtype=object), lengths), pa.string()),
                    "qid": qid_array.take(pa.array(np.concatenate([part[0] for part in parts]))),
                    "measure": measure_array.take(pa.array(np.concatenate([part[1] for part in parts]))),
                    "value": pa.array(np.concatenate([part[2] for part in parts]), pa.float64()),
                }, schema=CHUNK_EVALUATION_SCHEMA)
                write_parquet(table, path, **CHUNK_WRITE_OPTIONS)
                cells += [(collection, queryset, model, point, str(path), analyzer, str(topics))
                          for model, point in zip(models, params)]
    return pd.DataFrame(cells, columns=["collection", "queryset", "model", "params", "path", "analyzer", "topics"])


def _cell_rows(seed: int, collection: str, queryset: str, model: str, position: int, points: Sequence[str],
               difficulty: np.ndarray, measures: Sequence[str], tie_every: int, tie_fraction: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query index, measure index, value) of one cell's rows, in the order an evaluation writes them."""
    source = position - 1 if tie_every and position % tie_every == tie_every - 1 else position
    values = _cell_values(seed, collection, queryset, model, source, len(points), difficulty, measures)
    count, width = values.shape
    query = np.repeat(np.arange(count), width)
    measure = np.tile(np.arange(width), count)
    flat = values.ravel()
    rng = np.random.default_rng(_seed_of(seed, collection, queryset, model, position, "ties"))
    tied = np.flatnonzero(rng.random(count) < tie_fraction)
    if len(tied):
        first = rng.integers(1, 40, len(tied)).astype(float)
        tie_query, tie_measure, tie_value = [tied], [np.full(len(tied), width)], [first]
        for column, name in enumerate(measures):
            cutoff = _CUTOFFS.get(name)
            within = tied if cutoff is None else tied[first <= cutoff]
            tie_query.append(within)
            tie_measure.append(np.full(len(within), width + 1 + column))
            tie_value.append(np.clip(values[within, column] + rng.normal(0, 0.01, len(within)), 0, 1))
        query = np.concatenate([query, *tie_query])
        measure = np.concatenate([measure, *tie_measure])
        flat = np.concatenate([flat, *tie_value])
    return query, measure, flat
