"""Names that become paths are checked when the config loads; ids with blanks are refused by the readers.

An analyzer, model, experiment, collection, query set or parameter name is a directory or file name
under ``results/``: ``..`` would write outside its directory and ``a/b`` would add a level the rules
do not expect. Query and document ids are one field of a TREC run line (``qid Q0 docno rank score
tag``): an id with a blank would give a seven-field line.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from common import REGISTRY, REPO
from test_errors import ANALYZER, EXPERIMENT

from irgrid.collections.answer_tsv import iter_answer_tsv_queries
from irgrid.collections.local import iter_local_documents, iter_local_queries
from irgrid.collections.squad import iter_squad_queries
from irgrid.collections.trecqa import iter_trecqa_queries
from irgrid.config import SAFE_NAME, check_name, load_config
from irgrid.errors import ConfigError, InputFormatError


def config_with(experiment: dict | None = None, analyzers: dict | None = None, name: str = "small",
                registry: Path = REGISTRY) -> dict:
    return {
        "registry": str(registry),
        "analyzers": analyzers or {"porter": dict(ANALYZER)},
        "measures": ["AP"],
        "experiments": {name: experiment or copy.deepcopy(EXPERIMENT)},
    }


def renamed_model(old: str, new: str) -> dict:
    experiment = copy.deepcopy(EXPERIMENT)
    experiment["models"][new] = experiment["models"].pop(old)
    if experiment["baseline"] == old:
        experiment["baseline"] = new
    return experiment


@pytest.mark.parametrize("name", ["bm25", "ql_dirichlet", "text+parser", "k1", "v1.2", "a-b", "X+judged"])
def test_safe_names_pass(name):
    assert check_name(name, "model", "config.yaml", "models") == name


@pytest.mark.parametrize("name", ["..", ".", "a/b", "/abs", "a b", "", "tab\there", "semi;colon", "q'uote",
                                  "dollar$x", "é"])
def test_unsafe_names_are_refused_naming_file_and_key(name):
    with pytest.raises(ConfigError) as error:
        check_name(name, "model", "config/experiments/x.yaml", f"models/{name}")
    message = str(error.value)
    assert message.startswith("config/experiments/x.yaml: models/")
    assert repr(name) in message


def test_safe_name_pattern_agrees_with_a_character_by_character_check():
    # independent of the regex: every character must be in the allowed set
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-")
    for name in ["ab", "a/b", "a b", "x+y", "é", "a.b", "a\nb", "~x"]:
        assert bool(SAFE_NAME.fullmatch(name)) == (bool(name) and set(name) <= allowed)


@pytest.mark.parametrize("where, config", [
    ("models/..", lambda: config_with(renamed_model("ql", ".."))),
    ("models/a/b", lambda: config_with(renamed_model("bm25", "a/b"))),
    ("analyzers/..", lambda: config_with({**EXPERIMENT, "analyzer": ".."}, analyzers={"..": dict(ANALYZER)})),
    ("experiments/my exp", lambda: config_with(name="my exp")),
    ("querysets", lambda: config_with({**EXPERIMENT, "querysets": ["text", "../text"]})),
])
def test_load_config_refuses_unsafe_names(where, config):
    with pytest.raises(ConfigError) as error:
        load_config(config())
    assert where in str(error.value)
    assert "is not allowed" in str(error.value)


def test_experiment_file_is_named_for_a_bad_model_name(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(renamed_model("ql", "..")), encoding="utf-8")
    config = config_with()
    config["experiments"] = {"small": str(path)}
    with pytest.raises(ConfigError) as error:
        load_config(config)
    assert str(error.value).startswith(f"{path}: models/..:")


def test_registry_collection_and_query_set_names_are_checked(tmp_path):
    registry = yaml.safe_load(REGISTRY.read_text(encoding="utf-8"))
    entry = registry["adi"]
    bad = tmp_path / "collections.yaml"
    bad.write_text(yaml.safe_dump({"adi": entry, "a/b": entry}), encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_config(config_with(registry=bad))
    # the registry's schema already restricts collection ids (propertyNames)
    assert str(error.value).startswith(f"{bad}:") and "'a/b'" in str(error.value)

    renamed = copy.deepcopy(entry)
    renamed["querysets"] = {"my text": ["W"]}
    bad.write_text(yaml.safe_dump({"adi": renamed}), encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_config(config_with(registry=bad))
    assert str(error.value).startswith(f"{bad}:") and "'my text'" in str(error.value)


# --------------------------------------------------------------------------- ids with blanks


def test_tsv_query_id_with_a_blank_is_refused_with_file_and_line(tmp_path):
    path = tmp_path / "queries.tsv"
    path.write_text("1\tfirst query\n3 a\tsecond query\n", encoding="utf-8")
    with pytest.raises(InputFormatError) as error:
        list(iter_local_queries(path, "tsv"))
    assert (error.value.path, error.value.line) == (str(path), 2)
    assert str(error.value).startswith(f"{path}:2: expected a qid without blanks")


def test_jsonl_docno_with_a_blank_is_refused_with_file_and_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"docno": "d1", "text": "x"}) + "\n" + json.dumps({"docno": "d 2", "text": "y"}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputFormatError) as error:
        list(iter_local_documents(path, "jsonl"))
    assert (error.value.path, error.value.line) == (str(path), 2)


def test_jsonl_surrounding_blanks_are_still_stripped(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"docno": " d1 ", "text": "x"}) + "\n", encoding="utf-8")
    assert [d.docno for d in iter_local_documents(path, "jsonl")] == ["d1"]


def test_squad_question_id_with_a_blank_is_refused_with_its_json_path(tmp_path):
    path = tmp_path / "dev.json"
    data = {"data": [{"title": "Some Title", "paragraphs": [
        {"context": "text", "qas": [{"id": "q 1", "question": "why?", "answers": []}]}]}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputFormatError) as error:
        list(iter_squad_queries({"dev": path}))
    assert "data[0].paragraphs[0].qas[0]" in str(error.value)


def test_squad_title_with_blanks_names_paragraphs_with_underscores(tmp_path):
    from irgrid.collections.squad import iter_squad_documents

    path = tmp_path / "dev.json"
    data = {"data": [{"title": "Super Bowl 50", "paragraphs": [{"context": "text", "qas": []}]}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert [d.docno for d in iter_squad_documents({"dev": path})] == ["Super_Bowl_50-0"]


def test_trecqa_id_with_a_blank_is_refused(tmp_path):
    path = tmp_path / "DEV.xml"
    path.write_text("<QApairs id='1 2'>\n<question>\nWhat\nWP\nROOT\n0\n-\n</question>\n</QApairs>\n",
                    encoding="utf-8")
    with pytest.raises(InputFormatError) as error:
        list(iter_trecqa_queries({"dev": path}))
    assert (error.value.path, error.value.line) == (str(path), 1)


def test_answer_tsv_question_id_with_a_blank_is_refused(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text("QuestionID\tQuestion\tSentence\tLabel\nQ 1\twhy?\tbecause.\t1\n", encoding="utf-8")
    with pytest.raises(InputFormatError) as error:
        list(iter_answer_tsv_queries({"dev": path}))
    assert (error.value.path, error.value.line) == (str(path), 2)


@pytest.mark.slow
def test_snakemake_dry_run_stops_on_a_model_named_dotdot(tmp_path):
    import shutil

    shutil.copytree(REPO / "config", tmp_path / "config")
    config = config_with(name="small")
    config["registry"] = "config/collections.yaml"
    config["experiments"] = {"small": "config/experiments/small.yaml"}
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (tmp_path / "config" / "experiments" / "small.yaml").write_text(yaml.safe_dump(renamed_model("ql", "..")),
                                                                     encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
                             "--directory", str(tmp_path), "-n"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=300)
    assert result.returncode != 0
    assert "config/experiments/small.yaml: models/..: model name '..' is not allowed" in result.stdout, result.stdout
    assert not (tmp_path / "results").exists()


def test_trec_export_refuses_an_id_with_a_blank(tmp_path):
    import pandas as pd

    from irgrid.runs import write_trec_run

    run = pd.DataFrame({"qid": ["1", "3 a"], "docno": ["d1", "d2"], "rank": [1, 1], "score": [1.0, 0.5]})
    with pytest.raises(InputFormatError, match="six fields"):
        write_trec_run(run, tmp_path / "run.trec", tag="t")
    assert not (tmp_path / "run.trec").exists()
    write_trec_run(run.iloc[:1], tmp_path / "run.trec", tag="t")
    assert [len(line.split()) for line in (tmp_path / "run.trec").read_text().splitlines()] == [6]
