# Config validation and the input helpers every stage uses. Logic lives in irgrid.config.
import json
import sys
from pathlib import Path

from snakemake.utils import validate

from irgrid.config import experiment_cells, load_config, model_family, resolve_path


validate(config, "../schemas/config.schema.yaml")
IRGRID = load_config(config, source="config/config.yaml (and --config overrides)")
# Jobs call the `irgrid` command of the environment running Snakemake, so
# `.venv/bin/snakemake` works without activating the virtual environment.
shell.prefix(f'export PATH="{Path(sys.executable).parent}:$PATH"; ')
REGISTRY = str(resolve_path(config["registry"]))


wildcard_constraints:
    collection="[^/]+",
    queryset="[^/]+",
    analyzer="[^/]+",
    model="[^/]+",
    params="[^/]+",
    experiment="[^/]+",
    table="table|table_cv",


def collection_entry(wildcards):
    """The registry entry, as a param: editing a collection's entry re-reads it."""
    return json.dumps(IRGRID["_registry"][wildcards.collection].to_dict(), sort_keys=True)


def collection_source_args():
    """Where the raw files come from: passed as a param, not as a rule-external variable."""
    args = f"--registry {REGISTRY} --resources {config['resources']}"
    return args + (f" --mirror {config['mirror']}" if config["mirror"] else "")


def analyzer_json(wildcards):
    return json.dumps(config["analyzers"][wildcards.analyzer], sort_keys=True)


def family_of_model(wildcards):
    return model_family(IRGRID, wildcards.model)


def experiment_evaluations(wildcards):
    return [cell.eval_path for cell in experiment_cells(IRGRID, wildcards.experiment)]


def experiment_table_cells(wildcards):
    cells = [
        {
            "collection": cell.collection,
            "queryset": cell.queryset,
            "model": cell.model,
            "params": cell.params,
            "path": cell.eval_path,
        }
        for cell in experiment_cells(IRGRID, wildcards.experiment)
    ]
    return json.dumps(cells)


def experiment_table_spec(wildcards):
    experiment = IRGRID["_experiments"][wildcards.experiment]
    spec = {
        "experiment": wildcards.experiment,
        "title": experiment["title"],
        "models": list(experiment["models"]),
        "model_labels": {name: model.get("label", name) for name, model in experiment["models"].items()},
        "baseline": experiment["baseline"],
        "measures": experiment["table_measures"],
        "select_by": experiment["select_by"],
        "alpha": experiment["alpha"],
        "folds": experiment["folds"],
        "seed": experiment["seed"],
        "test": experiment["test"],
        "correction": experiment["correction"],
        "selection": "cv" if getattr(wildcards, "table", "table") == "table_cv" else "best",
    }
    return json.dumps(spec, sort_keys=True)


TABLE_STEMS = {"best": "table", "cv": "table_cv"}
FIGURES = ["by_method", "sensitivity"]


def experiment_outputs(name):
    """Tables (HTML) and figures (SVG) one experiment produces."""
    experiment = IRGRID["_experiments"][name]
    tables = [f"results/tables/{name}/{TABLE_STEMS[selection]}.html" for selection in experiment["tables"]]
    figures = [f"results/figures/{name}/{figure}.svg" for figure in FIGURES] if experiment["figures"] else []
    return {"tables": tables, "figures": figures}


def report_inputs(wildcards):
    return [path for name in IRGRID["_experiments"] for paths in experiment_outputs(name).values() for path in paths]


def get_final_output():
    return report_inputs(None) + ["results/report.html"]
