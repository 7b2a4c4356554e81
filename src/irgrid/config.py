"""Loading and validating the workflow configuration, and listing an experiment's grid cells.

The Snakefile calls these so that what the workflow runs is decided by code that
tests can call without Snakemake. Schemas live in ``workflow/schemas``; every
key is described there, and a wrong key or value stops the run with a message
naming it.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .analysis.stopwords import BUILTIN_STOPLISTS
from .errors import ConfigError
from .evaluation.measure_names import canonical_measures
from .evaluation.ties import beside_each, is_tie_aware_name
from .experiment_checks import check_querysets, check_title
from .grid import HASH_BITS, POINT_DIGEST_BITS, encode_point, expand_grid, interleaved_point_digest, point_hash
from .models import get_model
from .querysets import base_queryset, check_queryset_name
from .schema_errors import describe_schema_error

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = REPO_ROOT / "workflow" / "schemas"


def load_yaml(path: str | os.PathLike) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None


def resolve_path(path: str | os.PathLike, base: Path = REPO_ROOT) -> Path:
    """A config path as given (relative to the working directory) or, failing that, relative to the repo."""
    candidate = Path(path)
    if candidate.is_absolute() or candidate.exists():
        return candidate
    return base / candidate


def validate(data: Any, schema_name: str, source: str) -> Any:
    """Validate ``data`` against ``workflow/schemas/{schema_name}``, filling in schema defaults.

    The first problem becomes one line naming ``source`` and the key (:func:`describe_schema_error`),
    not jsonschema's dump of the whole schema.
    """
    schema = load_yaml(SCHEMA_DIR / schema_name)
    validator_class = jsonschema.validators.validator_for(schema)
    fill_defaults = _extend_with_defaults(validator_class)
    errors = sorted(fill_defaults(schema).iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise ConfigError(f"{source}: {describe_schema_error(errors[0])}")
    return data


#: What a name that reaches a path or a job name may hold: it becomes a directory in
#: ``results/{collection}/runs/{analyzer}/{queryset}/{model}/``, so ``/`` would make two levels and
#: ``..`` would leave the directory; blanks and shell characters would break commands.
SAFE_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


def check_name(name: Any, what: str, source: str, key: str) -> str:
    """``name`` if it is a safe file name (:data:`SAFE_NAME`, not ``.`` or ``..``), else a ConfigError.

    The error names the config file (``source``), the key holding the name and what is allowed.
    """
    text = str(name)
    if not SAFE_NAME.fullmatch(text) or text in (".", ".."):
        raise ConfigError(f"{source}: {key}: {what} name {text!r} is not allowed: a name becomes part of "
                          "result paths, so it must be letters, digits, '_', '-', '.' or '+' "
                          "(not '.' or '..', no '/' or blanks)")
    return text


def _extend_with_defaults(validator_class):
    """A validator that also writes each property's schema default into the instance."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema and name not in instance:
                    instance[name] = subschema["default"]
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


@dataclass(frozen=True)
class Cell:
    """One grid cell: a model at one parameter point on one collection's query set."""

    experiment: str
    collection: str
    queryset: str
    analyzer: str
    model: str
    family: str
    params: str  # canonical encoding (irgrid.grid)

    @property
    def run_path(self) -> str:
        return cell_path("runs", self.collection, self.analyzer, self.queryset, self.model, self.params)

    @property
    def eval_path(self) -> str:
        return cell_path("eval", self.collection, self.analyzer, self.queryset, self.model, self.params)


def chunk_evaluation_path(collection: str, analyzer: str, queryset: str, label: str) -> str:
    """A chunk's evaluation file (one wildcard rule makes every chunk's: the label is in the path)."""
    return f"results/{collection}/eval/{analyzer}/{queryset}/chunk-{label}.parquet"


def cell_path(kind: str, collection: str, analyzer: str, queryset: str, model: str, params: str) -> str:
    """A cell's run (``kind='runs'``) or per-query evaluation (``kind='eval'``): the paths tables read."""
    return f"results/{collection}/{kind}/{analyzer}/{queryset}/{model}/{params}.parquet"


