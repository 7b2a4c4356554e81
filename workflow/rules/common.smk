# Config validation and the input helpers every stage uses. Logic lives in irgrid.config.
import functools
import hashlib
import json
import shlex
import sys
from pathlib import Path

from snakemake.settings.types import DeploymentMethod

from irgrid.collections.provenance import DigestCache, step_provenance
from irgrid.index.format import FORMAT_VERSION as INDEX_FORMAT_VERSION
from irgrid.feedback import is_feedback_family
from irgrid.index.forward import forward_index_dir
from irgrid.config import experiment_analyzers, experiment_cells, load_config, model_family, resolve_path, retrieval_chunks
from irgrid.config import model_bounds, select_subset
from irgrid.config import check_raw_files, config_source, replace_default_experiments, run_warnings
from irgrid.config import validate as validate_config
from irgrid.jobs.placement import index_placement
from irgrid.jobs.scheduler_timers import coalesce_reevaluation_timers
from irgrid.models import get_model
from irgrid.querysets import FILTERED_QUERYSET_WILDCARD
from irgrid.report.manifest import manifest_digest, manifest_plan, raw_file_rows, report_input_files, report_path


# The Snakefile's configfile, and the files of --configfile merged over it.
DEFAULT_CONFIGFILE = "config/config.yaml"
# Errors name the config files in use: a --configfile's, over the default one.
CONFIG_SOURCE = config_source(DEFAULT_CONFIGFILE, workflow.overwrite_configfiles, bool(workflow.config_settings.config))
# A --configfile naming experiments runs those, not the default experiments as well (irgrid.config).
replace_default_experiments(config, DEFAULT_CONFIGFILE, workflow.overwrite_configfiles, workflow.config_settings.config)
# The package's validation (not snakemake.utils.validate): the first problem in one line, an unknown
# key with the closest known one, instead of the whole schema; schema defaults filled into `config`.
validate_config(config, "config.schema.yaml", CONFIG_SOURCE)
# Snakemake's scheduler would start one more re-evaluation timer at each pass, a crowd that grows
# with the finished jobs and re-selects jobs ever more often: one pending timer does the same work
# (irgrid.jobs.scheduler_timers). Off: --config snakemake_scheduler='{coalesce_timers: false}'.
if config["snakemake_scheduler"]["coalesce_timers"]:
    coalesce_reevaluation_timers()
# Only the experiments this run targets must be valid; another that is not is left out, with a warning.
IRGRID_ALL = load_config(config, source=CONFIG_SOURCE, selected=config["experiments_only"])
# What this run targets: every experiment and collection, or those of --config experiments_only=[...]
# collections_only=[...]. Chunks, rules and params come from IRGRID_ALL, so a subset run makes the
# very files a full run makes (and a later full run redoes none); only tables, figures and the
# report describe the subset. --config reaches cluster jobs too, so jobs see the same subset.
IRGRID = select_subset(IRGRID_ALL, config["experiments_only"], config["collections_only"])
# A wrong raw-file path in the registry stops the dry run, not the job reading it.
check_raw_files(IRGRID, mirror=config["mirror"], resources_dir=config["resources"])
# The config's warnings (query sets some collections lack, titles naming other collections), once
# per run: not again in each cluster job, which parses this file too.
if workflow.is_main_process:
    for warning in run_warnings(IRGRID):
        print(f"irgrid warning: {warning}", file=sys.stderr)
# The report of the whole config, or a subset run's own (results/report.html is never a subset's).
REPORT_PATH = report_path(config["experiments_only"], config["collections_only"])
REPORT_NAME = Path(REPORT_PATH).stem
# Jobs call the `irgrid` command of the environment running Snakemake, so
# `.venv/bin/snakemake` works without activating the virtual environment.
# Not with --use-conda: there the rule's environment must provide `irgrid`.
if DeploymentMethod.CONDA not in workflow.deployment_settings.deployment_method:
    shell.prefix(f'export PATH="{Path(sys.executable).parent}:$PATH"; ')
REGISTRY = str(resolve_path(config["registry"]))
# The retrieve and evaluate jobs: every cell of every experiment in exactly one chunk.
RETRIEVAL_CHUNKS = retrieval_chunks(IRGRID_ALL)
# The chunk of each (collection, analyzer, query set, label): what rule chunk's job scores.
CHUNKS_BY_KEY = {(chunk.collection, chunk.analyzer, chunk.queryset, chunk.label): chunk for chunk in RETRIEVAL_CHUNKS}
# Each cell's chunk evaluation file, by the cell's run path (the key experiments share).
CHUNK_EVALUATION_OF_CELL = {path: chunk.evaluation_path for chunk in RETRIEVAL_CHUNKS for path in chunk.run_paths}
# Where index builds run: local Dask processes, dask.scheduler or a dask.cluster the job starts.
INDEX_PLACEMENT = index_placement(config["dask"])
# The families whose runs come with a table of each query's phrases and their weights.
PHRASE_FAMILIES = ("p", "pu", "pm")


