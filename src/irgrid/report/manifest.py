"""Everything the report reads, listed from the configuration (testable without Snakemake).

The report rule passes :func:`report_manifest` to ``irgrid report`` and takes its inputs from
:func:`manifest_inputs`, so the files the report reads and the files Snakemake makes first are
one list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..config import Chunk, experiment_analyzers, experiment_cells, experiment_querysets
from .provenance import cell_digest

TABLE_STEMS = {"best": "table", "cv": "table_cv", "tuned": "table_tuned"}


def benchmark_path(chunk: Chunk, kind: str) -> str:
    """A chunk job's Snakemake benchmark file (kind 'runs' or 'eval'); the rules use the same path."""
    job = chunk.log_path(kind).removeprefix("logs/").removesuffix(".log")
    return f"results/benchmarks/{job}.tsv"


def index_benchmark_path(collection: str, analyzer: str) -> str:
    return f"results/benchmarks/{collection}/index/{analyzer}.tsv"


def experiment_figures(name: str, experiment: Mapping[str, Any]) -> list[str]:
    figures = [f"results/figures/{name}/{figure}.svg" for figure in ("by_method", "sensitivity")] \
        if experiment["figures"] else []
    figures += [f"results/figures/{name}/parameter-{parameter}.svg" for parameter in experiment["parameter_figures"]]
    if experiment["axioms"]:
        figures.append(f"results/figures/{name}/violations_vs_measure.svg")
    return figures


def report_manifest(config: Mapping[str, Any], chunks: Sequence[Chunk]) -> dict[str, Any]:
    registry = config["_registry"]
    depth = config["retrieval"]["depth"]
    chunk_of = {}
    for chunk in chunks:
        for path in chunk.run_paths:
            chunk_of[path] = chunk
    entries = {}  # each registry entry as plain data once: to_dict() deep-copies the whole entry

    def entry(collection: str) -> dict[str, Any]:
        if collection not in entries:
            entries[collection] = registry[collection].to_dict()
        return entries[collection]

    benchmarks: dict[str, dict[str, str]] = {}
    indexes: dict[str, dict[str, str]] = {}
    experiments = {}
    for name, experiment in config["_experiments"].items():
        analyzers = experiment_analyzers(experiment)
        several = len(analyzers) > 1
        cells = []
        for cell in experiment_cells(config, name):
            chunk = chunk_of[cell.run_path]
            index = f"results/{cell.collection}/index/{cell.analyzer}"
            indexes[index] = {"collection": cell.collection, "analyzer": cell.analyzer}
            benchmarks[index_benchmark_path(cell.collection, cell.analyzer)] = {
                "stage": "index", "job": f"build_index {cell.collection}/{cell.analyzer}", "collection": cell.collection}
            runs, evals = benchmark_path(chunk, "runs"), benchmark_path(chunk, "eval")
            benchmarks[runs] = {"stage": "retrieve", "job": chunk.rule_name("retrieve"), "collection": cell.collection}
            benchmarks[evals] = {"stage": "evaluate", "job": chunk.rule_name("evaluate"), "collection": cell.collection}
            cells.append({
                "collection": cell.collection,
                "queryset": f"{cell.queryset}, {cell.analyzer}" if several else cell.queryset,
                "analyzer": cell.analyzer, "model": cell.model, "family": cell.family, "params": cell.params,
                "run": cell.run_path, "index": index, "retrieve_benchmark": runs, "evaluate_benchmark": evals,
                "chunk_points": len(chunk.params),
                "digest": cell_digest(cell.family, cell.params, config["analyzers"][cell.analyzer],
                                      entry(cell.collection), cell.queryset, depth, config["measures"]),
            })
        experiments[name] = {
            "source": config.get("_experiment_sources", {}).get(name, ""),
            **{key: experiment.get(key) for key in ("title", "description", "paper", "claims", "collections", "baseline",
                                                      "select_by", "table_measures", "test", "alternative",
                                                      "correction", "alpha", "folds", "tables")},
            "querysets": {collection: experiment_querysets(experiment, registry[collection])
                          for collection in experiment["collections"]},
            "analyzers": {analyzer: config["analyzers"][analyzer] for analyzer in analyzers},
            "models": {model: {"family": spec["family"], "label": spec.get("label", model), "grid": spec.get("grid", {})}
                       for model, spec in experiment["models"].items()},
            "table_files": [{"selection": selection, "csv": f"results/tables/{name}/{TABLE_STEMS[selection]}.csv",
                             "html": f"results/tables/{name}/{TABLE_STEMS[selection]}.html"}
                            for selection in experiment["tables"]],
            "extra_tables": [f"results/tables/{name}/violations.html"] if experiment["axioms"] else [],
            "figures": experiment_figures(name, experiment),
            "findings": f"results/tables/{name}/findings.csv",
            "per_query": f"results/tables/{name}/per_query.html",
            "per_query_figure": f"results/figures/{name}/per_query.svg",
            "cells": cells,
        }
    collections = sorted({collection for e in config["_experiments"].values() for collection in e["collections"]})
    return {
        "experiments": experiments,
        "collections": {collection: {"format": registry[collection].format, "sha256": registry[collection].sha256,
                                     "digest": cell_digest("", "", {}, entry(collection), "", 0, [])}
                        for collection in collections},
        "benchmarks": benchmarks,
        "indexes": indexes,
        "settings": {"depth": depth, "measures": list(config["measures"]),
                     "chunk_size": config["retrieval"]["chunk_size"]},
    }


def manifest_inputs(manifest: Mapping[str, Any]) -> list[str]:
    """The files the report reads, all made by the workflow before it."""
    paths = []
    for experiment in manifest["experiments"].values():
        for table in experiment["table_files"]:
            paths += [table["csv"], table["html"]]
        paths += experiment["extra_tables"] + experiment["figures"]
        paths += [experiment["findings"], experiment["per_query"], experiment["per_query_figure"]]
    paths += list(manifest["indexes"]) + list(manifest["benchmarks"])
    return list(dict.fromkeys(paths))
