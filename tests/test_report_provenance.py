"""Provenance: run files carrying what made them, configuration digests, Snakemake benchmarks, and a
report that renders (saying what is missing) whatever the run left out."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from common import REPO

from irgrid.jobs import provenance
from irgrid.jobs.provenance import cell_digest, read_benchmarks, read_run_provenance, time_by_stage, write_run_with_provenance
from irgrid.report.html import render_report

RUN = pa.table({"qid": ["1", "1"], "docno": ["d1", "d2"], "rank": pa.array([1, 2], pa.int32()),
                "score": [2.5, 1.0]})
MADE_BY = {"family": "bm25", "params": "k1~0.9_b~0.4", "depth": 1000, "irgrid_version": "0.1.0"}


def test_a_run_file_carries_its_provenance_and_its_bytes_do_not_depend_on_the_commit(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "git_commit", lambda repo=None: "a" * 40)
    write_run_with_provenance(RUN, tmp_path / "one.parquet", MADE_BY)
    monkeypatch.setattr(provenance, "git_commit", lambda repo=None: "b" * 40)
    write_run_with_provenance(RUN, tmp_path / "two.parquet", MADE_BY)
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "two.parquet").read_bytes()
    metadata = json.loads(pq.read_schema(tmp_path / "one.parquet").metadata[b"irgrid.provenance"])
    assert metadata == MADE_BY
    assert json.loads((tmp_path / "two.provenance.json").read_text())["git_commit"] == "b" * 40
    # the run contract holds: the same columns and types as any run
    assert pq.read_table(tmp_path / "one.parquet").cast(RUN.schema).equals(RUN)
    # copied elsewhere without its sidecar, the file still says what made it
    copy = tmp_path / "elsewhere" / "copy.parquet"
    copy.parent.mkdir()
    copy.write_bytes((tmp_path / "one.parquet").read_bytes())
    assert read_run_provenance(copy) == MADE_BY
    assert read_run_provenance(tmp_path / "one.parquet")["git_commit"] == "a" * 40
    assert read_run_provenance(tmp_path / "absent.parquet") == {}


def test_git_commit_of_this_checkout():
    commit = provenance.git_commit()
    assert commit is None or len(commit.removesuffix("+dirty")) == 40


def test_cell_digest_changes_with_every_part_and_not_with_key_order():
    analyzer = {"stemmer": "porter", "stopwords": "none"}
    entry = {"format": "smart", "files": {"docs": "adi.all"}}
    base = cell_digest("bm25", "k1~0.9", analyzer, entry, "text", 1000, ["AP"])
    assert base == cell_digest("bm25", "k1~0.9", dict(reversed(analyzer.items())), entry, "text", 1000, ["AP"])
    changed = [cell_digest("ql_dirichlet", "k1~0.9", analyzer, entry, "text", 1000, ["AP"]),
               cell_digest("bm25", "k1~1.2", analyzer, entry, "text", 1000, ["AP"]),
               cell_digest("bm25", "k1~0.9", {**analyzer, "stopwords": "smart"}, entry, "text", 1000, ["AP"]),
               cell_digest("bm25", "k1~0.9", analyzer, {**entry, "format": "trec"}, "text", 1000, ["AP"]),
               cell_digest("bm25", "k1~0.9", analyzer, entry, "title", 1000, ["AP"]),
               cell_digest("bm25", "k1~0.9", analyzer, entry, "text", 100, ["AP"]),
               cell_digest("bm25", "k1~0.9", analyzer, entry, "text", 1000, ["AP", "P@10"])]
    assert len({base, *changed}) == 8


# Snakemake's benchmark file layout (snakemake.benchmark): a header and one line per repeat
BENCHMARK = ("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
             "{s}\t0:00:01\t{rss}\t500.0\t100.0\t110.0\t0.0\t1.0\t50.0\t{cpu}\n")


def test_benchmarks_summed_by_stage(tmp_path):
    files = {}
    for i, (stage, seconds, rss) in enumerate([("retrieve", 2.5, 300.0), ("retrieve", 1.5, 250.0),
                                                ("evaluate", 5.0, 200.0)]):
        path = tmp_path / f"{i}.tsv"
        path.write_text(BENCHMARK.format(s=seconds, rss=rss, cpu=seconds / 2))
        files[str(path)] = {"stage": stage, "job": f"job{i}", "collection": "adi"}
    files[str(tmp_path / "not-made.tsv")] = {"stage": "index", "job": "never", "collection": "adi"}
    benchmarks = read_benchmarks(files)
    assert benchmarks["job"].tolist() == ["job0", "job1", "job2"]
    stages = time_by_stage(benchmarks).set_index("stage")
    assert stages.loc["retrieve", "seconds"] == pytest.approx(4.0) and stages.loc["retrieve", "jobs"] == 2
    assert stages.loc["retrieve", "max_rss_mb"] == 300.0 and stages.loc["retrieve", "cpu_seconds"] == pytest.approx(2.0)
    assert stages.index.tolist() == ["evaluate", "retrieve"]  # most time first


def experiment_manifest(tmp_path: Path, models=("bm25", "ql")) -> dict:
    return {
        "source": "config/experiments/x.yaml", "title": "X", "description": "", "paper": None, "claims": [],
        "collections": ["adi"], "baseline": models[-1], "select_by": "AP", "table_measures": ["AP"], "test": "ttest",
        "alternative": "two-sided", "correction": "holm", "alpha": 0.05, "folds": 5, "tables": ["best"],
        "querysets": {"adi": ["text"]}, "analyzers": {"porter": {"stemmer": "porter"}},
        "models": {m: {"family": m, "label": m, "grid": {}} for m in models},
        "table_files": [{"selection": "best", "csv": str(tmp_path / "table.csv"), "html": str(tmp_path / "table.html")}],
        "extra_tables": [], "figures": [str(tmp_path / "by_method.svg")], "findings": str(tmp_path / "findings.csv"),
        "per_query": str(tmp_path / "per_query.html"), "per_query_figure": str(tmp_path / "per_query.svg"),
        "cells": [],
    }


def test_a_report_of_a_run_that_made_nothing_says_what_is_missing(tmp_path):
    page = render_report({"experiments": {"x": experiment_manifest(tmp_path)}}, tmp_path)
    # the table (fragment and cells), findings, per-query table and figure, by_method
    assert page.count("Not made in this run") == 6
    assert "No job benchmarks recorded" in page and "<a href='#x-x-findings'>" in page and "id='x-x-findings'" in page


def test_a_report_row_without_judged_queries_and_an_experiment_of_one_model(tmp_path):
    from irgrid.report.findings import COLUMNS

    pd.DataFrame([{"selection": "best", "claim": "a > b on AP", "text": "", "collection": "adi", "queryset": "text",
                   "better": "a", "than": "b", "measure": "AP", "num_queries": 0, "test": "ttest",
                   "alternative": "two-sided", "correction": "holm", "verdict": "no judged queries"}],
                 columns=COLUMNS).to_csv(tmp_path / "findings.csv", index=False)
    page = render_report({"experiments": {"x": experiment_manifest(tmp_path, models=("ql",))}}, tmp_path)
    assert "<td class='verdict-no-judged-queries'>no judged queries</td>" in page
    pd.DataFrame(columns=COLUMNS).to_csv(tmp_path / "findings.csv", index=False)
    assert "states no claims" in render_report({"experiments": {"x": experiment_manifest(tmp_path)}}, tmp_path)


def test_a_failed_write_leaves_no_sidecar_of_an_older_run(tmp_path, monkeypatch):
    write_run_with_provenance(RUN, tmp_path / "run.parquet", MADE_BY)
    (tmp_path / "run.parquet").unlink()

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device (simulated)")

    monkeypatch.setattr(pq, "write_table", fail)
    with pytest.raises(OSError, match="simulated"):
        write_run_with_provenance(RUN, tmp_path / "run.parquet", MADE_BY)
    assert list(tmp_path.iterdir()) == []


def _workflow_config(experiments, **settings):
    """Snakemake's config as common.smk hands it on: the repo's config.yaml, validated, some experiments."""
    from irgrid.config import load_yaml, validate

    config = load_yaml(REPO / "config" / "config.yaml")
    config["registry"] = str(REPO / "config" / "collections.yaml")
    config["experiments"] = {name: str(REPO / "config" / "experiments" / f"{name}.yaml") for name in experiments}
    config.update(settings)
    return validate(config, "config.schema.yaml", "config")


def test_the_report_job_makes_the_manifest_planning_would_have_made():
    # The report rule plans with report_input_files and manifest_digest; its job makes the manifest from
    # the config (workflow_manifest). Both must agree with the manifest made from the planned chunks.
    from irgrid.config import load_config, retrieval_chunks, select_subset
    from irgrid.report.manifest import (
        manifest_digest,
        manifest_inputs,
        manifest_plan,
        report_input_files,
        report_manifest,
        workflow_manifest,
    )

    config = _workflow_config(["baselines", "gjm"], experiments_only=None, collections_only=["adi", "cacm"])
    whole = load_config(config)
    chosen = select_subset(whole, None, ["adi", "cacm"])
    chunks = retrieval_chunks(whole)
    expected = report_manifest(chosen, chunks, {"adi": []})
    # through JSON, as the rule hands it to `irgrid report --plan -`
    plan = json.loads(manifest_plan(config, "config", {"adi": []}))
    assert workflow_manifest(plan["config"], plan["source"], plan["raw_files"]) == expected
    evaluations = {cell["evaluation"] for experiment in expected["experiments"].values() for cell in experiment["cells"]}
    inputs = report_input_files(chosen, sorted(evaluations))
    assert len(inputs) == len(set(inputs))
    assert set(inputs) == set(manifest_inputs(expected))
    # the digest follows a grid value and the raw files' rows, not settings the manifest does not read
    digest = manifest_digest(chosen, chunks, {"adi": []})
    assert manifest_digest(chosen, chunks, {"adi": []}) == digest
    assert manifest_digest(chosen, chunks, {"adi": [{"role": "docs", "file": "x", "sha256": "0"}]}) != digest
    moved = load_config({**config, "mirror": "/elsewhere", "dask": {**config["dask"], "scheduler": "tcp://host:8786"}})
    assert manifest_digest(select_subset(moved, None, ["adi", "cacm"]), retrieval_chunks(moved), {"adi": []}) == digest
    edited = load_config(config)
    edited["_experiments"]["baselines"]["models"]["bm25"]["grid"]["b"][0] += 0.001
    assert manifest_digest(select_subset(edited, None, ["adi", "cacm"]), retrieval_chunks(edited), {"adi": []}) != digest


def test_the_manifest_lists_every_cell_with_its_digest_and_jobs():
    from irgrid.collections import load_registry
    from irgrid.config import load_config, load_yaml, retrieval_chunks
    from irgrid.report.manifest import manifest_inputs, report_manifest

    repo = REPO
    config = load_yaml(repo / "config" / "config.yaml")
    config["registry"] = str(repo / "config" / "collections.yaml")
    config["experiments"] = {"baselines": str(repo / "config" / "experiments" / "baselines.yaml")}
    loaded = load_config(config)
    manifest = report_manifest(loaded, retrieval_chunks(loaded))
    cells = manifest["experiments"]["baselines"]["cells"]
    # on each of the six collections' one query set: 40 BM25 points, 12 QL points, and each of them
    # with 3 x 2 x 3 RM3 points (the experiment file's grids)
    assert len(cells) == 6 * (40 + 12 + 40 * 18 + 12 * 18)
    assert len({cell["digest"] for cell in cells}) == len(cells)
    # the manifest's digests are cell_digest's, its parts serialised once per collection and query set
    entry = load_registry(repo / "config" / "collections.yaml")["adi"].to_dict()
    some = next(cell for cell in cells if cell["collection"] == "adi" and cell["model"] == "bm25")
    assert some["digest"] == cell_digest("bm25", some["params"], loaded["analyzers"]["porter"], entry, some["queryset"],
                                         loaded["retrieval"]["depth"], loaded["measures"])
    adi = next(cell for cell in cells if cell["collection"] == "adi" and cell["model"] == "ql_dirichlet")
    # the benchmark of the chunk that holds the cell (its label: the hash prefix its cells share)
    [label] = [chunk.label for chunk in retrieval_chunks(loaded)
               if (chunk.collection, chunk.analyzer, chunk.queryset) == ("adi", "porter", "text")
               and any((c.model, c.params) == ("ql_dirichlet", adi["params"]) for c in chunk.cells)]
    assert adi["chunk_benchmark"] == f"results/benchmarks/adi/eval/porter/text/chunk-{label}.tsv"
    assert adi["evaluation"] == f"results/adi/eval/porter/text/chunk-{label}.parquet"
    inputs = manifest_inputs(manifest)
    for path in ("results/tables/baselines/table.csv", "results/tables/baselines/findings.csv",
                 "results/figures/baselines/per_query.svg", "results/adi/index/porter",
                 "results/benchmarks/adi/index/porter.tsv", adi["chunk_benchmark"]):
        assert path in inputs, path
    assert manifest["collections"]["adi"]["sha256"]  # the registry's checksums of the raw files
