"""The Snakemake workflow end to end, on a small ADI config in a temporary directory.

Snakemake runs as a subprocess, exactly as ``make run`` does:
``python -m snakemake --snakefile <repo>/Snakefile --directory <tmp> --configfile <tmp>/config/config.yaml``.
With ``--directory`` the Snakefile's ``configfile: "config/config.yaml"`` and every relative path of
the config (the registry, the experiment files) resolve inside the temporary directory, so each
test copies the repo's ``config/`` there and writes its small config over ``config/config.yaml``.

What is checked (expected job counts are derived from the small config by hand, not from the
workflow's output):

- the repo's own workflow lints clean;
- a partial run (one run file) followed by the full run resumes: nothing of the partial run reruns;
- the full run writes the tables, the report, one log per job mirroring its output, valid runs;
  then nothing is left to do;
- grid cells are retrieved and evaluated chunk by chunk (one job per chunk of a model's points,
  ``retrieval.chunk_size``, writing the chunk's evaluations and no run): changing one grid value
  reruns the one chunk holding it, the table, the report; adding a point to a grid split into
  several chunks reruns only the chunk it falls into; any cell's run is one target away and
  evaluates to the chunk's values; changing the measures reruns the chunks but not the index;
  changing the analyzer rebuilds the index and everything after it but never the document
  shards, topics or qrels;
- a bad config stops ``snakemake -n`` (and ``irgrid.config.load_config``) naming the offending key;
- a malformed qrels line stops the run naming the file and line, leaving no qrels behind;
- results are written atomically (``irgrid.io.atomic_path``, ``irgrid retrieve``).

Tests running Snakemake are marked ``slow``; those needing the collections mirror ``mirror`` (they
skip without it). The tests sharing the one full run are kept on one xdist worker
(``make test`` uses ``--dist loadgroup``).
"""

from __future__ import annotations

import copy
import hashlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from common import (  # noqa: F401 (re-exported: modules written before tests/common.py import these from here)
    ANALYZER,
    EXPERIMENT,
    REGISTRY,
    REPO,
    SMALL_EXPERIMENT,
    SNAKEFILE,
    SNAKEMAKE_TIMEOUT,
    assert_ok,
    find_mirror,
    job_outputs,
    job_stats,
    make_workdir,
    small_config,
    snakemake,
    write_yaml,
)

from irgrid.collections import load_registry, resolve_files
from irgrid.collections.sources import ChecksumError
from irgrid.config import cell_hash, experiment_cells, load_config, split_by_hash
from irgrid.errors import ConfigError
from irgrid.io import atomic_path, write_parquet

# The grid above, encoded as the workflow's {params} wildcard (irgrid.grid.encode_point).
BM25_POINTS = ["k1~0.9_b~0.75", "k1~1.2_b~0.75"]
QL_POINTS = ["mu~500", "mu~1000"]
CELLS = [("bm25", p) for p in BM25_POINTS] + [("ql_dirichlet", p) for p in QL_POINTS]
# The four cells (two models, two points each) fit in one chunk (chunk_size defaults to 50), labelled
# "all"; rule chunk's job writes its evaluations, one file with the label in its path.
CHUNK = "chunk"
FIRST_RUN = "results/adi/eval/porter/text/chunk-all.parquet"  # target of the partial run


# --------------------------------------------------------------------------- lint


