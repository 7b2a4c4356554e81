"""What the test modules share: the repo's paths, the collections mirror, and running Snakemake.

Snakemake runs as a subprocess, exactly as ``make run`` does:
``python -m snakemake --snakefile <repo>/Snakefile --directory <tmp> --configfile <tmp>/config/config.yaml``.
With ``--directory`` the Snakefile's ``configfile: "config/config.yaml"`` and every relative path of
the config (the registry, the experiment files) resolve inside the temporary directory, so a test
copies the repo's ``config/`` there (:func:`make_workdir`) and writes its small config over
``config/config.yaml``. The fixtures built on these are in ``conftest.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from irgrid.collections import CollectionNotAvailable, load_registry, resolve_files
from irgrid.collections.sources import ChecksumError

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"
REGISTRY = REPO / "config" / "collections.yaml"
SNAKEMAKE_TIMEOUT = 300

EXPERIMENT = "small"
ANALYZER = {"tokenizer": "lucene", "lowercase": True, "possessive": True, "stemmer": "porter", "stopwords": "none"}
SMALL_EXPERIMENT = {
    "title": "BM25 and QL on ADI (test)",
    "collections": ["adi"],
    "analyzer": "porter",
    "models": {
        "bm25": {"family": "bm25", "label": "BM25", "grid": {"k1": [0.9, 1.2], "b": 0.75}},
        "ql_dirichlet": {"family": "ql_dirichlet", "label": "QL", "grid": {"mu": [500, 1000]}},
    },
    "baseline": "ql_dirichlet",
    "select_by": "AP",
    "table_measures": ["AP", "P@10"],
}


def small_config(mirror: Path | None) -> dict:
    """A run config of :data:`SMALL_EXPERIMENT` alone, on two shards, with the ``porter`` analyzer."""
    return {
        "registry": "config/collections.yaml",
        "mirror": str(mirror) if mirror else None,
        "resources": "resources",
        "num_shards": 2,
        "analyzers": {"porter": dict(ANALYZER)},
        "measures": ["AP", "P@10"],
        "experiments": {EXPERIMENT: f"config/experiments/{EXPERIMENT}.yaml"},
    }


def write_yaml(data, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def make_workdir(workdir: Path, config: dict, experiment: dict | None = None) -> Path:
    """A workflow directory: the repo's config/ with our config and experiment written over it."""
    shutil.copytree(REPO / "config", workdir / "config")
    write_yaml(config, workdir / "config" / "config.yaml")
    write_yaml(experiment if experiment is not None else SMALL_EXPERIMENT,
               workdir / "config" / "experiments" / f"{EXPERIMENT}.yaml")
    return workdir


def snakemake(workdir: Path, *args: str, timeout: float = SNAKEMAKE_TIMEOUT) -> subprocess.CompletedProcess:
    """Run Snakemake on the repo's Snakefile in ``workdir``; stdout and stderr together in ``.stdout``."""
    command = [
        sys.executable, "-m", "snakemake",
        "--snakefile", str(SNAKEFILE),
        "--directory", str(workdir),
        "--configfile", str(workdir / "config" / "config.yaml"),
        "--cores", "2",
        *args,
    ]
    return subprocess.run(command, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)


def job_stats(output: str) -> dict[str, int]:
    """The first "Job stats:" table of a Snakemake log as {rule: count}, without the total."""
    lines = output.splitlines()
    try:
        start = lines.index("Job stats:")
    except ValueError:
        raise AssertionError(f"no 'Job stats:' table in Snakemake's output:\n{output}") from None
    stats = {}
    for line in lines[start + 3:]:  # skip "job count" and the dashes
        name, count = line.split()
        if name == "total":
            assert int(count) == sum(stats.values()), output
            return stats
        stats[name] = int(count)
    raise AssertionError(f"unterminated 'Job stats:' table:\n{output}")


def job_outputs(output: str) -> dict[str, list[str]]:
    """rule -> the output files of each of its jobs listed in a Snakemake log (dry run or real run)."""
    outputs: dict[str, list[str]] = {}
    rule = None
    for line in output.splitlines():
        header = re.match(r"^\s*(?:local)?rule (\S+):$", line)
        if header:
            rule = header.group(1)
            continue
        listed = re.match(r"^\s+output: (.*)$", line)
        if listed and rule is not None:
            outputs.setdefault(rule, []).extend(listed.group(1).split(", "))
            rule = None
    return outputs


def cell_runs(workdir: Path, collection: str, analyzer: str, queryset: str, model: str,
              params: str | None = None) -> dict[str, pd.DataFrame]:
    """A model's runs of one query set, params -> run, made on demand as a user asks for them (runs are
    not kept: one Snakemake target a cell); ``params`` None: every point its chunks evaluated, "any": the
    first of them."""

    if params in (None, "any"):
        chunks = (workdir / "results" / collection / "eval" / analyzer / queryset).glob("chunk-*.parquet")
        evaluations = pd.concat(pd.read_parquet(path, columns=["model", "params"]) for path in chunks)
        points = sorted(set(evaluations.loc[evaluations["model"] == model, "params"]))[:1 if params else None]
    else:
        points = [params]
    paths = {point: f"results/{collection}/runs/{analyzer}/{queryset}/{model}/{point}.parquet" for point in points}
    assert_ok(snakemake(workdir, *paths.values()))
    return {point: pd.read_parquet(workdir / path) for point, path in paths.items()}


def assert_ok(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, f"snakemake exited {result.returncode}:\n{result.stdout[-6000:]}"


def find_mirror() -> Path | None:
    """The mirror root holding a verified copy of ADI (as the workflow would find it), or None."""
    spec = load_registry(REGISTRY)["adi"]
    try:
        files = resolve_files(spec, download=False)
    except (CollectionNotAvailable, ChecksumError):
        return None
    return files["docs"].parent.parent


def record_first_stages(monkeypatch) -> list[str]:
    """Make the feedback stage record the family of every first stage it runs; returns the record."""
    from irgrid.feedback import stage

    calls: list[str] = []
    original = stage.first_stage

    def counted(scorer, model, queries, point, depth):
        calls.append(model.name)
        return original(scorer, model, queries, point, depth)

    monkeypatch.setattr(stage, "first_stage", counted)
    return calls