def load_config(config: Mapping[str, Any], source: str = "config",
                selected: Iterable[str] | str | None = None) -> dict[str, Any]:
    """Validate the main config and load the experiments and collection registry it names.

    ``selected``: the experiments this run targets (``experiments_only``; None: all). Only those must
    be valid: another experiment that fails a check (a default experiment naming a collection the
    user's registry lacks) is left out of the config with a warning (:func:`run_warnings`), since
    nothing of it runs. Warnings the checks find (query sets some collections lack, a title naming
    a collection the experiment does not run) are kept in ``config["_warnings"]``.
    """
    config = validate(dict(config), "config.schema.yaml", source)
    from .collections import load_registry  # imported late: the readers are heavier

    registry_path = resolve_path(config["registry"])
    config["_registry"] = load_registry(registry_path)
    chosen = None if selected is None else {str(name) for name in ([selected] if isinstance(selected, str)
                                                                     else selected)}
    _check_global_names(config, source, str(registry_path))
    config["measures"] = canonical_measures(config["measures"], "measures")
    experiments = {}
    sources = {}  # experiment -> its file (or config key), for errors about its contents
    warnings: list[dict[str, str]] = []
    families: dict[str, str] = {}  # model name -> family, the same in every experiment
    for name, experiment in config["experiments"].items():
        found: list[dict[str, str]] = []
        try:
            check_name(name, "experiment", source, f"experiments/{name}")
            if isinstance(experiment, str):
                path = resolve_path(experiment)
                where = str(path)
                experiment = validate(load_yaml(path), "experiment.schema.yaml", where)
            else:
                where = f"{source}: experiments/{name}"
                experiment = validate(dict(experiment), "experiment.schema.yaml", where)
            _check_experiment_names(experiment, where)
            _check_experiment(config, name, experiment, where, families, found)
        except ConfigError as error:
            if chosen is None or name in chosen:
                raise
            warnings.append({"experiment": name, "message": f"experiment {name!r} is left out of this run "
                                                            f"(not in experiments_only and not valid here): {error}"})
            continue
        sources[name] = where
        experiments[name] = experiment
        warnings += found
    config["_experiments"] = experiments
    # Where each experiment was read from, for errors found after validation (names, parameter ranges).
    config["_experiment_sources"] = sources
    config["_warnings"] = warnings
    _check_stop_lists(config, source)
    return config


def run_warnings(config: Mapping[str, Any], every: bool = False) -> list[str]:
    """The warnings of the experiments ``config`` targets (after :func:`select_subset`), one line each;
    ``every``: of every experiment, those left out of the run included."""
    experiments = config.get("_experiments", {})
    return [warning["message"] for warning in config.get("_warnings", [])
            if every or warning["experiment"] in experiments]


def replace_default_experiments(config: dict[str, Any], default_configfile: str | os.PathLike,
                                cli_configfiles: Iterable[str | os.PathLike], overrides: Mapping[str, Any]) -> dict:
    """A ``--configfile`` that names ``experiments`` runs those, not the default config's as well.

    Snakemake merges a ``--configfile`` into the Snakefile's ``config/config.yaml`` key by key, so
    a researcher's file naming their one experiment would also get every default experiment (and
    their collections, which the researcher's registry may lack). The experiments of the given
    files (and of ``--config experiments=...``) replace the default file's; every other key still
    merges (analyzers, measures... come from config/config.yaml unless the file sets them).
    """
    default = Path(default_configfile).resolve()
    named: dict[str, Any] = {}
    replaced = False
    for path in cli_configfiles:
        if Path(path).resolve() == default:
            continue
        data = load_yaml(path)
        if isinstance(data, Mapping) and isinstance(data.get("experiments"), Mapping):
            named.update(data["experiments"])
            replaced = True
    if replaced:
        if isinstance(overrides.get("experiments"), Mapping):
            named.update(overrides["experiments"])
        config["experiments"] = named
    return config


def config_source(default_configfile: str | os.PathLike, cli_configfiles: Iterable[str | os.PathLike],
                  overrides: bool) -> str:
    """What config errors name as the config's origin: the files given with ``--configfile`` (over the
    Snakefile's default file, named once if given again) and whether ``--config`` overrode keys."""
    default = Path(default_configfile).resolve()
    given = [str(path) for path in cli_configfiles if Path(path).resolve() != default]
    extra = ", and --config overrides" if overrides else ""
    if given:
        return f"{', '.join(given)} (over {default_configfile}{extra})"
    return f"{default_configfile}{' (and --config overrides)' if overrides else ''}"


