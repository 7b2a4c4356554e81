"""Each run's violations read from the per-document count files batch by batch
(irgrid.axioms.experiment.read_violations_per_document) equal those of every row in one frame (the
reference: the files concatenated by pandas, then violations_per_document, as the violation-table job
read them before), to the bit: on several collections, own and common runs, models tied in their
counts, per-query means that are not exact in binary, qids whose text order is not their number
order, batches that split a run and a query, a run in two files, missing counts and missing qids.
The tables made from them, with NaN and ties in the measure, are the same text."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irgrid.axioms import CONSTRAINTS
from irgrid.axioms.experiment import (
    read_violations_per_document,
    run_violation_summary,
    violation_claims,
    violation_summary,
    violation_tables,
    violations_per_document,
    write_violations,
)
from irgrid.errors import InputFormatError
from irgrid.tables import TableSpec

MODELS = ["bm25", "dfr", "es", "piv"]
COLUMNS = ["collection", "queryset", "model", "params", "counted_on", "qid", *CONSTRAINTS]


def reference(paths) -> pd.DataFrame:
    """The frame the job built before: every file's columns read, concatenated, then summarised."""
    frames = [pq.read_table(path, columns=[c for c in COLUMNS if c in pq.read_schema(path).names]).to_pandas()
              for path in paths]
    return violations_per_document(pd.concat(frames, ignore_index=True))


def per_doc_counts(rng, collection: str, queries: int) -> pd.DataFrame:
    """One collection's per-document counts as analyse_best_runs writes them: every model's own run and
    the common run, a query's documents in rank order, 1 to 9 documents a query (means like 1/3 and 2/7).
    bm25 and dfr get the same counts (tied totals)."""
    qids = [str(q) for q in rng.permutation(np.arange(1, queries + 1) * 3)]  # "12" before "3" as text
    frames = []
    for counted_on in ("own", "common"):
        documents = {qid: int(rng.integers(1, 10)) for qid in qids}
        tied = None
        for model in MODELS:
            rows = [(qid, f"d{doc}") for qid in qids for doc in range(documents[qid])]
            counts = rng.integers(0, 7, size=(len(rows), len(CONSTRAINTS)))
            if model == "dfr":
                counts = tied
            tied = counts
            frame = pd.DataFrame(rows, columns=["qid", "docno"])
            frame[list(CONSTRAINTS)] = counts
            frames.append(frame.assign(length=rng.integers(5, 50, size=len(rows)), collection=collection,
                                       queryset="text", analyzer="porter", model=model,
                                       params=f"{model}~{rng.integers(1, 4)}", counted_on=counted_on))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("violations")
    rng = np.random.default_rng(11)
    paths = []
    for collection, queries in [("cranfield", 40), ("adi", 7), ("npl", 23)]:
        path = directory / f"{collection}.parquet"
        write_violations(per_doc_counts(rng, collection, queries), path)
        paths.append(path)
    return paths


@pytest.mark.parametrize("batch_rows", [3, 333, 1 << 18])
def test_batches_give_the_whole_frames_violations(files, batch_rows):
    expected = reference(files)
    found = read_violations_per_document(files, batch_rows=batch_rows)
    assert len(found) == 3 * 2 * len(MODELS)
    assert found.equals(expected) and found.dtypes.equals(expected.dtypes)


def test_files_in_another_order_give_the_runs_in_that_order(files):
    paths = files[::-1]
    assert read_violations_per_document(paths, batch_rows=50).equals(reference(paths))


def test_a_run_in_two_files_without_counted_on_with_missing_counts_and_qids(tmp_path):
    """A run whose rows two files share (a query's documents in both), files without ``counted_on`` (the
    own runs only), missing counts (null: pandas skips them in a mean and counts them as 0 in a row's
    total) and a missing qid (pandas' groupby leaves its rows out)."""
    rng = np.random.default_rng(3)
    frame = per_doc_counts(rng, "cacm", 12)
    frame = frame[frame["counted_on"] == "own"].drop(columns="counted_on").reset_index(drop=True)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    c2 = table.column("C2").to_numpy().astype(float)
    c2[rng.choice(len(c2), size=len(c2) // 3, replace=False)] = np.nan
    c2[(frame["model"] == "piv").to_numpy()] = np.nan  # a run without any C2
    table = table.set_column(table.schema.get_field_index("C2"), "C2", pa.array(c2, pa.int64(), from_pandas=True))
    qids = table.column("qid").to_pylist()
    qids[5] = qids[17] = None
    table = table.set_column(0, "qid", pa.array(qids, pa.string()))
    split = int(np.flatnonzero((frame["model"] == "es").to_numpy())[10])  # in es' rows, within a query
    paths = [tmp_path / "first.parquet", tmp_path / "second.parquet"]
    pq.write_table(table.slice(0, split), paths[0])
    pq.write_table(table.slice(split), paths[1])
    expected = reference(paths)
    assert expected["counted_on"].eq("own").all() and expected.loc[expected["model"] == "piv", "C2"].isna().all()
    for batch_rows in (1, 4, 1 << 18):
        assert read_violations_per_document(paths, batch_rows=batch_rows).equals(expected)


def test_the_tables_are_the_same_text_with_nan_and_ties_in_the_measure(files):
    per_doc = pd.concat([pd.read_parquet(path) for path in files], ignore_index=True)
    rows = per_doc[["collection", "queryset", "model", "params"]].drop_duplicates()
    rng = np.random.default_rng(7)
    evaluations = []
    for entry in rows.itertuples(index=False):
        values = rng.choice([0.125, 0.25, 0.5], size=5)  # few values: models tie in their mean
        if entry.collection == "npl" and entry.model == "piv":
            values[2] = np.nan
        evaluations += [(*entry, str(qid), "AP", value) for qid, value in enumerate(values)]
    evaluations = pd.DataFrame(evaluations, columns=["collection", "queryset", "model", "params", "qid", "measure",
                                                     "value"])
    spec = TableSpec(experiment="e", models=MODELS, baseline="dfr", model_labels={"es": "ES"})
    expected = violation_summary(per_doc, evaluations, spec, paper_models=MODELS[:3])
    found = run_violation_summary(read_violations_per_document(files, batch_rows=100), evaluations, spec,
                                  paper_models=MODELS[:3])
    for expected_frame, found_frame in zip(expected, found):
        assert found_frame.equals(expected_frame)
    assert expected[0]["total"].duplicated().any()  # bm25 and dfr tie
    texts = [violation_tables(table, correlations, spec,
                              violation_claims(table, correlations, spec, fewest="es", common_run="dfr"), "dfr")
             for table, correlations in (expected, found)]
    assert texts[0] == texts[1]


def test_counts_that_are_not_integers_or_missing_columns_are_refused(tmp_path):
    frame = pd.DataFrame({"collection": ["c"], "queryset": ["q"], "model": ["m"], "params": ["p"], "qid": ["1"],
                          "C1": [0.5], "C2": [0], "C3": [0], "C4": [0]})
    path = tmp_path / "floats.parquet"
    frame.to_parquet(path)
    with pytest.raises(InputFormatError, match="integer violation counts in column C1"):
        read_violations_per_document([path])
    frame.drop(columns=["C1", "qid"]).to_parquet(path)
    with pytest.raises(InputFormatError, match="per-document violation counts with columns"):
        read_violations_per_document([path])


def test_no_files_no_runs():
    assert read_violations_per_document([]).columns.tolist() == violations_per_document(
        pd.DataFrame(columns=COLUMNS)).columns.tolist()
