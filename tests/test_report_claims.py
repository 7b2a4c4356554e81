"""Claims of an experiment file (``claims:``), checked when the config loads: a wrong model or measure
stops the run naming the experiment file and the claim's key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from common import REPO

from irgrid.config import load_config, load_yaml
from irgrid.errors import ConfigError

EXPERIMENT = {
    "title": "two models",
    "collections": ["adi"],
    "analyzer": "porter",
    "models": {"bm25": {"family": "bm25"}, "ql": {"family": "ql_dirichlet"}},
    "baseline": "ql",
}


def load_with(tmp_path: Path, experiment: dict) -> dict:
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment), encoding="utf-8")
    config = load_yaml(REPO / "config" / "config.yaml")
    config["registry"] = str(REPO / "config" / "collections.yaml")
    config["experiments"] = {"exp": str(path)}
    return load_config(config)


def test_the_repository_experiments_state_claims_that_load():
    config = load_yaml(REPO / "config" / "config.yaml")
    config["registry"] = str(REPO / "config" / "collections.yaml")
    config["experiments"] = {name: str(REPO / path) for name, path in config["experiments"].items()}
    loaded = load_config(config)
    claims = loaded["_experiments"]["gjm"]["claims"]
    gjm2 = [claim for claim in claims if (claim["better"], claim["than"], claim["measure"]) == ("gjm2", "dirichlet", "AP")]
    # the GJM-2 paper reports no significance test: its claims are directions
    assert gjm2 and gjm2[0]["kind"] == "direction" and loaded["_experiments"]["gjm"]["paper_test"] is None
    assert loaded["_experiments"]["gjm"]["paper"]["table"].startswith("Table 3")


def test_a_claim_is_normalised_to_ir_measures_spelling(tmp_path):
    loaded = load_with(tmp_path, {**EXPERIMENT, "claims": [{"better": "bm25", "than": "ql", "measure": "NDCG@10"}]})
    assert loaded["_experiments"]["exp"]["claims"] == [{"better": "bm25", "than": "ql", "measure": "nDCG@10", "text": "",
                                                        "querysets": [], "kind": "direction", "larger_on": None}]


def test_a_claims_kind_follows_the_papers_test_and_its_query_sets_are_checked(tmp_path):
    claim = {"better": "bm25", "than": "ql", "measure": "AP"}
    tested = load_with(tmp_path, {**EXPERIMENT, "querysets": ["text"], "claims": [claim],
                                  "paper_test": {"alternative": "greater", "alpha": 0.0005}})["_experiments"]["exp"]
    assert tested["claims"][0]["kind"] == "significant"
    assert tested["paper_test"] == {"test": "ttest", "alternative": "greater", "alpha": 0.0005, "correction": "none"}
    assert tested["verdict_selection"] == "cv"  # never the best run by default
    with pytest.raises(ConfigError, match=r"claims/0/querysets: \['title'\] not among the experiment's query sets"):
        load_with(tmp_path, {**EXPERIMENT, "querysets": ["text"], "claims": [{**claim, "querysets": ["title"]}]})
    with pytest.raises(ConfigError, match="verdict_selection 'tuned' needs tune_on"):
        load_with(tmp_path, {**EXPERIMENT, "verdict_selection": "tuned"})


@pytest.mark.parametrize(("claim", "key", "words"), [
    ({"better": "bm25x", "than": "ql", "measure": "AP"}, "claims/0/better", "model 'bm25x' is not one of its models"),
    ({"better": "bm25", "than": "dirichlet", "measure": "AP"}, "claims/0/than", "model 'dirichlet'"),
    ({"better": "bm25", "than": "ql", "measure": "P@7"}, "claims/0/measure", "is not evaluated"),
    ({"better": "bm25", "than": "ql", "measure": "nonsense"}, "claims/0/measure", "unknown evaluation measure"),
    ({"better": "bm25", "than": "bm25", "measure": "AP"}, "claims/0", "with itself"),
])
def test_a_wrong_claim_names_the_file_and_key(tmp_path, claim, key, words):
    with pytest.raises(ConfigError) as error:
        load_with(tmp_path, {**EXPERIMENT, "claims": [claim]})
    message = str(error.value)
    assert f"{tmp_path / 'exp.yaml'}: {key}" in message and words in message


def test_a_claim_in_an_experiment_of_one_model_is_an_error(tmp_path):
    one = {**EXPERIMENT, "models": {"ql": {"family": "ql_dirichlet"}},
           "claims": [{"better": "bm25", "than": "ql", "measure": "AP"}]}
    with pytest.raises(ConfigError, match=r"claims/0/better: model 'bm25' is not one of its models \['ql'\]"):
        load_with(tmp_path, one)


def test_a_claim_without_a_measure_is_refused_by_the_schema(tmp_path):
    with pytest.raises(ConfigError, match=r"exp.yaml: invalid value at 'claims/0': 'measure' is a required property"):
        load_with(tmp_path, {**EXPERIMENT, "claims": [{"better": "bm25", "than": "ql"}]})


def test_paper_needs_a_citation(tmp_path):
    with pytest.raises(ConfigError, match="'citation' is a required property"):
        load_with(tmp_path, {**EXPERIMENT, "paper": {"table": "Table 1"}})
