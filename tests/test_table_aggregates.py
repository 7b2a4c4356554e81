"""Tables, figures and findings from cells' aggregates (irgrid.tables.aggregates) equal those from
every per-query row (irgrid.tables.load_cells, the reference path): the same chosen points, values,
summaries and rendered text, on synthetic chunk files with ties between points, tie rows of some
queries, qids with gaps, several collections and query sets, and every selection."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irgrid.axioms import CONSTRAINTS
from irgrid.axioms.experiment import violation_summary
from irgrid.report.claims import Claim
from irgrid.report.findings import evaluate_claims
from irgrid.tables import (
    TableSpec,
    best_points,
    chosen_means,
    chosen_points,
    grid_positions,
    load_cells,
    read_cell_aggregates,
    read_table_evaluations,
    select_point,
    summarise,
    to_markdown,
)
from irgrid.tables.figures import means_of, sensitivity_curves, table_rows
from irgrid.tables.synthetic import bm25_ql_grid, write_synthetic_grid

MODELS = ["ql", "bm25"]


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    root = tmp_path_factory.mktemp("grid")
    cells = write_synthetic_grid(root, {"adi": 23, "med": 12, "cacm": 31}, bm25_ql_grid(4, 5, 3),
                                 querysets=("text", "title"), chunk_size=7, tie_every=3, tie_fraction=0.3)
    # the experiment's order, not the files': cells of a model and row scattered
    return cells.sample(frac=1.0, random_state=3).reset_index(drop=True)


def spec(**kwargs) -> TableSpec:
    return TableSpec(**{"experiment": "x", "models": MODELS, "baseline": "ql", "measures": ["AP", "P@10", "RR"],
                        "select_by": "AP", **kwargs})


SPECS = [spec(), spec(selection="cv", folds=3, seed=2), spec(selection="cv", folds=5, correction="holm"),
         spec(select_by="P@10"), spec(select_by="P@10", selection="cv", folds=4),
         spec(selection="tuned", tune_on={"text": "title"}), spec(measures=["AP", "P@10"], test="wilcoxon", correction="bh")]


def reference(cells):
    return load_cells(cells)


def same_chosen(left, right):
    assert list(left) == list(right)
    for row in left:
        assert list(left[row]) == list(right[row])
        for model in left[row]:
            assert left[row][model][0] == right[row][model][0]
            pd.testing.assert_frame_equal(left[row][model][1].reset_index(drop=True),
                                          right[row][model][1].reset_index(drop=True), check_exact=True)


def test_the_synthetic_grid_has_ties_between_points_and_tie_rows(grid):
    frame = load_cells(grid)
    assert (frame["measure"] == "first_tied_relevant_rank").any()
    means = frame[frame["measure"] == "AP"].groupby(["collection", "queryset", "model", "params"])["value"].mean()
    assert means.duplicated().any()  # equal means: ties broken by grid order


@pytest.mark.parametrize("table_spec", SPECS, ids=lambda spec: f"{spec.selection}-{spec.select_by}-{spec.folds}")
def test_summaries_and_chosen_points_equal_the_whole_frames(grid, table_spec):
    frame = reference(grid)
    aggregates = read_cell_aggregates(grid, table_spec.select_by, selection_values=table_spec.selection == "cv")
    same_chosen(chosen_points(frame, table_spec), chosen_points(aggregates, table_spec))
    assert grid_positions(frame, table_spec) == grid_positions(aggregates, table_spec)
    subsets = {("adi", "text"): {"phrases": {"2", "5", "9", "11", "14", "20"}}}
    expected, found = summarise(frame, table_spec, subsets), summarise(aggregates, table_spec, subsets)
    assert expected.equals(found)
    assert to_markdown(expected, table_spec) == to_markdown(found, table_spec)
    assert expected.to_csv(index=False) == found.to_csv(index=False)
    assert chosen_means(frame, table_spec, "P@10").equals(chosen_means(aggregates, table_spec, "P@10"))


def test_every_row_is_of_the_cells_it_lists_however_few(grid):
    # one row and model only: a job listing a few cells of many files
    few = grid[(grid["collection"] == "med") & (grid["queryset"] == "text")].iloc[::3]
    one = replace(spec(), models=["bm25"], baseline="bm25")
    frame = load_cells(few)
    aggregates = read_cell_aggregates(few, "AP", selection_values=True)
    for table_spec in (one, replace(one, selection="cv", folds=3)):
        assert summarise(frame, table_spec).equals(summarise(aggregates, table_spec))


def test_figure_data_equal_the_whole_frames(grid):
    frame = reference(grid)
    aggregates = read_cell_aggregates(grid, "AP")
    assert sensitivity_curves(frame, "AP").equals(sensitivity_curves(aggregates, "AP"))
    assert table_rows(frame) == table_rows(aggregates)
    for collection, queryset in table_rows(frame):
        for model in (*MODELS, "absent"):
            assert means_of(frame, "AP", collection, queryset, model) == means_of(aggregates, "AP", collection,
                                                                                   queryset, model)


@pytest.mark.parametrize("selection", ["best", "cv"])
def test_findings_equal_the_whole_frames(grid, selection):
    table_spec = replace(spec(), selection=selection, folds=3)
    claims = [Claim("bm25", "ql", "AP"), Claim("bm25", "ql", "P@10", kind="direction")]
    rows = list(dict.fromkeys(zip(grid["collection"], grid["queryset"])))
    frame = reference(grid)
    aggregates = read_cell_aggregates(grid, "AP", selection_values=selection == "cv")
    expected = evaluate_claims(frame, table_spec, claims, rows, resamples=200)
    found = evaluate_claims(aggregates, table_spec, claims, rows, resamples=200)
    assert expected.equals(found)


def test_means_are_the_whole_frames_groupby_means_bit_for_bit(grid):
    """The per-cell means from one file at a time are the numbers the groupby over every row gives."""
    frame = load_cells(grid)
    selected = frame[frame["measure"] == "AP"]
    expected = selected.groupby(["collection", "queryset", "model", "params"], sort=False)["value"].mean()
    found = read_cell_aggregates(grid, "AP").point_means().set_index(["collection", "queryset", "model", "params"])
    assert np.array_equal(expected.to_numpy(), found["value"].to_numpy())
    assert list(expected.index) == list(found.index)


def test_a_cell_listed_twice_or_per_cell_files_read_every_row(grid, tmp_path):
    twice = pd.concat([grid, grid.iloc[:1]], ignore_index=True)
    assert isinstance(read_table_evaluations(twice, "AP"), pd.DataFrame)
    assert not isinstance(read_table_evaluations(grid, "AP"), pd.DataFrame)


def test_a_cell_without_rows_is_an_error(grid):
    missing = grid.copy()
    missing.loc[0, "params"] = "k1~99_b~99"
    with pytest.raises(Exception, match="no rows of that cell"):
        read_cell_aggregates(missing, "AP")


def test_a_nan_value_takes_pandas_other_mean_and_the_aggregates_follow(grid, tmp_path):
    """A NaN among a groupby's values turns pandas from sums by reduceat to its compensated kernel, for
    every group: the aggregates keep both means of each cell and give the one the whole frame's gets."""
    cells = grid.copy()
    path = cells.loc[cells["model"] == "bm25", "path"].iloc[0]
    table = pq.read_table(path)
    values = table.column("value").to_numpy().copy()
    values[np.flatnonzero(table.column("measure").to_numpy(zero_copy_only=False) == "AP")[2]] = np.nan
    copy = tmp_path / "chunk-nan.parquet"
    pq.write_table(table.set_column(4, "value", pa.array(values)), copy)
    cells.loc[cells["path"] == path, "path"] = str(copy)
    frame = load_cells(cells)
    aggregates = read_cell_aggregates(cells, "AP")
    assert sensitivity_curves(frame, "AP").equals(sensitivity_curves(aggregates, "AP"))
    assert grid_positions(frame, spec()) == grid_positions(aggregates, spec())
    assert summarise(frame, spec()).equals(summarise(aggregates, spec()))
    for collection, queryset in table_rows(frame):
        assert means_of(frame, "AP", collection, queryset, "bm25") == means_of(aggregates, "AP", collection,
                                                                                queryset, "bm25")


def test_violation_tables_and_best_runs_equal_the_whole_frames(grid):
    """The violation jobs' best points (select_point over every row, as before) and their summary's means."""
    frame = reference(grid)
    aggregates = read_cell_aggregates(grid, "AP")
    table_spec = spec()
    expected_best = {row: {model: select_point(values[values["model"] == model], table_spec)[0] for model in MODELS}
                     for row, values in frame.groupby(["collection", "queryset"], sort=False)}
    assert best_points(frame, table_spec) == expected_best == best_points(aggregates, table_spec)
    rng = np.random.default_rng(5)
    per_doc = pd.DataFrame([(collection, queryset, model, params, qid, f"d{doc}", *rng.integers(0, 5, 4))
                            for (collection, queryset), models in expected_best.items()
                            for model, params in models.items() for qid in ("1", "2", "3") for doc in range(3)],
                           columns=["collection", "queryset", "model", "params", "qid", "docno", *CONSTRAINTS])
    for expected, found in zip(violation_summary(per_doc, frame, table_spec),
                               violation_summary(per_doc, aggregates, table_spec)):
        assert expected.equals(found)
