"""A chunk's job keeps evaluations, not runs (irgrid.jobs.chunk): what it must keep equal.

- A cell's run recomputed alone (the one-cell rule ``retrieve``: ``irgrid retrieve`` with one point)
  is byte for byte the file the chunk's retrieval wrote for it when runs were stored (``irgrid
  retrieve`` with all the chunk's points): scoring is deterministic and a point's run does not
  depend on the points scored beside it.
- The chunk's evaluation file holds, for each cell, the rows ``irgrid evaluate`` gives that cell's
  run file (the two-step path the workflow had), value for value; the tables read the same frame
  from it as from one file per cell.
- The violation counts of best runs scored again in the job equal those of the stored run files.
"""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from irgrid import cli
from irgrid.analysis import Analyzer
from irgrid.errors import InputFormatError
from irgrid.jobs.chunk import parse_chunk_cells

TEXTS = [
    ("d1", "The cat sat on the mat with another cat."),
    ("d2", "A dog chased the cat around the garden, the dog barked."),
    ("d3", "Mats and rugs: a mat is not a rug, but a rug may be a mat."),
    ("d4", "Garden birds sing; a cat watches the birds in the garden."),
    ("d5", "Nothing relevant here at all."),
    ("d6", "cat cat cat dog dog mat"),
    ("d7", "the mat the mat the mat"),
]
TOPICS = pd.DataFrame({"qid": ["1", "2", "3"], "text": ["cat on a mat", "garden dog zebra", "rug"]})
QRELS = pd.DataFrame({"qid": ["1", "1", "2", "2", "3"], "docno": ["d1", "d7", "d4", "d5", "d3"],
                      "relevance": pd.array([1, 2, 1, 0, 1], dtype="int32")})
# two families, points of each, in a mixed order as a chunk lists them
CELLS = [["bm25", "bm25", "k1~0.9_b~0.4"], ["ql", "ql_dirichlet", "mu~10"], ["bm25", "bm25", "k1~1.2_b~0.75"],
         ["ql", "ql_dirichlet", "mu~1000"], ["bm25", "bm25", "k1~2_b~1"]]