def _check_global_names(config: Mapping[str, Any], source: str, registry_source: str) -> None:
    """Analyzer and registry names that become path parts or job names (:func:`check_name`)."""
    for analyzer in config["analyzers"]:
        check_name(analyzer, "analyzer", source, f"analyzers/{analyzer}")
    for collection, spec in config["_registry"].items():
        check_name(collection, "collection", registry_source, collection)
        for queryset in spec.querysets:
            check_name(queryset, "query set", registry_source, f"{collection}/querysets/{queryset}")


def _check_experiment_names(experiment: Mapping[str, Any], where: str) -> None:
    """An experiment's names that become path parts or job names, where they are written."""
    for queryset in experiment.get("querysets") or []:
        check_name(queryset, "query set", where, "querysets")
        check_queryset_name(queryset, where, "querysets")
    for analyzer in experiment_analyzers(experiment):
        check_name(analyzer, "analyzer", where, "analyzer")
    for model_name, model in experiment["models"].items():
        check_name(model_name, "model", where, f"models/{model_name}")
        for parameter in model.get("grid", {}):
            check_name(parameter, "parameter", where, f"models/{model_name}/grid/{parameter}")


def _check_stop_lists(config: Mapping[str, Any], source: str) -> None:
    """A stop list that is neither a built-in name nor an existing file stops the run before any job.

    Found by the index job instead, a typo would fail only after ``snakemake -n`` had passed and
    the job had started replacing the analyzer's index.
    """
    for name, analyzer in config["analyzers"].items():
        stopwords = analyzer.get("stopwords", "none")
        if stopwords in BUILTIN_STOPLISTS or Path(stopwords).is_file():
            continue
        close = difflib.get_close_matches(stopwords, BUILTIN_STOPLISTS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{source}: analyzers/{name}/stopwords: stop list {stopwords!r} is neither one of "
                          f"{', '.join(BUILTIN_STOPLISTS)} nor an existing file{hint}")


def _resolve_axiom_models(experiment: dict[str, Any], where: str) -> None:
    """Fill the defaults of paper_models (all models) and axiom_common_run (the baseline), and check
    that they and axiom_fewest_violations name the experiment's models."""
    models = list(experiment["models"])
    if experiment.get("paper_models") is None:
        experiment["paper_models"] = models
    unknown = [name for name in experiment["paper_models"] if name not in experiment["models"]]
    if unknown:
        raise ConfigError(f"{where}: paper_models names {unknown[0]!r}, which is not one of its models {sorted(models)}")
    if experiment.get("axiom_common_run") is None:
        experiment["axiom_common_run"] = experiment["baseline"]
    if experiment["axiom_common_run"] not in experiment["models"]:
        raise ConfigError(f"{where}: axiom_common_run {experiment['axiom_common_run']!r} is not one of its models "
                          f"{sorted(models)}")
    fewest = experiment.get("axiom_fewest_violations")
    if fewest is not None and fewest not in experiment["paper_models"]:
        raise ConfigError(f"{where}: axiom_fewest_violations {fewest!r} is not one of its paper_models "
                          f"{experiment['paper_models']}")


