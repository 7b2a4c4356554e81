"""Subset runs: ``--config experiments_only=[...] collections_only=[...]``.

The workflow targets only the chosen experiments on the chosen collections, while the jobs it
plans are the very jobs (names, outputs) a full run plans for those files: a subset run's results
are a full run's, and a later full run redoes none of them. Checked on Snakemake dry runs of a
two-experiment, two-collection config (no collection files needed), and on
``irgrid.config.select_subset`` directly. Expected targets are written out by hand from the config.
"""

from __future__ import annotations

import copy

import pytest
from common import (
    REGISTRY,
    SMALL_EXPERIMENT,
    assert_ok,
    job_outputs,
    make_workdir,
    small_config,
    snakemake,
    write_yaml,
)

from irgrid.config import load_config, select_subset
from irgrid.errors import ConfigError

# "small" on adi and cranfield; "wide" on adi only, with a bm25 point of its own (k1 2.0), so
# the adi chunk of the full run holds three bm25 points, of which "small" needs two.
SMALL = {**copy.deepcopy(SMALL_EXPERIMENT), "collections": ["adi", "cranfield"]}
WIDE = {**copy.deepcopy(SMALL_EXPERIMENT), "title": "BM25 on ADI, wider grid", "collections": ["adi"]}
WIDE["models"]["bm25"]["grid"] = {"k1": [1.2, 2.0], "b": 0.75}
WIDE_ONLY_CELL = '["bm25", "bm25", "k1~2_b~0.75"]'  # as the chunk job's cells list it (Chunk.cells_json)
ADI_CHUNK = "results/adi/eval/porter/text/chunk-all.parquet"


def two_experiment_config() -> dict:
    config = small_config(None)
    config["experiments"] = {"small": "config/experiments/small.yaml", "wide": "config/experiments/wide.yaml"}
    return config


@pytest.fixture
def workdir(tmp_path):
    workdir = make_workdir(tmp_path, two_experiment_config(), SMALL)
    write_yaml(WIDE, workdir / "config" / "experiments" / "wide.yaml")
    return workdir


def planned(workdir, *args) -> dict[str, list[str]]:
    return job_outputs(planned_log(workdir, *args))


def planned_log(workdir, *args) -> str:
    """A dry run's output with the jobs' shell commands (the chunk jobs' cells among them)."""
    result = snakemake(workdir, "-n", "--printshellcmds", *args)
    assert_ok(result)
    return result.stdout


@pytest.mark.slow
def test_subset_targets_only_the_chosen_experiments_and_collections(workdir):
    full = planned(workdir)
    subset_log = planned_log(workdir, "--config", "experiments_only=[small]", "collections_only=[adi]")
    subset = job_outputs(subset_log)

    tables = sorted(path for outputs in subset.values() for path in outputs if path.startswith("results/tables/"))
    assert {f"results/tables/small/table.{ext}" for ext in ("md", "tex", "html", "csv")} <= set(tables)
    assert all(path.startswith("results/tables/small/") for path in tables), tables
    planned_files = [path for outputs in subset.values() for path in outputs]
    assert not [path for path in planned_files if "cranfield" in path or "/wide/" in path]
    # One chunk holds adi's cells of both models (chunks mix models: irgrid.config.Chunk).
    assert subset["chunk"] == [ADI_CHUNK]
    # The full run plans cranfield and the wide table as well.
    assert "results/cranfield/eval/porter/text/chunk-all.parquet" in full["chunk"]
    assert any("results/tables/wide/" in path for path in full["table"])

    # The same jobs as the full run's for these files: the adi chunk still scores wide's
    # point too, so its job (output, params) is the full run's and nothing reruns later.
    for rule, outputs in subset.items():
        if not rule.startswith(("table", "report", "figures")):  # these describe the subset
            assert set(outputs) <= set(full[rule]), rule
    assert WIDE_ONLY_CELL in subset_log


@pytest.mark.slow
def test_one_collection_keeps_every_experiment_that_has_it(workdir):
    subset = planned(workdir, "--config", "collections_only=[cranfield]")
    tables = {path.split("/")[2] for path in subset["table"]}
    assert tables == {"small"}  # wide has no cranfield: left out
    assert not [path for outputs in subset.values() for path in outputs if "results/adi/" in path]


@pytest.mark.slow
@pytest.mark.parametrize("setting, message", [
    ("experiments_only=[smal]", "experiments_only: unknown experiment 'smal'; did you mean 'small'?"),
    ("collections_only=[adl]", "collections_only: unknown collection 'adl'; did you mean 'adi'?"),
])
def test_unknown_name_is_one_line_with_a_suggestion(workdir, setting, message):
    result = snakemake(workdir, "-n", "--config", setting)
    assert result.returncode != 0, result.stdout
    assert message in result.stdout, result.stdout
    assert not (workdir / "results").exists()


def loaded() -> dict:
    config = two_experiment_config()
    config["registry"] = str(REGISTRY)
    config["experiments"] = {"small": copy.deepcopy(SMALL), "wide": copy.deepcopy(WIDE)}
    return load_config(config)


def test_select_subset_narrows_experiments_and_collections():
    config = loaded()
    assert select_subset(config) == config
    only_small = select_subset(config, ["small"])
    assert list(only_small["_experiments"]) == ["small"]
    on_cranfield = select_subset(config, None, ["cranfield"])
    assert {name: e["collections"] for name, e in on_cranfield["_experiments"].items()} == {"small": ["cranfield"]}
    assert select_subset(config, "wide", "adi")["_experiments"]["wide"]["collections"] == ["adi"]
    # the loaded config itself is left whole (the workflow keeps it for rules and params)
    assert config["_experiments"]["small"]["collections"] == ["adi", "cranfield"]


def test_select_subset_rejects_an_empty_selection_and_unknown_names():
    config = loaded()
    with pytest.raises(ConfigError, match="leave nothing to run"):
        select_subset(config, ["wide"], ["cranfield"])
    with pytest.raises(ConfigError, match=r"unknown collection 'zzz'; known: adi, "):
        select_subset(config, None, ["zzz"])
