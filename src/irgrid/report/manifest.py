"""Everything the report reads, listed from the configuration (testable without Snakemake).

The report job makes :func:`report_manifest` itself, from the workflow's configuration
(:func:`workflow_manifest`): a manifest holds every cell, and planning never builds it. The report
rule takes its inputs from :func:`report_input_files` (the same files :func:`manifest_inputs` lists)
and tracks :func:`manifest_digest`, a digest of what the manifest is made from.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..config import (
    Chunk,
    experiment_analyzers,
    experiment_cells,
    experiment_querysets,
    load_config,
    retrieval_chunks,
    run_warnings,
    select_subset,
)
from ..jobs.provenance import cell_digest, cell_digests

TABLE_STEMS = {"best": "table", "cv": "table_cv", "tuned": "table_tuned"}
#: the report of a whole run; a subset run writes report-<its experiments>[-on-<its collections>].html
FULL_REPORT = "results/report.html"
#: longest subset part of a report's file name before its names are replaced by a digest
_REPORT_NAME_LIMIT = 80


def report_path(experiments_only: Iterable[str] | str | None, collections_only: Iterable[str] | str | None) -> str:
    """Where a run's report goes: :data:`FULL_REPORT` for the whole config, a file of its own for a
    subset run (``experiments_only``, ``collections_only``), so that a subset run never replaces
    the report of every experiment with one of only some. Names are sorted (the same subset, the
    same file); a list too long for a file name becomes the first names and a digest of them all."""
    if experiments_only is None and collections_only is None:
        return FULL_REPORT

    def names(chosen: Iterable[str] | str | None) -> str:
        if chosen is None:
            return "all"
        return "+".join(sorted({str(chosen)} if isinstance(chosen, str) else {str(name) for name in chosen}))

    subset = names(experiments_only) + (f"-on-{names(collections_only)}" if collections_only is not None else "")
    if len(subset) > _REPORT_NAME_LIMIT:
        digest = hashlib.sha256(subset.encode("utf-8")).hexdigest()[:12]
        subset = f"{subset[:_REPORT_NAME_LIMIT - 13]}-{digest}"
    return f"results/report-{subset}.html"


def raw_file_rows(spec, mirror: str | os.PathLike | None, resources_dir: str | os.PathLike,
                  cache) -> list[dict[str, str]]:
    """The raw files a collection's jobs read, as the report lists them: each registry file (its name
    there: an absolute path as written, else the name under the mirror folder) with the sha256 of
    the file found (:func:`irgrid.collections.provenance.content_digest`); a file not downloaded yet
    shows the registry's checksum, which its download must match. ``cache``: a DigestCache."""
    # deferred: the collection readers are imported only when a manifest is written
    from ..collections.provenance import NOT_AVAILABLE, content_digest
    from ..collections.sources import CollectionNotAvailable, resolve_files

    if spec.format == "ir_datasets":
        return [{"role": "all", "file": f"ir_datasets {spec.irds_id}", "sha256": "(ir_datasets keeps its own copy)"}]
    try:
        found = resolve_files(spec, mirror=mirror, resources_dir=resources_dir, download=False, verify=False)
    except CollectionNotAvailable:
        found = {}
    rows = []
    for role, name in spec.files.items():
        path = found.get(role)
        if path is not None and Path(path).exists():
            digest = content_digest(Path(path), cache)
        elif name in spec.sha256:
            digest = f"{spec.sha256[name]} (the registry's; not downloaded yet)"
        else:
            digest = NOT_AVAILABLE
        rows.append({"role": role, "file": name, "sha256": digest})
    return rows