wildcard_constraints:
    collection="[^/]+",
    queryset="[^/]+",
    analyzer="[^/]+",
    model="[^/]+",
    params="[^/]+",
    experiment="[^/]+",
    parameter="[A-Za-z0-9_]+",
    table="table|table_cv|table_tuned",
    label="(parses-)?([01]+|all)",


# Digests of the raw collection files, kept between runs so that a dry run hashes only new or changed files.
SOURCE_DIGESTS = DigestCache(".snakemake/irgrid/source-digests.json")


def collection_provenance(step):
    """A collection step's tracked param: the registry fields it reads and the sha256 of each raw file it
    reads (irgrid.collections.provenance). A fixed source file or an edited field reruns the step; a moved
    mirror does not."""

    def provenance(wildcards):
        return step_provenance(IRGRID["_registry"][wildcards.collection], step, getattr(wildcards, "queryset", None),
                               mirror=config["mirror"], resources_dir=config["resources"], cache=SOURCE_DIGESTS)

    return provenance


def collection_sources(wildcards, output):
    """Where the raw files are read from (registry, mirror, download directory). A params function of
    `output` is one Snakemake (>= 9.1.5) counts as derived and does not record as a rerun trigger: a
    moved mirror or registry changes no result; what the files hold is tracked by collection_provenance."""
    args = f"--registry {shlex.quote(REGISTRY)} --resources {shlex.quote(config['resources'])}"
    return args + (f" --mirror {shlex.quote(config['mirror'])}" if config["mirror"] else "")


def analyzer_json(wildcards):
    return json.dumps(config["analyzers"][wildcards.analyzer], sort_keys=True)


def phrase_options(wildcards):
    """The settings of the method that identifies a query set's phrases: a change remakes that query set only."""
    settings = IRGRID["phrases"]
    keys = {"list": ["list"], "pmi": ["pmi_threshold", "min_count"], "segmenter": ["convert"]}[wildcards.method]
    return json.dumps({key: settings[key] for key in keys}, sort_keys=True)


def phrase_list_path():
    path = IRGRID["phrases"]["list"]
    if not path:
        raise ValueError("a query set X+list needs a phrase list: set phrases.list in the config")
    return path


def phrase_topics_inputs(wildcards):
    inputs = {"topics": f"results/{wildcards.collection}/topics/{wildcards.queryset}.parquet"}
    if wildcards.method == "pmi":
        inputs["docs"] = f"results/{wildcards.collection}/docs"
    if wildcards.method == "list":
        inputs["phrase_list"] = phrase_list_path()
    return inputs


def phrase_topics_arguments(wildcards):
    if wildcards.method == "pmi":
        return f"--docs results/{wildcards.collection}/docs"
    if wildcards.method == "list":
        return f"--phrase-list {shlex.quote(phrase_list_path())}"
    return ""


def family_of_model(wildcards):
    return model_family(IRGRID_ALL, wildcards.model)


def parses_path(collection, family):
    """The collection's sentence parses where the model family scores parse-tree features, else None."""
    return f"results/{collection}/parses" if get_model(family).uses_parses else None


def parses_argument(collection, family):
    path = parses_path(collection, family)
    return f"--parses {path}" if path else ""


def retrieval_inputs(collection, analyzer, queryset, family):
    inputs = {"index": f"results/{collection}/index/{analyzer}",
              "topics": f"results/{collection}/topics/{queryset}.parquet"}
    parses = parses_path(collection, family)
    if parses:
        inputs["parses"] = parses
    if is_feedback_family(family):  # feedback reads its documents' terms (IndexReader.forward)
        inputs["forward"] = str(forward_index_dir(inputs["index"]))
    return inputs


def chunk_of(wildcards):
    """The chunk a rule chunk job makes (from its path's wildcards); a label of no chunk is an error naming it."""
    key = (wildcards.collection, wildcards.analyzer, wildcards.queryset, wildcards.label)
    if key not in CHUNKS_BY_KEY:
        where = ", ".join(f"{name} {value}" for name, value in zip(("collection", "analyzer", "query set", "label"), key))
        raise ValueError(f"no chunk of the config has {where}: chunk files are made for the config's chunks only")
    return CHUNKS_BY_KEY[key]


def chunk_inputs(wildcards):
    chunk = chunk_of(wildcards)
    inputs = {**retrieval_inputs(chunk.collection, chunk.analyzer, chunk.queryset, chunk.families[0]),
              "qrels": f"results/{chunk.collection}/qrels.parquet"}
    if any(is_feedback_family(family) for family in chunk.families):
        inputs["forward"] = str(forward_index_dir(inputs["index"]))
    return inputs