@pytest.mark.slow
def test_repo_workflow_lints_clean():
    """`snakemake --lint` on the repo's own Snakefile and config/config.yaml finds nothing."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--cores", "1"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=SNAKEMAKE_TIMEOUT)
    assert result.returncode == 0, result.stdout
    assert "Congratulations, your workflow is in a good condition" in result.stdout, result.stdout
    assert "Lints for" not in result.stdout, result.stdout


# --------------------------------------------------------------------------- one full run, shared


@dataclass
class Workflow:
    workdir: Path
    partial: subprocess.CompletedProcess  # the first run: one chunk file only
    full: subprocess.CompletedProcess  # then the default target
    first_run_mtime_ns: int  # FIRST_RUN's mtime after the partial run
    docs_mtime_ns: int


@pytest.fixture(scope="module")
def workflow(tmp_path_factory, mirror) -> Workflow:
    """The small config run once: first one run file (a run stopped midway), then the whole workflow."""
    workdir = make_workdir(tmp_path_factory.mktemp("workflow"), small_config(mirror))
    partial = snakemake(workdir, FIRST_RUN)
    assert_ok(partial)
    first_run_mtime = (workdir / FIRST_RUN).stat().st_mtime_ns
    docs_mtime = (workdir / "results/adi/docs/part-0000.parquet").stat().st_mtime_ns
    # The local profile: --rerun-incomplete and the one-line failure summary, as `make run` uses them.
    full = snakemake(workdir, "--profile", str(REPO / "config" / "profiles" / "local"))
    assert_ok(full)
    return Workflow(workdir, partial, full, first_run_mtime, docs_mtime)


SHARED = [pytest.mark.slow, pytest.mark.mirror, pytest.mark.xdist_group("test_workflow_full_run")]


def shared(test):
    for mark in SHARED:
        test = mark(test)
    return test


@shared
def test_partial_run_then_full_run_does_not_redo_finished_jobs(workflow):
    """The partial run did only what one chunk file needs; the full run added the rest, nothing twice."""
    assert job_stats(workflow.partial.stdout) == {
        "shard_documents": 1, "topics": 1, "build_index": 1, "qrels": 1, CHUNK: 1,
    }
    assert job_outputs(workflow.partial.stdout)[CHUNK] == [FIRST_RUN]
    assert job_stats(workflow.full.stdout) == {"table": 1, "findings": 1, "report": 1, "all": 1}
    rerun = [path for paths in job_outputs(workflow.full.stdout).values() for path in paths]
    assert FIRST_RUN not in rerun
    assert "results/adi/docs" not in rerun
    assert (workflow.workdir / FIRST_RUN).stat().st_mtime_ns == workflow.first_run_mtime_ns
    assert (workflow.workdir / "results/adi/docs/part-0000.parquet").stat().st_mtime_ns == workflow.docs_mtime_ns


@shared
def test_full_run_writes_tables_and_report(workflow):
    results = workflow.workdir / "results"
    for suffix in ("md", "tex", "html", "csv"):
        table = results / "tables" / EXPERIMENT / f"table.{suffix}"
        assert table.is_file() and table.stat().st_size > 0, table
    markdown = (results / "tables" / EXPERIMENT / "table.md").read_text(encoding="utf-8")
    assert re.search(r"^\| adi \|", markdown, re.MULTILINE), markdown
    csv = (results / "tables" / EXPERIMENT / "table.csv").read_text(encoding="utf-8").splitlines()
    # One row per model (its best point) and table measure.
    assert len(csv) == 1 + 2 * 2, csv
    assert {line.split(",")[2] for line in csv[1:]} == {"bm25", "ql_dirichlet"}
    report = (results / "report.html").read_text(encoding="utf-8")
    assert "<html" in report.lower() and EXPERIMENT in report
    shards = sorted(path.name for path in (results / "adi" / "docs").glob("part-*.parquet"))
    assert shards == ["part-0000.parquet", "part-0001.parquet"]
    assert sum(pq.read_metadata(results / "adi" / "docs" / name).num_rows for name in shards) == 82


@shared
def test_one_log_per_job_mirroring_its_output(workflow):
    """logs/ holds exactly one file per job: its output path with results/ -> logs/ and .log.

    A chunk job's log is named after the chunk, in its cells' directory.
    """
    outputs = [
        "results/adi/docs",
        "results/adi/topics/text.parquet",
        "results/adi/qrels.parquet",
        "results/adi/index/porter",
        "results/adi/eval/porter/text/chunk-all",
        f"results/tables/{EXPERIMENT}/table",  # the multiext table.{md,tex,html,csv}
        f"results/tables/{EXPERIMENT}/findings",  # findings.*, per_query.* and its figure
        "results/report.html",
    ]
    expected = set()
    for output in outputs:
        stem = re.sub(r"\.(parquet|html)$", "", output.removeprefix("results/"))
        expected.add(f"logs/{stem}.log")
    logs = workflow.workdir / "logs"
    # beside a log, the warnings its job logged, if any (irgrid.jobs.job_warnings): not a log of its own
    found = {str(path.relative_to(workflow.workdir)) for path in logs.rglob("*")
             if path.is_file() and not path.name.endswith(".warnings.jsonl")}
    assert found == expected
    chunk_log = (logs / "adi/eval/porter/text/chunk-all.log").read_text(encoding="utf-8")
    assert "scored and evaluated 4 cells" in chunk_log, chunk_log


@shared
def test_the_chunk_keeps_every_cells_evaluation_and_no_run(workflow):
    evaluations = pq.read_table(workflow.workdir / FIRST_RUN).to_pandas()
    assert evaluations.columns.tolist() == ["model", "params", "qid", "measure", "value"]
    assert sorted(evaluations.groupby(["model", "params"]).groups) == sorted(CELLS)
    # the config's measures for every judged query; the tie scan's rows (irgrid.evaluation.ties) only where a tie
    # touches a relevant document
    every_query = evaluations.groupby("measure")["qid"].nunique()
    assert every_query["AP"] == every_query["P@10"] == evaluations["qid"].nunique()
    assert set(evaluations["measure"]) - {"AP", "P@10"} <= {"first_tied_relevant_rank", "E[AP]", "E[P@10]"}
    assert not (workflow.workdir / "results/adi/runs").exists()


@shared
def test_a_cells_run_on_demand_follows_the_run_contract_and_evaluates_to_the_chunks_values(workflow, tmp_path):
    """Runs are not kept: asked for by its path, a cell's run is made again (rule retrieve), and its
    evaluation (rule evaluate) is the chunk's rows of that cell, value for value."""
    targets = [f"results/adi/{kind}/porter/text/{model}/{params}.parquet" for kind in ("runs", "eval")
               for model, params in CELLS]
    assert_ok(snakemake(workflow.workdir, *targets))
    chunk = pq.read_table(workflow.workdir / FIRST_RUN).to_pandas()
    for model, params in CELLS:
        path = workflow.workdir / f"results/adi/runs/porter/text/{model}/{params}.parquet"
        table = pq.read_table(path)
        assert table.schema.names == ["qid", "docno", "rank", "score"], path
        assert table.schema.field("rank").type == pa.int32()
        assert table.schema.field("score").type == pa.float64()
        run = table.to_pandas()
        assert run["qid"].nunique() == 35, path
        assert len(run) > 0
        for _, ranking in run.groupby("qid", sort=False):
            assert list(ranking["rank"]) == list(range(1, len(ranking) + 1))
            assert ranking["score"].is_monotonic_decreasing
        evaluation = pq.read_table(workflow.workdir / f"results/adi/eval/porter/text/{model}/{params}.parquet")
        kept = chunk[(chunk["model"] == model) & (chunk["params"] == params)]
        assert evaluation.to_pandas().to_dict("list") == kept[["qid", "measure", "value"]].to_dict("list")
    for path in targets:  # the one-cell files go again: the other tests see the workflow's own results
        (workflow.workdir / path).unlink()
        (workflow.workdir / path).with_suffix(".provenance.json").unlink(missing_ok=True)


