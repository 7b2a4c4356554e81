"""A researcher's first day with their own data (issue 29, items 1-6, 8, 9, 13).

Each test builds what a new user writes (their own config file, registry entry, experiment,
query file) and checks what the project tells them: which experiments run, which report file a
subset run writes, which query sets are refused or warned about, which config file an error
names, what a TSV query file read as JSONL says, which titles name collections not run, which
raw files are missing at planning time, and that the set-up files agree with pyproject.toml.
Expected values are written from the inputs by hand.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml
from common import REPO, SMALL_EXPERIMENT, assert_ok, job_outputs, make_workdir, small_config, snakemake, write_yaml

from irgrid.collections import CollectionNotAvailable, resolve_files
from irgrid.collections.local import iter_local_documents, iter_local_queries
from irgrid.collections.provenance import DigestCache
from irgrid.collections.sources import sha256_of
from irgrid.collections.spec import CollectionSpec
from irgrid.config import load_config
from irgrid.errors import ConfigError, InputFormatError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib



def replace_default_experiments(*args, **kwargs):
    from irgrid.config import replace_default_experiments

    return replace_default_experiments(*args, **kwargs)


def run_warnings(*args, **kwargs):
    from irgrid.config import run_warnings

    return run_warnings(*args, **kwargs)


def config_source(*args, **kwargs):
    from irgrid.config import config_source

    return config_source(*args, **kwargs)


def report_path(*args, **kwargs):
    from irgrid.report.manifest import report_path

    return report_path(*args, **kwargs)


def raw_file_rows(*args, **kwargs):
    from irgrid.report.manifest import raw_file_rows

    return raw_file_rows(*args, **kwargs)


def check_raw_files(*args, **kwargs):
    from irgrid.config import check_raw_files

    return check_raw_files(*args, **kwargs)


# --------------------------------------------------------------------------- own data on disk


def own_collection(root: Path) -> Path:
    """Three documents, two queries, their judgements, as JSONL/TSV files, and a registry naming them."""
    data = root / "data"
    data.mkdir(parents=True)
    (data / "docs.jsonl").write_text('{"docno": "d1", "text": "wind tunnel"}\n{"docno": "d2", "text": "boundary layer"}\n'
                                     '{"docno": "d3", "text": "heat transfer"}\n', encoding="utf-8")
    (data / "queries.jsonl").write_text('{"qid": "1", "text": "wind"}\n{"qid": "2", "text": "heat"}\n', encoding="utf-8")
    (data / "qrels.txt").write_text("1 0 d1 1\n2 0 d3 1\n", encoding="utf-8")
    registry = root / "my_collections.yaml"
    write_yaml({"mine": {"format": "jsonl",
                         "files": {"docs": str(data / "docs.jsonl"), "queries": str(data / "queries.jsonl"),
                                   "qrels": str(data / "qrels.txt")}}}, registry)
    return registry


def own_experiment(collections=("mine",), querysets=None, title="BM25 on my data") -> dict:
    experiment = copy.deepcopy(SMALL_EXPERIMENT)
    experiment.update(title=title, collections=list(collections))
    if querysets is not None:
        experiment["querysets"] = list(querysets)
    return experiment


def default_config_merged_with(user: dict) -> dict:
    """What Snakemake's config holds for ``--configfile user.yaml``: config/config.yaml, then the user's file
    merged over it (nested mappings key by key, as snakemake.utils.update_config does)."""
    merged = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    for key, value in user.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


# --------------------------------------------------------------------------- 1. one command for own data


def test_a_user_config_naming_experiments_runs_those_only(tmp_path):
    registry = own_collection(tmp_path)
    user = {"registry": str(registry), "experiments": {"mine": own_experiment()}}
    user_file = tmp_path / "my.yaml"
    write_yaml(user, user_file)
    config = default_config_merged_with(user)
    assert "baselines" in config["experiments"]  # what the merge alone gives: the default experiments too
    with pytest.raises(ConfigError, match="unknown collection 'cranfield'"):
        load_config(copy.deepcopy(config))

    replace_default_experiments(config, "config/config.yaml", [user_file], overrides={})
    assert list(config["experiments"]) == ["mine"]
    assert list(load_config(config)["_experiments"]) == ["mine"]


def test_a_user_config_without_experiments_keeps_the_default_ones(tmp_path):
    user_file = tmp_path / "more_shards.yaml"
    write_yaml({"num_shards": 8}, user_file)
    config = default_config_merged_with({"num_shards": 8})
    replace_default_experiments(config, "config/config.yaml", [user_file], overrides={})
    assert "baselines" in config["experiments"] and "sentences" in config["experiments"]


def test_the_default_config_file_given_as_configfile_changes_nothing():
    config = default_config_merged_with({})
    experiments = dict(config["experiments"])
    replace_default_experiments(config, REPO / "config" / "config.yaml", [REPO / "config" / "config.yaml"], overrides={})
    assert config["experiments"] == experiments


def test_only_the_selected_experiments_must_be_valid(tmp_path):
    registry = own_collection(tmp_path)
    config = default_config_merged_with({"registry": str(registry), "experiments": {"mine": own_experiment()}})
    loaded = load_config(copy.deepcopy(config), selected=["mine"])
    assert list(loaded["_experiments"]) == ["mine"]
    assert any("baselines" in warning and "cranfield" in warning for warning in run_warnings(loaded, every=True))
    with pytest.raises(ConfigError, match="unknown collection 'cranfield'"):
        load_config(copy.deepcopy(config), selected=["baselines"])


@pytest.mark.slow
def test_own_data_is_one_command_and_errors_name_the_users_file(tmp_path):
    """docs/usage.md's own-data command: `snakemake --configfile my.yaml` with no other flag plans the user's
    experiment only; a wrong key in that file is reported against it (items 1 and 4)."""
    registry = own_collection(tmp_path)
    workdir = make_workdir(tmp_path / "work", small_config(None))
    write_yaml({"registry": str(registry), "experiments": {"mine": own_experiment()}}, workdir / "my.yaml")
    result = snakemake_with(workdir, "my.yaml", "-n")
    assert_ok(result)
    planned = [path for outputs in job_outputs(result.stdout).values() for path in outputs]
    assert "results/tables/mine/table.html" in planned
    assert not [path for path in planned if "/adi/" in path or "tables/small" in path], planned

    write_yaml({"registry": str(registry), "num_shard": 2, "experiments": {"mine": own_experiment()}},
               workdir / "typo.yaml")
    result = snakemake_with(workdir, "typo.yaml", "-n")
    assert result.returncode != 0
    assert "typo.yaml" in result.stdout and "did you mean 'num_shards'" in result.stdout, result.stdout[-3000:]


def snakemake_with(workdir: Path, configfile: str, *args: str):
    """Snakemake as a user runs it: the Snakefile's config/config.yaml, then their own --configfile."""
    import subprocess
    import sys

    from common import SNAKEFILE, SNAKEMAKE_TIMEOUT

    command = [sys.executable, "-m", "snakemake", "--snakefile", str(SNAKEFILE), "--directory", str(workdir),
               "--configfile", str(workdir / configfile), "--cores", "1", *args]
    return subprocess.run(command, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=SNAKEMAKE_TIMEOUT)