MEASURES = ["AP", "P@5", "nDCG@10"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    from irgrid.index import build_index
    from irgrid.index.forward import build_forward_index, forward_index_dir

    root = tmp_path_factory.mktemp("chunk")
    (root / "docs").mkdir()
    pq.write_table(pa.table({"docno": [d for d, _ in TEXTS], "text": [t for _, t in TEXTS]}),
                   root / "docs" / "part-0000.parquet")
    build_index(root / "docs", root / "index", Analyzer(stemmer="porter", stopwords="none"), num_buckets=2,
                scheduler="sync", progress=False)
    build_forward_index(root / "index", forward_index_dir(root / "index"))  # violations read it
    pq.write_table(pa.Table.from_pandas(TOPICS, preserve_index=False), root / "topics.parquet")
    pq.write_table(pa.Table.from_pandas(QRELS, preserve_index=False), root / "qrels.parquet")
    return root


def retrieve(root, cells, out_dir):
    """`irgrid retrieve` of ``cells`` in one process; the run files, one per cell."""
    outs = [out_dir / f"{model}-{params}.parquet" for model, _, params in cells]
    assert cli.main(["retrieve", "--index", str(root / "index"), "--topics", str(root / "topics.parquet"),
                     "--family", *[family for _, family, _ in cells], "--params", *[p for _, _, p in cells],
                     "--depth", "5", "--out", *map(str, outs)]) == 0
    return outs


def test_a_cells_run_made_alone_is_the_file_its_chunk_stored(inputs, tmp_path):
    stored = retrieve(inputs, CELLS, tmp_path)
    (tmp_path / "alone").mkdir()
    for cell, path in zip(CELLS, stored):
        [alone] = retrieve(inputs, [cell], tmp_path / "alone")
        assert alone.read_bytes() == path.read_bytes(), cell
        assert pq.read_table(alone).num_rows > 0


# rank-only measures (the chunk job hands ir-measures each query's rows up to its last judged document,
# picked on document ids), and a measure that reads the whole ranking
@pytest.mark.parametrize("measures", [MEASURES, ["AP", "Judged@5"]])
def test_the_chunk_file_holds_what_irgrid_evaluate_gives_each_run(inputs, tmp_path, measures):
    from irgrid.tables import load_cells

    runs = retrieve(inputs, CELLS, tmp_path)
    evals = [path.with_suffix(".eval.parquet") for path in runs]
    common = ["--qrels", str(inputs / "qrels.parquet"), "--topics", str(inputs / "topics.parquet"),
              "--measures", json.dumps(measures)]
    assert cli.main(["evaluate", "--run", *map(str, runs), *common, "--out", *map(str, evals)]) == 0
    chunk = tmp_path / "chunk-01.parquet"
    assert cli.main(["chunk", "--index", str(inputs / "index"), "--cells", json.dumps(CELLS), "--depth", "5",
                     *common, "--out", str(chunk)]) == 0
    table = pq.read_table(chunk)
    assert table.schema.names == ["model", "params", "qid", "measure", "value"]
    for (model, _, params), evaluation in zip(CELLS, evals):
        rows = table.filter(pc.and_(pc.equal(table["model"], model),
                                            pc.equal(table["params"], params)))
        assert rows.select(["qid", "measure", "value"]).to_pylist() == pq.read_table(evaluation).to_pylist()
    # the tables' reader gives the same frame from the chunk file as from the cells' own files
    per_cell = pd.DataFrame([{"collection": "tiny", "queryset": "text", "model": m, "params": p, "path": str(e)}
                             for (m, _, p), e in zip(CELLS, evals)])
    chunked = per_cell.assign(path=str(chunk))
    shuffled = chunked.iloc[[3, 0, 4, 1, 2]]  # any cells, in any order: the order of the cells given
    pd.testing.assert_frame_equal(load_cells(shuffled), load_cells(per_cell.iloc[[3, 0, 4, 1, 2]]))
    pd.testing.assert_frame_equal(load_cells(chunked), load_cells(per_cell))
    # a sidecar says what made it, as a run's does
    made = json.loads(chunk.with_suffix(".provenance.json").read_text())
    assert made["measures"] == measures and made["depth"] == 5


def test_a_cell_missing_from_its_chunk_file_is_an_error_naming_the_file(inputs, tmp_path):
    from irgrid.tables import load_cells

    chunk = tmp_path / "chunk-all.parquet"
    assert cli.main(["chunk", "--index", str(inputs / "index"), "--topics", str(inputs / "topics.parquet"),
                     "--qrels", str(inputs / "qrels.parquet"), "--measures", '["AP"]', "--cells",
                     json.dumps(CELLS[:1]), "--out", str(chunk)]) == 0
    cells = pd.DataFrame([{"collection": "tiny", "queryset": "text", "model": "bm25", "params": "k1~3_b~0.5",
                           "path": str(chunk)}])
    with pytest.raises(InputFormatError, match="chunk-all.parquet.*bm25 at k1~3_b~0.5"):
        load_cells(cells)


@pytest.mark.parametrize("cells", [[], [["bm25", "bm25"]], [["bm25", "", "k1~1"]], {"bm25": 1}])
def test_chunk_cells_must_be_model_family_params_triples(cells):
    with pytest.raises(InputFormatError, match="--cells"):
        parse_chunk_cells(cells)


def test_violations_of_best_runs_scored_again_equal_those_of_the_stored_runs(inputs, tmp_path):
    from irgrid.axioms.experiment import analyse_best_runs
    from irgrid.tables import TableSpec

    cells = CELLS[:2]
    runs = retrieve(inputs, cells, tmp_path)
    rows = []
    for (model, _, params), run in zip(cells, runs):
        evaluation = tmp_path / f"{model}.eval.parquet"
        value = 0.5 if model == "bm25" else 0.25
        pq.write_table(pa.table({"qid": TOPICS["qid"], "measure": ["AP"] * 3, "value": [value] * 3}), evaluation)
        rows.append({"collection": "tiny", "queryset": "text", "analyzer": "porter", "model": model,
                     "params": params, "path": str(evaluation), "run": str(run), "index": str(inputs / "index"),
                     "topics": str(inputs / "topics.parquet")})
    spec = TableSpec(experiment="tiny", models=["bm25", "ql"], baseline="ql")
    families = {"bm25": "bm25", "ql": "ql_dirichlet"}
    stored = analyse_best_runs(pd.DataFrame(rows), spec, families, depth=5, common_run="ql")
    (tmp_path / "gone").mkdir()
    moved = [{**row, "run": str(tmp_path / "gone" / "absent.parquet")} for row in rows]  # no run file is read
    again = analyse_best_runs(pd.DataFrame(moved), spec, families, depth=5, common_run="ql", run_depth=5)
    pd.testing.assert_frame_equal(again, stored)
    assert len(stored) > 0