@shared
def test_nothing_to_do_after_full_run(workflow):
    result = snakemake(workflow.workdir, "-n")
    assert_ok(result)
    assert "Nothing to be done" in result.stdout, result.stdout


class edited:
    """Context manager: replace a file's text for the duration, then restore the original bytes."""

    def __init__(self, path: Path, old: str, new: str):
        self.path, self.old, self.new = path, old, new

    def __enter__(self):
        self.original = self.path.read_bytes()
        text = self.original.decode("utf-8")
        assert text.count(self.old) == 1, f"{self.old!r} not exactly once in {self.path}:\n{text}"
        self.path.write_text(text.replace(self.old, self.new), encoding="utf-8")

    def __exit__(self, *exc):
        self.path.write_bytes(self.original)


@shared
def test_changing_one_grid_value_reruns_only_its_chunk(workflow):
    """mu 1000 -> 1500: the chunk holding the point reruns (retrieval and evaluation), and nothing upstream.

    Here that chunk is all four cells (one chunk fits them), so BM25's two reruns too: a chunk reruns
    whole, and chunks mix models (irgrid.config.Chunk). Which cells, with several chunks, is
    test_adding_a_point_reruns_only_the_chunk_it_falls_into's subject.
    """
    experiment = workflow.workdir / "config" / "experiments" / f"{EXPERIMENT}.yaml"
    with edited(experiment, "- 1000\n", "- 1500\n"):
        result = snakemake(workflow.workdir, "-n")
    assert_ok(result)
    assert job_stats(result.stdout) == {CHUNK: 1, "table": 1, "findings": 1, "report": 1, "all": 1}
    assert job_outputs(result.stdout)[CHUNK] == [FIRST_RUN]