def _check_experiment(config: Mapping[str, Any], name: str, experiment: dict[str, Any], where_file: str,
                      families: dict[str, str], warnings: list[dict[str, str]]) -> None:
    """Names one experiment uses must exist and mean one thing everywhere (``families``: model name ->
    family over the experiments checked so far, extended only if this one passes)."""
    registry = config["_registry"]
    where = f"{where_file}: experiment {name!r}"
    for collection in experiment["collections"]:
        if collection not in registry:
            raise ConfigError(f"{where}: unknown collection {collection!r}; the registry has {sorted(registry)}")
        if experiment.get("querysets") and not experiment_querysets(experiment, registry[collection]):
            raise ConfigError(
                f"{where}: collection {collection!r} has none of the query sets {experiment['querysets']}; "
                f"it has {sorted(registry[collection].querysets)}"
            )
    check_querysets(experiment, registry, name, where, warnings)
    check_title(experiment, registry, name, warnings)
    for analyzer in experiment_analyzers(experiment):
        if analyzer not in config["analyzers"]:
            raise ConfigError(f"{where}: unknown analyzer {analyzer!r}; defined: {sorted(config['analyzers'])}")
    if "tuned" in experiment.get("tables", []) and not experiment.get("tune_on"):
        raise ConfigError(f"{where}: a tuned table needs tune_on (query set -> the query set choosing its "
                          "parameters, e.g. {test+judged: dev+judged})")
    for queryset, other in experiment.get("tune_on", {}).items():
        missing = [name for name in (queryset, other) if name not in (experiment.get("querysets") or [])]
        if missing:
            raise ConfigError(f"{where}: tune_on names query set {missing[0]!r}, which is not in its querysets "
                              f"{experiment.get('querysets')}")
    if experiment["baseline"] not in experiment["models"]:
        raise ConfigError(
            f"{where}: baseline {experiment['baseline']!r} is not one of its models {sorted(experiment['models'])}"
        )
    _resolve_axiom_models(experiment, where)
    experiment["select_by"] = canonical_measures([experiment["select_by"]], f"{where}: select_by")[0]
    experiment["table_measures"] = canonical_measures(experiment["table_measures"], f"{where}: table_measures")
    for measure in [experiment["select_by"], *experiment["table_measures"]]:
        if experiment.get("tie_aware") and measure in experiment["table_measures"] and _is_tie_aware(measure):
            continue  # evaluated for this experiment (tie_measures below)
        if measure not in config["measures"]:
            raise ConfigError(f"{where}: measure {measure!r} is not among the evaluated measures {config['measures']}")
    # tie_aware: each table measure's expected value over the orderings of tied documents beside it,
    # evaluated for this experiment's cells only (Chunk.tie_measures), not for every run of the config
    experiment["tie_measures"] = []
    if experiment.get("tie_aware"):
        table, evaluated = beside_each(experiment["table_measures"])
        experiment["table_measures"] = table
        experiment["tie_measures"] = [name for name in evaluated if name not in config["measures"]]
    from .report.claims import parse_claims  # late: the report package is only needed here

    experiment["claims"] = [claim.to_dict() for claim in parse_claims(
        experiment, [*config["measures"], *experiment["tie_measures"]], where_file,
        experiment.get("querysets") or None)]
    experiment["verdict_selection"] = verdict_selection(experiment, where)
    swept = {name for model in experiment["models"].values() for name in get_model(model["family"]).parameter_names()}
    for parameter in experiment.get("parameter_figures", []):
        if parameter not in swept:
            raise ConfigError(f"{where}: parameter_figures names {parameter!r}, which none of its models has "
                              f"(their parameters: {sorted(swept)})")
    these_families = {}
    for model_name, model in experiment["models"].items():
        family = model["family"]
        if families.get(model_name, family) != family:
            raise ConfigError(
                f"{where}: model name {model_name!r} means family {family!r} here but "
                f"{families[model_name]!r} in another experiment; give it another name"
            )
        these_families[model_name] = family
        instance = get_model(family)
        unknown = sorted(set(model.get("grid", {})) - set(instance.parameter_names()))
        if unknown:
            raise ConfigError(
                f"{where}: model {model_name!r} ({family}) has no parameter {', '.join(unknown)}; "
                f"its parameters are {instance.parameter_names()}"
            )
        try:
            # each listed value on its own (no cross-parameter checks exist): the values, not the product
            declared = {parameter.name: parameter for parameter in instance.parameters}
            for parameter, values in model.get("grid", {}).items():
                for value in values if isinstance(values, list) else [values]:
                    declared[parameter].check(value, family)
        except ConfigError as error:
            # the family's message names the parameter and its range; say where the value is written
            raise ConfigError(f"{where_file}: models/{model_name}/grid: {error}") from None
    families.update(these_families)


def verdict_selection(experiment: Mapping[str, Any], where: str) -> str:
    """The selection whose chosen points decide the experiment's verdicts (``verdict_selection``).

    Not the best run: an oracle that rewards a model for every extra grid point it is given.
    By default the parameters chosen on another query set where the experiment has one
    (``tune_on``), else cross-validation over queries.
    """
    chosen = experiment.get("verdict_selection") or ("tuned" if experiment.get("tune_on") else "cv")
    if chosen == "tuned" and not experiment.get("tune_on"):
        raise ConfigError(f"{where}: verdict_selection 'tuned' needs tune_on (query set -> the query set "
                          "choosing its parameters)")
    return chosen


def _is_tie_aware(name: str) -> bool:
    return is_tie_aware_name(name)


def model_points(model: Mapping[str, Any]) -> list[dict[str, float]]:
    """Checked parameter points of a model's grid (unlisted parameters take their defaults)."""
    instance = get_model(model["family"])
    names = instance.parameter_names()
    grid = {name: model.get("grid", {}).get(name, [param.default]) for name, param in zip(names, instance.parameters)}
    return [instance.check_point(point) for point in expand_grid(grid, names)]


