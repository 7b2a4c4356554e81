"""What a table shows (its spec), where a chosen point sits in its grid, and the query subsets a
table can give rows of their own."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from ..errors import InputFormatError
from ..evaluation.evaluator import read_parquet_file
from ..grid import decode_point, format_value
from ..phrases import has_phrase
from ..sentences.protocol import mixed_qids, positive_qids


@dataclass
class TableSpec:
    """What an experiment's table shows (from config/experiments/*.yaml).

    ``selection`` is ``best`` (each model at its best grid point over all
    queries: an oracle that overstates every model) or ``cv`` (the point chosen
    by k-fold cross-validation over queries, each query scored by the point
    chosen on the other folds) or ``tuned`` (the point best on another query set,
    ``tune_on``: parameters chosen on a development set, reported on a test set). ``correction`` adjusts, per row and measure, the
    p-values of the models compared with the baseline (holm, bonferroni, bh).
    """

    experiment: str
    models: Sequence[str]
    baseline: str
    measures: Sequence[str] = ("AP", "P@10")
    select_by: str = "AP"
    alpha: float = 0.05
    title: str = ""
    model_labels: dict[str, str] = field(default_factory=dict)
    selection: str = "best"
    folds: int = 5
    seed: int = 0
    test: str = "ttest"
    alternative: str = "two-sided"
    correction: str = "none"
    #: query subsets given rows of their own beside each row (QUERY_SUBSETS), e.g. ``["phrases"]``
    subsets: Sequence[str] = ()
    #: show each row's number of queries in its label
    query_counts: bool = False
    #: selection ``tuned``: query set -> the query set whose evaluations choose its parameters
    #: (``{test: dev}``: every model at its best point on dev, reported on test; rows: the keys)
    tune_on: dict[str, str] = field(default_factory=dict)
    #: model -> parameter -> [low, high]: the inclusive bounds of its range (None where the bound is
    #: open or infinite); a best point at such a bound is on the edge of the range, not of the grid
    bounds: dict[str, dict[str, list]] = field(default_factory=dict)


EDGE_MARK = "‡"


@dataclass(frozen=True)
class GridPosition:
    """Where a model's best point sits in the grid it was tuned over, on one table row.

    ``points``: the grid points evaluated; ``edges``: each swept parameter whose best value is
    the lowest or highest of its grid values and could still move (not a bound of its range),
    as ``name=value (lowest of n)``; ``bounded``: those at a bound of the parameter's range, which
    no grid can extend past.
    """

    points: int
    best: str
    edges: tuple[str, ...] = ()
    bounded: tuple[str, ...] = ()

    @property
    def on_edge(self) -> bool:
        return bool(self.edges)

    def describe(self) -> str:
        parts = [f"edge: extend the grid ({'; '.join(self.edges)})"] if self.edges else []
        if self.bounded:
            parts.append(f"at the range's bound ({'; '.join(self.bounded)})")
        return ", ".join(parts)


def grid_position(params: Sequence[str], best: str, bounds: dict[str, list] | None = None) -> GridPosition:
    """The position of ``best`` among the evaluated grid points ``params`` (encoded points)."""
    bounds = bounds or {}
    points = [decode_point(point) for point in dict.fromkeys(params)]
    chosen = decode_point(best)
    edges, bounded = [], []
    for name, value in chosen.items():
        values = sorted({point[name] for point in points if name in point})
        if len(values) < 2 or values[0] < value < values[-1]:
            continue
        side = "lowest" if value == values[0] else "highest"
        low, high = (list(bounds.get(name) or [None, None]) + [None, None])[:2]
        at_bound = (side == "lowest" and low is not None and value <= low) or (
            side == "highest" and high is not None and value >= high)
        text = f"{name}={format_value(value)} ({side} of {len(values)})"
        (bounded if at_bound else edges).append(text)
    return GridPosition(len(points), best, tuple(edges), tuple(bounded))




#: query subsets a table can show: name -> (row label, which queries of a topics table belong to it)
QUERY_SUBSETS = {"phrases": "queries with a phrase",
                 "mixed": "questions with a positive and a negative candidate",
                 "positive": "questions with a positive candidate"}


def subset_qids(topics: pd.DataFrame, subset: str) -> set[str]:
    """The qids of ``topics`` in ``subset``: ``phrases``, those with a phrase of two or more words;
    ``mixed``, those with a relevant and a non-relevant candidate (query sets ``X+judged``, ``X+alljudged``);
    ``positive``, those with a relevant candidate (all of ``X+judged``'s).

    (A query set without identified phrases, or without judged candidates, has none.)
    """
    if subset not in QUERY_SUBSETS:
        raise ValueError(f"unknown query subset {subset!r}; known: {sorted(QUERY_SUBSETS)}")
    if subset == "mixed":
        return mixed_qids(topics)
    if subset == "positive":
        return positive_qids(topics)

    if "phrases" not in topics.columns:
        return set()
    return {str(qid) for qid, phrases in zip(topics["qid"], topics["phrases"])
            if phrases is not None and has_phrase(list(phrases))}


def read_topics_file(path: str | os.PathLike) -> pd.DataFrame:
    """A topics file (qid, text, ...), the frame :func:`irgrid.runs.read_topics` gives, read
    without importing the retrieval code (numba) and pyarrow.dataset, a table or findings job's
    largest fixed cost, which only wants the queries' ids, text or phrases."""
    table = read_parquet_file(path)
    if not {"qid", "text"} <= set(table.column_names):
        raise InputFormatError(path, None, "a topics table with columns qid, text", f"columns {table.column_names}")
    return table.to_pandas()


def query_subsets(cells: pd.DataFrame, subsets: Sequence[str]) -> dict[tuple[str, str], dict[str, set[str]]]:
    """For each (collection, queryset) row of ``cells`` (with a ``topics`` path), the qids of each subset."""
    out: dict[tuple[str, str], dict[str, set[str]]] = {}
    if not subsets:
        return out
    for (collection, queryset), rows in cells.groupby(["collection", "queryset"], sort=False):
        topics = read_topics_file(rows["topics"].iloc[0])
        out[(collection, queryset)] = {subset: subset_qids(topics, subset) for subset in subsets}
    return out