def evaluation_files(cells):
    """The chunk evaluation files holding ``cells``, each once, in first-use order."""
    return list(dict.fromkeys(CHUNK_EVALUATION_OF_CELL[cell.run_path] for cell in cells))


def cell_inputs(wildcards):
    return retrieval_inputs(wildcards.collection, wildcards.analyzer, wildcards.queryset, family_of_model(wildcards))


@functools.cache
def cells_of(experiment):
    """The cells of an experiment in this run's config, listed once: the input and params functions
    of its jobs ask for them again and again while the DAG is built (listing them each time was a
    large share of a dry run)."""
    return tuple(experiment_cells(IRGRID, experiment))


@functools.cache
def experiment_evaluation_files(experiment):
    """The chunk evaluation files of an experiment's cells, listed once (tables, findings and the report ask)."""
    return tuple(evaluation_files(cells_of(experiment)))


def experiment_evaluations(wildcards):
    return list(experiment_evaluation_files(wildcards.experiment))


def experiment_table_inputs(wildcards):
    """A table's evaluations, and its query sets' topics where it shows query subsets (read for their qids)."""
    experiment = IRGRID["_experiments"][wildcards.experiment]
    cells = cells_of(wildcards.experiment)
    topics = sorted({f"results/{c.collection}/topics/{c.queryset}.parquet" for c in cells}) if experiment["query_subsets"] else []
    return [*experiment_evaluation_files(wildcards.experiment), *topics]


def experiment_collection_cells(wildcards):
    """The table cells of one collection, with the evaluation, index and topics paths the analysis reads
    (it scores the best runs again: runs are not kept)."""
    return json.dumps([cell for cell in json.loads(experiment_table_cells(wildcards)) if cell["collection"] == wildcards.collection])


def experiment_collection_inputs(wildcards):
    """The violation counting's inputs: with each index its forward index (IndexReader.forward finds it there)."""
    cells = json.loads(experiment_collection_cells(wildcards))
    return sorted({path for cell in cells for path in (cell["path"], cell["index"], cell["topics"],
                                                       str(forward_index_dir(cell["index"])))})


def experiment_families(wildcards):
    models = IRGRID["_experiments"][wildcards.experiment]["models"]
    return json.dumps({name: model["family"] for name, model in models.items()}, sort_keys=True)


def experiment_axiom_options(wildcards):
    """The violation table's options: the paper's models, the common run and the fewest-violations claim."""
    experiment = IRGRID["_experiments"][wildcards.experiment]
    options = [f"--paper-models {shlex.quote(json.dumps(experiment['paper_models']))}",
               f"--common-run {shlex.quote(experiment['axiom_common_run'])}"]
    if experiment["axiom_fewest_violations"]:
        options.append(f"--fewest-violations {shlex.quote(experiment['axiom_fewest_violations'])}")
    return " ".join(options)


def experiment_violation_files(wildcards):
    experiment = IRGRID["_experiments"][wildcards.experiment]
    return [f"results/axioms/{wildcards.experiment}/{collection}.parquet" for collection in experiment["collections"]]


def untracked(cells_json):
    """A params function of the job's cells that Snakemake does not store as a rerun trigger (a params
    function taking `output`, common.smk's collection_sources): an experiment's cells are megabytes
    of JSON at 100,000 cells, kept in .snakemake/metadata for every output file of its jobs. Their
    digest (digest_of) is the tracked param: the same cells, the same digest."""
    return lambda wildcards, output: cells_json(wildcards)


def digest_of(cells_json):
    return lambda wildcards: hashlib.sha256(cells_json(wildcards).encode("utf-8")).hexdigest()


def experiment_table_cells(wildcards):
    return table_cells_json(wildcards.experiment)


@functools.cache
def table_cells_json(experiment_name):
    # A table row is a (collection, query set) pair; an experiment run with several analyzers
    # gets a row per analyzer too, labelled in the query-set position ("text, porter").
    several_analyzers = len(experiment_analyzers(IRGRID["_experiments"][experiment_name])) > 1
    cells = [
        {
            "collection": cell.collection,
            "queryset": f"{cell.queryset}, {cell.analyzer}" if several_analyzers else cell.queryset,
            "analyzer": cell.analyzer,
            "run": cell.run_path,
            "index": f"results/{cell.collection}/index/{cell.analyzer}",
            "topics": f"results/{cell.collection}/topics/{cell.queryset}.parquet",
            "model": cell.model,
            "params": cell.params,
            "path": CHUNK_EVALUATION_OF_CELL[cell.run_path],
        }
        for cell in cells_of(experiment_name)
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
        "alternative": experiment["alternative"],
        "correction": experiment["correction"],
        "subsets": experiment["query_subsets"],
        "query_counts": experiment["query_counts"],
        "selection": TABLE_SELECTIONS[getattr(wildcards, "table", "table")],
        "tune_on": experiment["tune_on"],
        "bounds": model_bounds(experiment),
    }
    return json.dumps(spec, sort_keys=True)