# --------------------------------------------------------------------------- 2. a subset run's report


def test_a_subset_run_writes_a_report_of_its_own():
    assert report_path(None, None) == "results/report.html"
    assert report_path(["small"], None) == "results/report-small.html"
    assert report_path(["wide", "small"], ["adi"]) == "results/report-small+wide-on-adi.html"
    assert report_path(None, ["cranfield", "adi"]) == "results/report-all-on-adi+cranfield.html"
    assert report_path("small", "adi") == "results/report-small-on-adi.html"  # --config experiments_only=small
    long = report_path([f"experiment_{i}" for i in range(40)], None)
    assert len(Path(long).name) < 120 and long.startswith("results/report-") and long.endswith(".html")


@pytest.mark.slow
def test_a_subset_dry_run_plans_its_own_report_and_leaves_report_html(tmp_path):
    workdir = make_workdir(tmp_path, small_config(None))
    result = snakemake(workdir, "-n", "--config", "experiments_only=[small]")
    assert_ok(result)
    assert job_outputs(result.stdout)["report"] == ["results/report-small.html"]
    result = snakemake(workdir, "-n")
    assert_ok(result)
    assert job_outputs(result.stdout)["report"] == ["results/report.html"]


# --------------------------------------------------------------------------- 3. query sets no collection has