def model_bounds(experiment: Mapping[str, Any]) -> dict[str, dict[str, list]]:
    """model -> parameter -> [low, high]: how far each parameter's range reaches, for the tables' edge
    flags (a best point at such a bound cannot move further). An inclusive bound is itself; an open
    bound of a weight in a unit interval counts as reached within 1% of it (0.01 for alpha in (0, 1));
    other open bounds (mu > 0) are None: a grid can always reach further."""
    bounds = {}
    for name, model in experiment["models"].items():
        grid = model.get("grid", {})
        bounds[name] = {}
        for parameter in get_model(model["family"]).parameters:
            near = 0.01 * (parameter.high - parameter.low) if parameter.high - parameter.low <= 1 else None
            low = parameter.low if parameter.low_inclusive else (None if near is None else parameter.low + near)
            high = parameter.high if parameter.high_inclusive else (None if near is None else parameter.high - near)
            other = grid.get(parameter.high_param) if parameter.high_param else None
            if other is not None and (not isinstance(other, list) or len(other) == 1):
                high = float(other[0] if isinstance(other, list) else other)  # t1 <= t2 with t2 fixed
            bounds[name][parameter.name] = [low, high]
    return bounds


def experiment_querysets(experiment: Mapping[str, Any], collection) -> list[str]:
    """The query sets an experiment runs on one collection: those listed that it has, else all.

    A derived query set (``X+parser``, ``X+min3words``, ...: :mod:`irgrid.querysets`) counts as
    one the collection has when it has X. Unlisted, an answer-sentence collection's query sets are
    the re-ranking of each question's candidates over the questions with a positive (``X+judged``),
    the rows answer-selection papers report.
    """
    available = list(collection.querysets)
    listed = experiment.get("querysets")
    if not listed:
        from .collections.formats import FORMATS  # imported late, as load_registry: the readers are heavier

        if FORMATS[collection.format].answer_candidates:
            return [f"{name}+judged" for name in available]
        return available
    return [name for name in listed if base_queryset(name) in available]


def experiment_analyzers(experiment: Mapping[str, Any]) -> list[str]:
    """The analyzers an experiment runs with (its ``analyzer`` key: one name or a list)."""
    analyzer = experiment["analyzer"]
    return [analyzer] if isinstance(analyzer, str) else list(analyzer)


def experiment_cells(config: Mapping[str, Any], name: str) -> list[Cell]:
    """Every cell of one experiment, in config order (collections, query sets, analyzers, models, grid)."""
    experiment = config["_experiments"][name]
    registry = config["_registry"]
    # each model's points checked and encoded once, not once per collection and query set (a dry run
    # of a 30,000-cell grid spent seconds here)
    encoded = {model_name: [encode_point(point, get_model(model["family"]).parameter_names())
                            for point in model_points(model)]
               for model_name, model in experiment["models"].items()}
    cells = []
    for collection in experiment["collections"]:
        for queryset in experiment_querysets(experiment, registry[collection]):
            for analyzer in experiment_analyzers(experiment):
                for model_name, model in experiment["models"].items():
                    cells.extend(Cell(name, collection, queryset, analyzer, model_name, model["family"], params)
                                 for params in encoded[model_name])
    return cells


def model_family(config: Mapping[str, Any], model_name: str) -> str:
    for experiment in config["_experiments"].values():
        if model_name in experiment["models"]:
            return experiment["models"][model_name]["family"]
    raise ConfigError(f"no experiment defines a model named {model_name!r}")


# ------------------------------------------------------------------ chunks: grid cells grouped into jobs

# A chunk's points are chosen by the leading bits of a 64-bit digest of each encoded point.
# BLAKE2b rather than crc32: crc32 is linear, so short look-alike strings (mu~500, mu~1000)
# do not spread evenly over its leading bits; Python's hash() changes between processes.
WHOLE_GROUP = "all"  # the label of the one chunk of a group that fits in chunk_size