def warning_sources(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """Where the report finds the warnings it lists: the config's (:func:`irgrid.config.run_warnings`)
    and the job logs' directories of its collections and experiments, whose ``*.warnings.jsonl``
    files the jobs wrote (:mod:`irgrid.jobs.job_warnings`)."""
    experiments = config["_experiments"]
    collections = sorted({collection for e in experiments.values() for collection in e["collections"]})
    logs = [f"logs/{collection}" for collection in collections]
    for name in experiments:
        logs += [f"logs/tables/{name}", f"logs/axioms/{name}", f"logs/figures/{name}.warnings.jsonl"]
    return {"config": run_warnings(config), "logs": logs}


def benchmark_path(chunk: Chunk) -> str:
    """A chunk job's Snakemake benchmark file (rule chunk writes it there)."""
    job = chunk.log_path().removeprefix("logs/").removesuffix(".log")
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


def report_manifest(config: Mapping[str, Any], chunks: Sequence[Chunk],
                    raw_files: Mapping[str, list[dict[str, str]]] | None = None) -> dict[str, Any]:
    """What the report reads and shows; ``raw_files``: collection -> :func:`raw_file_rows` (the files
    read and their digests; without it the report lists the registry's checksums)."""
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
    digests: dict[tuple[str, str, str], Any] = {}  # cell_digests of each collection, analyzer and query set
    jobs: dict[int, tuple[str, str, str]] = {}  # each chunk's benchmark, job name, evaluation file, made once
    experiments = {}
    for name, experiment in config["_experiments"].items():
        analyzers = experiment_analyzers(experiment)
        several = len(analyzers) > 1
        cells = []
        for cell in experiment_cells(config, name):
            chunk = chunk_of[cell.run_path]
            index = f"results/{cell.collection}/index/{cell.analyzer}"
            key = (cell.collection, cell.analyzer, cell.queryset)
            if key not in digests:
                indexes[index] = {"collection": cell.collection, "analyzer": cell.analyzer}
                benchmarks[index_benchmark_path(cell.collection, cell.analyzer)] = {
                    "stage": "index", "job": f"build_index {cell.collection}/{cell.analyzer}",
                    "collection": cell.collection}
                digests[key] = cell_digests(config["analyzers"][cell.analyzer], entry(cell.collection), cell.queryset,
                                            depth, config["measures"])
            if id(chunk) not in jobs:
                jobs[id(chunk)] = (benchmark_path(chunk), chunk.rule_name("chunk"), chunk.evaluation_path)
                benchmarks[jobs[id(chunk)][0]] = {"stage": "retrieve and evaluate", "job": jobs[id(chunk)][1],
                                                  "collection": cell.collection}
            job, _, evaluation = jobs[id(chunk)]
            cells.append({
                "collection": cell.collection,
                "queryset": f"{cell.queryset}, {cell.analyzer}" if several else cell.queryset,
                "analyzer": cell.analyzer, "model": cell.model, "family": cell.family, "params": cell.params,
                "run": cell.run_path, "evaluation": evaluation, "index": index, "chunk_benchmark": job,
                "chunk_points": len(chunk.cells),
                "digest": digests[key](cell.family, cell.params),
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
                                     "digest": cell_digest("", "", {}, entry(collection), "", 0, []),
                                     **({"files": raw_files[collection]} if raw_files and collection in raw_files
                                        else {})}
                        for collection in collections},
        "benchmarks": benchmarks,
        "indexes": indexes,
        "settings": {"depth": depth, "measures": list(config["measures"]),
                     "chunk_size": config["retrieval"]["chunk_size"],
                     "max_chunks": config["retrieval"].get("max_chunks")},
        "warnings": warning_sources(config),
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


def report_input_files(config: Mapping[str, Any], chunk_evaluations: Iterable[str]) -> list[str]:
    """The files the report reads (:func:`manifest_inputs` of the manifest), without listing its cells:
    ``chunk_evaluations`` are the evaluation files of the experiments' cells (each chunk's benchmark
    sits beside its job's log path)."""
    paths = []
    indexes, index_benchmarks = [], []
    for name, experiment in config["_experiments"].items():
        for selection in experiment["tables"]:
            paths += [f"results/tables/{name}/{TABLE_STEMS[selection]}.csv",
                      f"results/tables/{name}/{TABLE_STEMS[selection]}.html"]
        paths += [f"results/tables/{name}/violations.html"] if experiment["axioms"] else []
        paths += experiment_figures(name, experiment)
        paths += [f"results/tables/{name}/findings.csv", f"results/tables/{name}/per_query.html",
                  f"results/figures/{name}/per_query.svg"]
        for collection in experiment["collections"]:
            for analyzer in experiment_analyzers(experiment):
                indexes.append(f"results/{collection}/index/{analyzer}")
                index_benchmarks.append(index_benchmark_path(collection, analyzer))
    chunk_benchmarks = [f"results/benchmarks/{path.removeprefix('results/').removesuffix('.parquet')}.tsv"
                        for path in chunk_evaluations]
    return list(dict.fromkeys(paths + indexes + index_benchmarks + chunk_benchmarks))


def manifest_digest(config: Mapping[str, Any], chunks: Sequence[Chunk],
                    raw_files: Mapping[str, list[dict[str, str]]] | None = None) -> str:
    """sha256 of what :func:`report_manifest` is made from: the experiments and their sources, the
    registry entries, analyzers and settings it reads, the chunks (their labels and sizes: which
    cells they hold follows from the experiments), the raw files' rows and the warnings. The report
    rule's tracked param: the same inputs, the same manifest, and the manifest is not made to plan."""
    registry = config["_registry"]
    collections = sorted({collection for e in config["_experiments"].values() for collection in e["collections"]})
    parts = {
        "experiments": config["_experiments"],
        "sources": config.get("_experiment_sources", {}),
        "registry": {collection: registry[collection].to_dict() for collection in collections},
        "analyzers": config["analyzers"],
        "settings": [config["retrieval"]["depth"], config["retrieval"]["chunk_size"], config["retrieval"].get("max_chunks"),
                     list(config["measures"])],
        "chunks": [[c.collection, c.analyzer, c.queryset, c.label, len(c.cells)] for c in chunks],
        "raw_files": raw_files or {},
        "warnings": warning_sources(config),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def workflow_manifest(workflow_config: Mapping[str, Any], source: str = "config",
                      raw_files: Mapping[str, list[dict[str, str]]] | None = None) -> dict[str, Any]:
    """The manifest of a workflow run, made in the report job from Snakemake's ``config`` (validated,
    the experiments to run chosen: common.smk): the whole config's chunks, the run's experiments and
    collections (``experiments_only``, ``collections_only``), as the workflow plans them."""
    whole = load_config(workflow_config, source=source, selected=workflow_config.get("experiments_only"))
    chosen = select_subset(whole, workflow_config.get("experiments_only"), workflow_config.get("collections_only"))
    return report_manifest(chosen, retrieval_chunks(whole), raw_files)


def manifest_plan(workflow_config: Mapping[str, Any], source: str, raw_files: Mapping[str, Any]) -> str:
    """What the report rule hands ``irgrid report --plan -`` (JSON): :func:`workflow_manifest`'s arguments."""
    return json.dumps({"config": workflow_config, "source": source, "raw_files": raw_files}, sort_keys=True)