def querysets_config(registry: Path, querysets, collections=("mine",)) -> dict:
    config = small_config(None)
    config["registry"] = str(registry)
    config["experiments"] = {"mine": own_experiment(collections, querysets)}
    return config


def test_a_misspelt_query_set_stops_the_run_naming_what_each_collection_has(tmp_path):
    registry = own_collection(tmp_path)
    with pytest.raises(ConfigError) as raised:
        load_config(querysets_config(registry, ["text", "titel"]))
    message = str(raised.value)
    assert "experiment 'mine'" in message and "'titel'" in message and "mine: ['text']" in message, message


def test_a_derived_query_set_of_a_missing_base_stops_the_run(tmp_path):
    """`test+segmenter` on a SQuAD collection registered as {dev, trial}: no collection has `test`."""
    registry = tmp_path / "squad.yaml"
    write_yaml({"zh": {"format": "squad", "files": {"dev": "/data/dev.json", "trial": "/data/trial.json"}}}, registry)
    with pytest.raises(ConfigError, match=r"'test\+segmenter'.*zh: \['dev', 'trial'\]"):
        load_config(querysets_config(registry, ["dev+segmenter", "test+segmenter"], ["zh"]))


def test_trec_topic_sets_the_collections_lack_are_one_warning(tmp_path):
    """The default experiments list TREC topic sets (title, desc, ...) for TREC data: on collections
    without them they are a warning, once per experiment, naming the sets and the collections."""
    registry = own_collection(tmp_path)
    config = load_config(querysets_config(registry, ["text", "title", "desc+parser", "title+min3words"]))
    warnings = run_warnings(config)
    assert len(warnings) == 1, warnings
    assert all(name in warnings[0] for name in ("'mine'", "title", "desc+parser", "title+min3words")), warnings


def test_a_set_only_some_collections_lack_is_a_warning(tmp_path):
    registry = tmp_path / "two.yaml"
    files = {"docs": "/d.jsonl", "queries": "/q.jsonl", "qrels": "/r.txt"}
    write_yaml({"one": {"format": "jsonl", "files": files, "querysets": {"text": ["text"], "short": ["title"]}},
                "two": {"format": "jsonl", "files": files}}, registry)
    config = load_config(querysets_config(registry, ["text", "short"], ["one", "two"]))
    assert [warning for warning in run_warnings(config) if "'short'" in warning and "two" in warning]


def test_the_default_config_loads_with_warnings_not_errors():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    loaded = load_config(config)
    warnings = run_warnings(loaded)
    assert any("'baselines'" in warning and "title_desc_narr" in warning for warning in warnings), warnings
    # one line per experiment at most: listed once, not per collection or per job
    assert len(warnings) == len(set(warnings)) <= len(loaded["_experiments"])


# --------------------------------------------------------------------------- 4. errors name the real file


def test_config_source_names_the_files_in_use(tmp_path):
    assert config_source("config/config.yaml", [], overrides=False) == "config/config.yaml"
    assert config_source("config/config.yaml", [], overrides=True) == "config/config.yaml (and --config overrides)"
    mine = tmp_path / "my.yaml"
    assert config_source("config/config.yaml", [mine], overrides=False) == f"{mine} (over config/config.yaml)"
    # the default file given again with --configfile is named once
    default = REPO / "config" / "config.yaml"
    assert config_source(default, [default], overrides=False) == str(default)


# --------------------------------------------------------------------------- 5. TSV read as JSONL