def cell_hash(key: str) -> int:
    """A chunk cell's digest (key ``model/point``): the model's leading 32 bits, then the point's.

    Sorted by it, a model's points are neighbours in the trie of :func:`split_by_hash`: a grid of
    up to ``chunk_size`` points stays in one chunk (with other models' cells beside it), so changing
    one of its values reruns that chunk. Digests of the whole key would spread a model's points over
    every chunk of its query set, and a changed value (a row of a grid) would rerun several. The
    point's bits take turns among its parameters (:func:`irgrid.grid.interleaved_point_digest`): a
    larger grid splits into tiles, so a changed value reruns the tiles of its row, not every chunk
    of the grid.
    """
    model, _, params = key.partition("/")
    return _model_hash_bits(model) | interleaved_point_digest(params)


@functools.cache
def _model_hash_bits(model: str) -> int:
    # the leading bits of cell_hash, the same for each of a model's points: one digest per model
    return point_hash(model) >> POINT_DIGEST_BITS << POINT_DIGEST_BITS


def split_by_hash(params: Iterable[str], chunk_size: int, digest=None) -> list[tuple[str, tuple[str, ...]]]:
    """Encoded points split into chunks of at most ``chunk_size``, each labelled by a hash prefix.

    The chunks are the leaves of a binary trie over the points' hash bits: a set of more than
    ``chunk_size`` points splits by its next bit, recursively. A leaf depends only on the points
    whose hash starts with its prefix, so adding a point changes the one chunk it falls into
    (which may split in two) and no other; a modulo over a point count would move nearly every
    point whenever the count crosses a multiple of ``chunk_size``. Returns ``(label, points)``
    pairs, label = the prefix's bits (``WHOLE_GROUP`` when nothing was split), points sorted;
    the partition depends on the set of points only, not on their order. ``digest``: the 64-bit
    digest of a point (default :func:`point_hash`; chunks of cells use :func:`cell_hash`).
    """
    if chunk_size < 1:
        raise ConfigError(f"retrieval/chunk_size must be at least 1, found {chunk_size}")
    digest = digest or point_hash
    hashed = sorted((digest(encoded), encoded) for encoded in set(params))
    chunks: list[tuple[str, tuple[str, ...]]] = []

    digests = [value for value, _ in hashed]

    def split(lo: int, hi: int, prefix: str) -> None:
        # hashed[lo:hi] are the points under ``prefix``: sorted by digest, those whose next bit is 0
        # come first, so a split is one bisection, not a pass over the members
        # Past the last bit only equal digests remain together: such a chunk may exceed chunk_size.
        if hi - lo <= chunk_size or len(prefix) == HASH_BITS:
            chunks.append((prefix or WHOLE_GROUP, tuple(sorted(encoded for _, encoded in hashed[lo:hi]))))
            return
        shift = HASH_BITS - 1 - len(prefix)
        ones = ((int(prefix, 2) << 1 | 1) << shift) if prefix else 1 << shift
        middle = bisect.bisect_left(digests, ones, lo, hi)
        for bit, (start, end) in zip("01", ((lo, middle), (middle, hi))):
            if end > start:
                split(start, end, prefix + bit)

    if hashed:
        split(0, len(hashed), "")
    return chunks


@dataclass(frozen=True)
class ChunkCell:
    """One cell of a chunk: a model (its family) at one encoded point."""

    model: str
    family: str
    params: str

    @property
    def key(self) -> str:
        """What the chunk's hash split sees: model and point (two models may share a point)."""
        return f"{self.model}/{self.params}"