def experiment_selection_spec(wildcards):
    """What picks each model's best run, and nothing else: the violation analysis reruns only when it changes."""
    experiment = IRGRID["_experiments"][wildcards.experiment]
    spec = {
        "experiment": wildcards.experiment,
        "models": list(experiment["models"]),
        "baseline": experiment["baseline"],
        "select_by": experiment["select_by"],
    }
    return json.dumps(spec, sort_keys=True)


TABLE_STEMS = {"best": "table", "cv": "table_cv", "tuned": "table_tuned"}
TABLE_SELECTIONS = {stem: selection for selection, stem in TABLE_STEMS.items()}
FIGURES = ["by_method", "sensitivity"]


def experiment_outputs(name):
    """Tables (HTML) and figures (SVG) one experiment produces."""
    experiment = IRGRID["_experiments"][name]
    tables = [f"results/tables/{name}/{TABLE_STEMS[selection]}.html" for selection in experiment["tables"]]
    figures = [f"results/figures/{name}/{figure}.svg" for figure in FIGURES] if experiment["figures"] else []
    figures += [f"results/figures/{name}/parameter-{parameter}.svg" for parameter in experiment["parameter_figures"]]
    if experiment["axioms"]:
        tables.append(f"results/tables/{name}/violations.html")
        figures.append(f"results/figures/{name}/violations_vs_measure.svg")
    return {"tables": tables, "figures": figures}


def report_inputs(wildcards):
    return [path for name in IRGRID["_experiments"] for paths in experiment_outputs(name).values() for path in paths]


def phrase_weight_files():
    """For every phrase model (p, pu, pm) of every experiment: its phrases and weights, per query set."""
    return sorted({
        f"results/{cell.collection}/phrases/{cell.analyzer}/{cell.queryset}/{cell.model}.tsv"
        for name in IRGRID["_experiments"]
        for cell in cells_of(name)
        if cell.family in PHRASE_FAMILIES
    })


def phrase_weight_points(wildcards):
    """The model's grid points on that query set (the weight settings the file shows)."""
    key = (wildcards.collection, wildcards.analyzer, wildcards.queryset, wildcards.model)
    return sorted(grid_points_by_target().get(key, ()))


@functools.cache
def grid_points_by_target():
    """{(collection, analyzer, query set, model): its grid points} over every experiment of the whole
    config, made once rather than per phrase_weights job."""
    points = {}
    for name in IRGRID_ALL["_experiments"]:
        for cell in experiment_cells(IRGRID_ALL, name):
            points.setdefault((cell.collection, cell.analyzer, cell.queryset, cell.model), set()).add(cell.params)
    return points


def get_final_output():
    return report_inputs(None) + phrase_weight_files() + [REPORT_PATH]


# The report (workflow/rules/report.smk): findings, per-query evidence, provenance.


def findings_inputs(wildcards):
    """The evaluations of an experiment and its query sets' topics (the queries' text)."""
    cells = cells_of(wildcards.experiment)
    topics = sorted({f"results/{c.collection}/topics/{c.queryset}.parquet" for c in cells})
    return [*experiment_evaluation_files(wildcards.experiment), *topics]


@functools.cache
def report_raw_files():
    """The raw files of the report's collections and their digests (kept between runs: SOURCE_DIGESTS)."""
    collections = {collection for experiment in IRGRID["_experiments"].values() for collection in experiment["collections"]}
    return {collection: raw_file_rows(IRGRID["_registry"][collection], mirror=config["mirror"],
                                      resources_dir=config["resources"], cache=SOURCE_DIGESTS)
            for collection in sorted(collections)}


def report_plan(wildcards, output):
    """What the report job makes its manifest from (irgrid.report.manifest.workflow_manifest): this run's
    config, not the manifest, whose every cell would be listed to plan. Untracked (a function of
    `output`); report_manifest_digest is the tracked param."""
    return manifest_plan(config, CONFIG_SOURCE, report_raw_files())


def report_manifest_digest(wildcards):
    return manifest_digest(IRGRID, RETRIEVAL_CHUNKS, report_raw_files())


def all_report_inputs(wildcards):
    evaluations = dict.fromkeys(path for name in IRGRID["_experiments"] for path in experiment_evaluation_files(name))
    return report_input_files(IRGRID, evaluations)