@shared
def test_a_cell_outside_the_config_is_one_target_away(workflow):
    """A point of no grid is made by the one-cell rules, as is a config cell's run (runs are not kept)."""
    off_grid = "results/adi/eval/porter/text/bm25/k1~2_b~0.75.parquet"
    result = snakemake(workflow.workdir, "-n", off_grid)
    assert_ok(result)
    assert job_stats(result.stdout) == {"retrieve": 1, "evaluate": 1}
    assert job_outputs(result.stdout)["retrieve"] == ["results/adi/runs/porter/text/bm25/k1~2_b~0.75.parquet"]
    trec = snakemake(workflow.workdir, "-n", f"results/adi/runs/porter/text/bm25/{BM25_POINTS[0]}.trec")
    assert_ok(trec)
    assert job_stats(trec.stdout) == {"retrieve": 1, "trec_run": 1}


@shared
def test_changing_the_measures_reruns_the_chunks_not_the_index(workflow):
    """A chunk's job retrieves and evaluates (no run is kept to evaluate again): new measures rerun it."""
    config = workflow.workdir / "config" / "config.yaml"
    with edited(config, "- P@10\n", "- P@10\n- P@5\n"):
        result = snakemake(workflow.workdir, "-n")
    assert_ok(result)
    assert job_stats(result.stdout) == {CHUNK: 1, "table": 1, "findings": 1, "report": 1, "all": 1}


@shared
def test_changing_the_analyzer_rebuilds_the_index_but_not_the_shards(workflow):
    config = workflow.workdir / "config" / "config.yaml"
    with edited(config, "stemmer: porter", "stemmer: krovetz"):
        result = snakemake(workflow.workdir, "-n")
    assert_ok(result)
    assert job_stats(result.stdout) == {
        "build_index": 1, CHUNK: 1,
        "table": 1, "findings": 1, "report": 1, "all": 1,
    }


# --------------------------------------------------------------------------- a grid of several chunks

CHUNK_SIZE = 3
MUS = [100, 250, 500, 750, 1000, 1500, 2000, 3000, 5000]  # 9 points: at least 3 chunks of at most 3
NEW_MU = 4000
CHUNKED_EXPERIMENT = {
    "title": "QL on ADI in chunks (test)",
    "collections": ["adi"],
    "analyzer": "porter",
    "models": {"ql_dirichlet": {"family": "ql_dirichlet", "grid": {"mu": MUS}}},
    "baseline": "ql_dirichlet",
    "select_by": "AP",
    "table_measures": ["AP"],
}


@dataclass
class ChunkedWorkflow:
    workdir: Path
    full: subprocess.CompletedProcess


@pytest.fixture(scope="module")
def chunked_workflow(tmp_path_factory, mirror) -> ChunkedWorkflow:
    config = small_config(mirror)
    config["retrieval"] = {"chunk_size": CHUNK_SIZE}
    workdir = make_workdir(tmp_path_factory.mktemp("chunked"), config, CHUNKED_EXPERIMENT)
    full = snakemake(workdir)
    assert_ok(full)
    return ChunkedWorkflow(workdir, full)


def chunk_labels(outputs: dict[str, list[str]]) -> list[str]:
    """The labels of the chunk files the chunk jobs of a Snakemake log write (results/.../chunk-{label}.parquet)."""
    return [re.fullmatch(r"results/adi/eval/porter/text/chunk-(.+)\.parquet", path).group(1)
            for path in outputs.get(CHUNK, [])]


def chunk_cells(workdir: Path, labels: list[str]) -> set[str]:
    """The model/params keys the chunks of ``labels`` hold (read from their files)."""
    cells = set()
    for label in labels:
        table = pq.read_table(workdir / f"results/adi/eval/porter/text/chunk-{label}.parquet", columns=["model", "params"])
        cells |= {f"{model}/{params}" for model, params in zip(*(table.column(n).to_pylist() for n in ("model", "params")))}
    return cells


CHUNKED = [pytest.mark.slow, pytest.mark.mirror, pytest.mark.xdist_group("test_workflow_chunked")]