@dataclass(frozen=True)
class Chunk:
    """Up to ``retrieval.chunk_size`` cells of one collection, analyzer and query set, any models.

    One job retrieves them all (one process, one index open, one topics read; the cells of one
    family in one pass) and one job evaluates them (one qrels load); the cells' files stay where
    ``Cell`` puts them. Models share chunks because a job's fixed cost (Python, imports, the
    index, Snakemake's own work per job) is most of the cost of a small model's grid: the default
    run has 21 models on one query set, many with a handful of points. ``uses_parses``: the
    chunk's models score parse-tree features and its job reads the collection's sentence parses;
    such models get chunks of their own, so that new parses rerun only them.
    """

    collection: str
    analyzer: str
    queryset: str
    label: str  # the hash prefix shared by its cells (split_by_hash), "parses-" first when uses_parses
    cells: tuple[ChunkCell, ...]  # sorted by key (model/point)
    uses_parses: bool = False
    #: tie-aware names (irgrid.evaluation.ties) its evaluation adds to the config's measures: those of the
    #: experiments with ``tie_aware`` whose cells it holds (none: evaluated as without the option)
    tie_measures: tuple[str, ...] = ()

    @property
    def families(self) -> list[str]:
        return [cell.family for cell in self.cells]

    @property
    def params(self) -> list[str]:
        return [cell.params for cell in self.cells]

    @property
    def run_paths(self) -> list[str]:
        return [cell_path("runs", self.collection, self.analyzer, self.queryset, c.model, c.params) for c in self.cells]

    @property
    def eval_paths(self) -> list[str]:
        return [cell_path("eval", self.collection, self.analyzer, self.queryset, c.model, c.params) for c in self.cells]

    @property
    def evaluation_path(self) -> str:
        """The chunk's evaluations, every cell's per-query values in one file (model and params columns):
        what its job writes and what tables, figures and findings read (no run is kept)."""
        return chunk_evaluation_path(self.collection, self.analyzer, self.queryset, self.label)

    @property
    def cells_json(self) -> str:
        """What the chunk's job scores, as the job reads it: ``[[model, family, params], ...]`` in cell order."""
        return json.dumps([[cell.model, cell.family, cell.params] for cell in self.cells])

    def log_path(self, kind: str = "eval") -> str:
        """One log per chunk job, beside its evaluation file (the path of its output, logs/ for results/)."""
        return f"logs/{self.collection}/{kind}/{self.analyzer}/{self.queryset}/chunk-{self.label}.log"

    def rule_name(self, step: str) -> str:
        """Snakemake rule name of this chunk's ``step`` ('retrieve' or 'evaluate') job.

        Dots between the parts; anything but letters, digits, ``_~+-`` becomes ``-``: the name
        reaches file names (cluster job scripts refuse a ``/``) and command lines (--forcerun).
        """
        parts = [step, self.collection, self.analyzer, self.queryset, self.label]
        return ".".join(re.sub(r"[^\w~+-]", "-", part, flags=re.ASCII) for part in parts)


def all_cells(config: Mapping[str, Any]) -> list[Cell]:
    """Every experiment's cells, each path once (experiments sharing a cell share its files)."""
    cells: dict[str, Cell] = {}
    for name in config["_experiments"]:
        for cell in experiment_cells(config, name):
            cells.setdefault(cell.run_path, cell)
    return list(cells.values())


def group_chunk_size(cells: int, chunk_size: int, max_chunks: int | None) -> int:
    """The chunk size of a collection, analyzer and query set of ``cells`` cells: ``chunk_size``,
    doubled while ``cells`` would fill more than ``max_chunks`` chunks of it (None: never). The jobs of
    a query set then stay about ``max_chunks`` however large its grid; doublings keep the size a
    step function of the count, so a changed value (the same count) regroups nothing."""
    size = chunk_size
    while max_chunks and cells > size * max_chunks:
        size *= 2
    return size


def retrieval_chunks(config: Mapping[str, Any]) -> list[Chunk]:
    """The jobs of the run: every cell of every experiment in exactly one chunk.

    Chunks are computed over the union of the experiments' cells, so a cell two experiments
    share is produced by one job. The cells of a collection, analyzer and query set are split
    by the digest of model, then point (split_by_hash, cell_hash): a new or removed point changes
    the one chunk it falls into, and a model's grid of up to chunk_size points is in one chunk.
    A query set with more cells than ``retrieval.max_chunks`` chunks hold gets larger chunks
    (group_chunk_size). Order: first appearance in the config, then hash prefix.
    """
    chunk_size = config["retrieval"]["chunk_size"]
    max_chunks = config["retrieval"].get("max_chunks")
    groups: dict[tuple[str, str, str, bool], dict[str, ChunkCell]] = {}
    for cell in all_cells(config):
        key = (cell.collection, cell.analyzer, cell.queryset, get_model(cell.family).uses_parses)
        member = ChunkCell(cell.model, cell.family, cell.params)
        groups.setdefault(key, {})[member.key] = member
    tie_measures = _tie_measures_of_cells(config)
    chunks = []
    for (collection, analyzer, queryset, uses_parses), members in groups.items():
        size = group_chunk_size(len(members), chunk_size, max_chunks)
        for label, keys in split_by_hash(members, size, digest=cell_hash):
            label = f"parses-{label}" if uses_parses else label
            names: dict[str, None] = {}
            for k in keys:
                names.update(dict.fromkeys(tie_measures.get((collection, analyzer, queryset, k), ())))
            chunks.append(Chunk(collection, analyzer, queryset, label, tuple(members[k] for k in keys), uses_parses,
                                tuple(names)))
    named: dict[str, Chunk] = {}
    for chunk in chunks:
        other = named.setdefault(chunk.rule_name("retrieve"), chunk)
        if other is not chunk:
            raise ConfigError(
                f"two chunks get the job name {chunk.rule_name('retrieve')!r} "
                f"({other.collection}/{other.analyzer}/{other.queryset} and "
                f"{chunk.collection}/{chunk.analyzer}/{chunk.queryset}): "
                "rename a collection, analyzer or query set so they differ in letters or digits"
            )
    return chunks