def test_tab_separated_queries_read_as_jsonl_say_which_key_to_set(tmp_path):
    queries = tmp_path / "queries.txt"
    queries.write_text("1\twind tunnel\n2\theat transfer\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="queries_format: tsv") as raised:
        list(iter_local_queries(queries, "jsonl"))
    assert f"{queries}:1" in str(raised.value)
    docs = tmp_path / "docs.tsv"
    docs.write_text("d1 wind tunnel\n", encoding="utf-8")  # no tab, but the name says TSV
    with pytest.raises(InputFormatError, match="format: tsv"):
        list(iter_local_documents(docs, "jsonl"))
    # what the hint sends the user to reads the file
    assert [q.qid for q in iter_local_queries(queries, "tsv")] == ["1", "2"]


def test_a_broken_json_line_gets_no_tsv_hint(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"qid": "1", "text": "wind"\n', encoding="utf-8")
    with pytest.raises(InputFormatError) as raised:
        list(iter_local_queries(queries, "jsonl"))
    assert "tsv" not in str(raised.value)


def test_usage_own_data_section_shows_a_tsv_entry():
    usage = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    section = usage[usage.index("Your own data"):usage.index("## Running parts")]
    assert "queries_format: tsv" in section and "format: tsv" in section


# --------------------------------------------------------------------------- 6. titles naming other collections


def test_a_copied_title_naming_another_collection_is_a_warning(tmp_path):
    registry = own_collection(tmp_path)
    config = small_config(None)
    config["registry"] = str(registry)
    config["experiments"] = {"mine": own_experiment(title="MRF sentence retrieval on TrecQA")}
    warnings = run_warnings(load_config(config))
    assert [w for w in warnings if "'mine'" in w and "TrecQA" in w and "title" in w], warnings


def test_a_title_naming_its_own_collection_is_no_warning(tmp_path):
    registry = own_collection(tmp_path)
    config = small_config(None)
    config["registry"] = str(registry)
    config["experiments"] = {"mine": own_experiment(title="BM25 on mine (not on TREC data)")}
    assert not [w for w in run_warnings(load_config(config)) if "its title" in w]


def test_the_default_titles_name_only_their_collections():
    config = load_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8")))
    assert not [w for w in run_warnings(config) if "its title" in w]


# --------------------------------------------------------------------------- 8. raw files at planning time


def test_a_missing_absolute_file_is_named_at_planning_time(tmp_path):
    registry = own_collection(tmp_path)
    (tmp_path / "data" / "qrels.txt").unlink()
    config = small_config(None)
    config["registry"] = str(registry)
    config["experiments"] = {"mine": own_experiment()}
    with pytest.raises(ConfigError) as raised:
        check_raw_files(load_config(config), mirror=None, resources_dir=tmp_path / "resources")
    message = str(raised.value)
    assert str(tmp_path / "data" / "qrels.txt") in message and "'mine'" in message, message
    assert "mirror" not in message  # an absolute path is no mirror's business


def test_a_job_reading_a_missing_absolute_file_says_only_that(tmp_path):
    spec = CollectionSpec.from_dict("mine", {"format": "jsonl", "files": {"docs": str(tmp_path / "nowhere.jsonl")}})
    with pytest.raises(CollectionNotAvailable) as raised:
        resolve_files(spec, resources_dir=tmp_path / "resources")
    assert str(tmp_path / "nowhere.jsonl") in str(raised.value)
    assert "mirror" not in str(raised.value)


def test_a_relative_file_in_no_mirror_and_without_url_is_refused_at_planning_time(tmp_path):
    registry = tmp_path / "rel.yaml"
    write_yaml({"mine": {"format": "jsonl", "files": {"docs": "docs.jsonl", "queries": "q.jsonl", "qrels": "r.txt"}}},
               registry)
    config = small_config(tmp_path / "empty_mirror")
    config["registry"] = str(registry)
    config["experiments"] = {"mine": own_experiment()}
    with pytest.raises(ConfigError, match="docs.jsonl"):
        check_raw_files(load_config(config), mirror=tmp_path / "empty_mirror", resources_dir=tmp_path / "resources")


def test_files_with_a_url_may_still_be_downloaded(tmp_path):
    """The public collections: not in a mirror here, but their registry urls let the job download them."""
    config = small_config(tmp_path / "empty_mirror")
    config["registry"] = str(REPO / "config" / "collections.yaml")
    config["experiments"] = {"small": copy.deepcopy(SMALL_EXPERIMENT)}
    check_raw_files(load_config(config), mirror=tmp_path / "empty_mirror", resources_dir=tmp_path / "resources")


def test_the_log_names_absolute_files_not_a_mirror(tmp_path, caplog):
    registry = own_collection(tmp_path)
    spec = CollectionSpec.from_dict("mine", yaml.safe_load(registry.read_text())["mine"])
    with caplog.at_level("INFO", logger="irgrid.collections.sources"):
        resolve_files(spec, resources_dir=tmp_path / "resources")
    logged = caplog.text
    assert str(tmp_path / "data" / "docs.jsonl") in logged, logged
    assert "shared/collections" not in logged and "mirror argument" not in logged, logged


def test_the_report_lists_the_raw_files_read_and_their_digests(tmp_path):
    registry = own_collection(tmp_path)
    spec = CollectionSpec.from_dict("mine", yaml.safe_load(registry.read_text())["mine"])
    rows = raw_file_rows(spec, mirror=None, resources_dir=tmp_path / "resources", cache=DigestCache(None))
    expected = {str(tmp_path / "data" / name): sha256_of(tmp_path / "data" / name)
                for name in ("docs.jsonl", "queries.jsonl", "qrels.txt")}
    assert {row["file"]: row["sha256"] for row in rows} == expected


def test_the_report_shows_those_files_not_none_listed(tmp_path):
    """An entry without registry checksums (a user's own): the report's inputs name each file read and
    its digest, where it said "(none listed)"."""
    from irgrid.report.html import render_report

    registry = own_collection(tmp_path)
    spec = CollectionSpec.from_dict("mine", yaml.safe_load(registry.read_text())["mine"])
    rows = raw_file_rows(spec, mirror=None, resources_dir=tmp_path / "resources", cache=DigestCache(None))
    manifest = {"experiments": {}, "benchmarks": {}, "indexes": {}, "settings": {},
                "collections": {"mine": {"format": "jsonl", "sha256": {}, "digest": "x", "files": rows}}}
    page = render_report(manifest, tmp_path)
    assert "(none listed)" not in page
    docs = tmp_path / "data" / "docs.jsonl"
    assert str(docs) in page and sha256_of(docs) in page


# --------------------------------------------------------------------------- 9, 13. set-up files


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_extra_the_docs_name_exists():
    extras = set(pyproject()["project"]["optional-dependencies"])
    texts = [REPO / "README.md", *sorted((REPO / "workflow" / "schemas").glob("*.yaml")),
             *sorted((REPO / "docs").glob("*.md"))]
    named = {(path.name, extra) for path in texts
             for group in re.findall(r"\.\[([A-Za-z0-9_,-]+)\]", path.read_text(encoding="utf-8"))
             for extra in group.split(",")}
    assert not {(name, extra) for name, extra in named if extra not in extras}, extras


def requirement(text: str) -> tuple[str, str]:
    """(normalised name, version specifier) of a pip or conda requirement; a conda `=x` pin is `==x`."""
    match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*?)\s*", text)
    name, specifier = match.group(1), match.group(3).replace(" ", "")
    if re.fullmatch(r"=[^=].*", specifier):
        specifier = "=" + specifier
    return re.sub(r"[-_.]+", "-", name).lower(), specifier


def test_environment_yml_holds_pyprojects_dependencies():
    """environment.yml says it holds the same dependencies as pyproject.toml: every dependency and the
    slurm extra, with the same version bounds (dask[distributed] is conda-forge's dask + distributed)."""
    environment = yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))
    listed = {}
    for entry in environment["dependencies"]:
        for text in entry["pip"] if isinstance(entry, dict) else [entry]:
            if not text.startswith("-"):
                name, specifier = requirement(text)
                listed[name] = specifier
    project = pyproject()["project"]
    wanted = [requirement(text) for text in project["dependencies"] + project["optional-dependencies"]["slurm"]]
    missing = {name: specifier for name, specifier in wanted if listed.get(name) != specifier}
    assert not missing, f"environment.yml lacks or differs on {missing}"
    assert listed.get("distributed") == dict(wanted)["dask"]