def chunked(test):
    for mark in CHUNKED:
        test = mark(test)
    return test


@chunked
def test_a_grid_larger_than_chunk_size_runs_as_several_chunk_jobs(chunked_workflow):
    stats = job_stats(chunked_workflow.full.stdout)
    labels = chunk_labels(job_outputs(chunked_workflow.full.stdout))
    assert stats[CHUNK] == len(labels) >= 3 and len(set(labels)) == len(labels)
    assert "retrieve" not in stats and "evaluate" not in stats  # no one-cell jobs
    workdir = chunked_workflow.workdir
    sizes = [len(chunk_cells(workdir, [label])) for label in labels]
    assert all(1 <= size <= CHUNK_SIZE for size in sizes) and sum(sizes) == len(MUS)
    assert chunk_cells(workdir, labels) == {f"ql_dirichlet/mu~{mu}" for mu in MUS}
    logs = workdir / "logs" / "adi" / "eval" / "porter" / "text"
    assert len(list(logs.glob("chunk-*.log"))) == len(labels)


@chunked
def test_adding_a_point_reruns_only_the_chunk_it_falls_into(chunked_workflow):
    experiment = chunked_workflow.workdir / "config" / "experiments" / f"{EXPERIMENT}.yaml"
    grown = copy.deepcopy(CHUNKED_EXPERIMENT)
    grown["models"]["ql_dirichlet"]["grid"]["mu"].append(NEW_MU)
    with edited(experiment, experiment.read_text(encoding="utf-8"), yaml.safe_dump(grown, sort_keys=False)):
        result = snakemake(chunked_workflow.workdir, "-n")
    assert_ok(result)
    stats = job_stats(result.stdout)
    labels = chunk_labels(job_outputs(result.stdout))
    assert stats.pop(CHUNK) == len(labels)
    assert stats == {"table": 1, "findings": 1, "report": 1, "all": 1}
    # Exactly the chunks that irgrid.config.split_by_hash changes, nothing else.
    # A chunk's cells are split by the digest of model, then point (ChunkCell.key, cell_hash).
    before = split_by_hash([f"ql_dirichlet/mu~{mu}" for mu in MUS], CHUNK_SIZE, digest=cell_hash)
    after = split_by_hash([f"ql_dirichlet/mu~{mu}" for mu in [*MUS, NEW_MU]], CHUNK_SIZE, digest=cell_hash)
    changed = [(label, keys) for label, keys in after if (label, keys) not in before]
    # By hand: the new point joins at most one chunk of at most CHUNK_SIZE points; that chunk reruns
    # (as two or more jobs if it now has to split); the other chunks' cells do not.
    assert f"ql_dirichlet/mu~{NEW_MU}" in {key for _, keys in changed for key in keys}
    assert sum(len(keys) for _, keys in changed) <= CHUNK_SIZE + 1 < len(MUS) + 1
    assert sorted(labels) == sorted(label for label, _ in changed)