def _tie_measures_of_cells(config: Mapping[str, Any]) -> dict[tuple[str, str, str, str], list[str]]:
    """(collection, analyzer, query set, model/point) -> the tie-aware names the experiments with
    ``tie_aware`` need evaluated for that cell (a cell shared with other experiments gets them once)."""
    out: dict[tuple[str, str, str, str], list[str]] = {}
    for name, experiment in config["_experiments"].items():
        if not experiment.get("tie_measures"):
            continue
        for cell in experiment_cells(config, name):
            key = (cell.collection, cell.analyzer, cell.queryset, f"{cell.model}/{cell.params}")
            known = out.setdefault(key, [])
            known.extend(measure for measure in experiment["tie_measures"] if measure not in known)
    return out


# ------------------------------------------------------------------ raw files, at planning time

def check_raw_files(config: Mapping[str, Any], mirror: str | os.PathLike | None,
                    resources_dir: str | os.PathLike) -> None:
    """Every collection the run's experiments use must have raw files a job can read or download.

    A wrong path in the registry then stops ``snakemake -n`` naming the file, instead of the job
    that reads it failing after others have run (irgrid.collections.sources.check_available).
    """
    # deferred: the collection readers are heavier, and planning needs them only here
    from .collections.sources import CollectionNotAvailable, check_available

    users: dict[str, list[str]] = {}
    for name, experiment in config["_experiments"].items():
        for collection in experiment["collections"]:
            users.setdefault(collection, []).append(name)
    for collection, experiments in users.items():
        try:
            check_available(config["_registry"][collection], mirror=mirror, resources_dir=resources_dir)
        except CollectionNotAvailable as error:
            raise ConfigError(f"{error} [collection of experiment {', '.join(experiments)}]") from None


# ------------------------------------------------------------------ subset runs

def select_subset(config: Mapping[str, Any], experiments: Iterable[str] | None = None,
                  collections: Iterable[str] | None = None) -> dict[str, Any]:
    """The loaded ``config`` narrowed to some experiments and collections, for choosing a run's targets.

    ``experiments``/``collections`` ``None`` keep all. Each kept experiment keeps only the chosen
    collections it has; one left with none is dropped. Only what the run targets changes: grid
    chunks, rules and their params are computed from the whole config (the Snakefile keeps both),
    so a subset run makes the same files a full run would and a later full run redoes none of them.
    An unknown name stops the run with the closest known name.
    """
    chosen_experiments = _known_names(experiments, config["_experiments"], "experiments_only", "experiment")
    chosen_collections = _known_names(collections, config["_registry"], "collections_only", "collection")
    subset = dict(config)
    kept = {}
    for name, experiment in config["_experiments"].items():
        if chosen_experiments is not None and name not in chosen_experiments:
            continue
        if chosen_collections is not None:
            narrowed = [c for c in experiment["collections"] if c in chosen_collections]
            if not narrowed:
                continue
            experiment = {**experiment, "collections": narrowed}
        kept[name] = experiment
    if not kept:
        raise ConfigError(
            f"experiments_only={sorted(chosen_experiments) if chosen_experiments is not None else 'all'} and "
            f"collections_only={sorted(chosen_collections) if chosen_collections is not None else 'all'} "
            "leave nothing to run: no chosen experiment uses a chosen collection"
        )
    subset["_experiments"] = kept
    return subset


def _known_names(names: Iterable[str] | None, known: Mapping[str, Any], key: str, what: str) -> set[str] | None:
    """``names`` as a set, each checked against ``known`` (an unknown one: a ConfigError with a suggestion)."""
    if names is None:
        return None
    if isinstance(names, str):  # --config experiments_only=baselines: one name, not a list
        names = [names]
    names = [str(name) for name in names]
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(known))}"
            raise ConfigError(f"{key}: unknown {what} {name!r}{hint}")
    return set(names)