@shared
def test_retrieve_cli_writes_its_run_atomically(workflow, tmp_path, monkeypatch, capsys):
    """`irgrid retrieve` gives the workflow's run; a write failing midway leaves no file behind."""
    from irgrid import cli

    index = workflow.workdir / "results/adi/index/porter"
    topics = workflow.workdir / "results/adi/topics/text.parquet"
    out = tmp_path / "runs" / "run.parquet"
    args = ["retrieve", "--index", str(index), "--topics", str(topics), "--family", "bm25",
            "--params", BM25_POINTS[0], "--out", str(out)]
    assert cli.main(args) == 0
    # the run the chunk scored: evaluated alone, it gives the chunk's rows of that cell
    evaluation = tmp_path / "eval.parquet"
    assert cli.main(["evaluate", "--run", str(out), "--qrels", str(workflow.workdir / "results/adi/qrels.parquet"),
                     "--topics", str(topics), "--measures", '["AP", "P@10"]', "--out", str(evaluation)]) == 0
    chunk = pq.read_table(workflow.workdir / FIRST_RUN).to_pandas()
    kept = chunk[(chunk["model"] == "bm25") & (chunk["params"] == BM25_POINTS[0])]
    assert pq.read_table(evaluation).to_pandas().to_dict("list") == kept[["qid", "measure", "value"]].to_dict("list")
    out.unlink()

    real_write_table = pq.write_table

    def write_half_then_fail(table, where, *rest, **kwargs):
        real_write_table(table, where, *rest, **kwargs)
        size = Path(where).stat().st_size
        with open(where, "r+b") as handle:
            handle.truncate(size // 2)
        raise OSError(28, "No space left on device (simulated)")

    monkeypatch.setattr(pq, "write_table", write_half_then_fail)
    # The CLI reports the failed write in one line naming the output (irgrid.cli.describe_os_error).
    assert cli.main(args) == 1
    assert "No space left on device (simulated)" in capsys.readouterr().err
    assert list(out.parent.iterdir()) == []


# --------------------------------------------------------------------------- config validation

# (case id, change to the small config, change to its experiment, texts load_config's message must
# contain, texts Snakemake's output must contain). The workflow validates its config with the package's
# irgrid.config.validate (one line, not a schema dump), then load_config runs (ConfigError).
BAD_CONFIGS = [
    ("unknown-top-level-key", {"num_shard": 3}, {},
     ["unknown top-level key 'num_shard'", "did you mean 'num_shards'"],
     ["unknown top-level key 'num_shard'", "did you mean 'num_shards'"]),
    ("wrong-type", {"num_shards": "many"}, {},
     ["at 'num_shards'", "'many' is not of type 'integer'"],
     ["'many' is not of type 'integer'", "at 'num_shards'"]),
    ("unknown-model-parameter", {},
     {"models": {**SMALL_EXPERIMENT["models"], "bm25": {"family": "bm25", "grid": {"k3": [1]}}}},
     ["model 'bm25'", "no parameter k3"], ["model 'bm25'", "no parameter k3"]),
    ("unknown-collection", {}, {"collections": ["adi", "nosuchcollection"]},
     ["unknown collection 'nosuchcollection'"], ["unknown collection 'nosuchcollection'"]),
    ("unknown-measure", {"measures": ["AP", "P@10", "NoSuchMeasure@10"]}, {},
     ["unknown evaluation measure 'NoSuchMeasure@10'"], ["unknown evaluation measure 'NoSuchMeasure@10'"]),
    ("table-measure-not-evaluated", {}, {"table_measures": ["AP", "nDCG@10"]},
     ["measure 'nDCG@10' is not among the evaluated measures"],
     ["measure 'nDCG@10' is not among the evaluated measures"]),
]
CASE_IDS = [case[0] for case in BAD_CONFIGS]


def bad_config(config_change: dict, experiment_change: dict) -> tuple[dict, dict]:
    config = small_config(None)
    config.update(config_change)
    experiment = copy.deepcopy(SMALL_EXPERIMENT)
    experiment.update(copy.deepcopy(experiment_change))
    return config, experiment


@pytest.mark.parametrize("case, config_change, experiment_change, named, _", BAD_CONFIGS, ids=CASE_IDS)
def test_load_config_rejects(case, config_change, experiment_change, named, _):
    config, experiment = bad_config(config_change, experiment_change)
    config["registry"] = str(REGISTRY)
    config["experiments"] = {EXPERIMENT: experiment}
    with pytest.raises(ConfigError) as error:
        load_config(config)
    for text in named:
        assert text in str(error.value)


def test_load_config_accepts_the_small_config():
    config = small_config(None)
    config["registry"] = str(REGISTRY)
    config["experiments"] = {EXPERIMENT: copy.deepcopy(SMALL_EXPERIMENT)}
    loaded = load_config(config)
    cells = [(cell.model, cell.params) for cell in experiment_cells(loaded, EXPERIMENT)]
    assert cells == CELLS


@pytest.mark.slow
@pytest.mark.parametrize("case, config_change, experiment_change, _, named", BAD_CONFIGS, ids=CASE_IDS)
def test_snakemake_dry_run_rejects(tmp_path, case, config_change, experiment_change, _, named):
    config, experiment = bad_config(config_change, experiment_change)
    workdir = make_workdir(tmp_path, config, experiment)
    result = snakemake(workdir, "-n")
    assert result.returncode != 0, result.stdout
    for text in named:
        assert text in result.stdout, result.stdout
    assert not (workdir / "results").exists()


# --------------------------------------------------------------------------- malformed input


def corrupted_adi_mirror(root: Path, mirror: Path, line: int) -> Path:
    """A copy of the ADI mirror whose ADI.REL line ``line`` has only two columns."""
    target = root / "adi"
    target.mkdir(parents=True)
    for path in (mirror / "adi").iterdir():
        shutil.copy2(path, target / path.name)
    lines = (target / "ADI.REL").read_bytes().split(b"\n")
    ending = b"\r" if lines[line - 1].endswith(b"\r") else b""
    lines[line - 1] = b" ".join(lines[line - 1].split()[:2]) + ending
    (target / "ADI.REL").write_bytes(b"\n".join(lines))
    return target / "ADI.REL"


@pytest.mark.mirror
def test_corrupted_mirror_file_fails_its_checksum(tmp_path, mirror):
    """Mirror files are checked against the registry's sha256, so the corruption below needs a new checksum."""
    corrupted = corrupted_adi_mirror(tmp_path / "mirror", mirror, line=5)
    with pytest.raises(ChecksumError, match="ADI.REL"):
        resolve_files(load_registry(REGISTRY)["adi"], mirror=tmp_path / "mirror", download=False)
    assert corrupted.exists()


@pytest.mark.slow
@pytest.mark.mirror
def test_malformed_qrels_line_stops_the_run(tmp_path, mirror):
    corrupted = corrupted_adi_mirror(tmp_path / "mirror", mirror, line=5)
    workdir = make_workdir(tmp_path / "workflow", small_config(tmp_path / "mirror"))
    # The registry copy records the corrupted file's checksum: verification stays on and passes,
    # so what fails is the qrels reader.
    registry_path = workdir / "config" / "collections.yaml"
    registry = yaml.safe_load(registry_path.read_text(encoding="utf-8"))
    registry["adi"]["sha256"]["ADI.REL"] = hashlib.sha256(corrupted.read_bytes()).hexdigest()
    write_yaml(registry, registry_path)

    result = snakemake(workdir, "--show-failed-logs")
    assert result.returncode != 0, result.stdout
    log = (workdir / "logs" / "adi" / "qrels.log").read_text(encoding="utf-8")
    for text in (log, result.stdout):
        assert "ADI.REL:5" in text and "expected" in text, text
    assert "'2   71'" in log or "'2 71'" in log, log  # what the line held
    assert not (workdir / "results" / "adi" / "qrels.parquet").exists()
    leftovers = list((workdir / "results" / "adi").glob(".qrels*")) if (workdir / "results/adi").exists() else []
    assert leftovers == []
    assert not (workdir / "results" / "tables").exists()
    assert not (workdir / "results" / "report.html").exists()


# --------------------------------------------------------------------------- atomic writes


def test_atomic_path_leaves_nothing_when_the_body_raises(tmp_path):
    target = tmp_path / "out" / "run.parquet"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"half a parquet file")
            raise RuntimeError("killed")
    assert list(target.parent.iterdir()) == []


def test_atomic_path_keeps_the_old_file_when_the_body_raises(tmp_path):
    target = tmp_path / "run.parquet"
    write_parquet(pa.table({"qid": ["1"]}), target)
    before = target.read_bytes()
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"garbage")
            raise RuntimeError("killed")
    assert target.read_bytes() == before
    assert [path.name for path in tmp_path.iterdir()] == ["run.parquet"]


def test_atomic_path_renames_into_place_on_success(tmp_path):
    target = tmp_path / "run.parquet"
    write_parquet(pa.table({"qid": ["1", "2"]}), target)
    assert pq.read_table(target).column("qid").to_pylist() == ["1", "2"]
    assert [path.name for path in tmp_path.iterdir()] == ["run.parquet"]


def test_measure_names_are_normalised_to_the_ir_measures_spelling():
    # Evaluation files store ir-measures' spelling ('nDCG@10'); a config saying 'NDCG@10' must
    # select the same measure, not an empty column.
    config = small_config(None)
    config["registry"] = str(REGISTRY)
    config["measures"] = ["AP", "NDCG@10"]
    experiment = copy.deepcopy(SMALL_EXPERIMENT)
    experiment["table_measures"] = ["AP", "NDCG@10"]
    config["experiments"] = {EXPERIMENT: experiment}
    loaded = load_config(config)
    assert loaded["measures"] == ["AP", "nDCG@10"]
    assert loaded["_experiments"][EXPERIMENT]["table_measures"] == ["AP", "nDCG@10"]
