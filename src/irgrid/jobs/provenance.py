"""What produced each number: configuration digests, code version, input checksums, index statistics,
and the time and memory of every job.

- A cell's *configuration digest* is the sha256 of everything that decides its run and evaluation:
  the model's family and parameter point, the analyzer, the collection's registry entry, the query
  set, the retrieval depth and the measures (:func:`cell_digest`). Two cells with one digest were
  made the same way.
- A run file carries its provenance in its Parquet schema metadata (key ``irgrid.provenance``):
  family, point, depth, index statistics, the sha256 of the topics it ran, the irgrid version; not
  the git commit, so the run's bytes do not change with every commit. The commit is in a JSON
  sidecar beside it (``{params}.provenance.json``), so a copied run file still says what made it.
- Job time and memory come from Snakemake's ``benchmark:`` files of the heavy rules (index build,
  retrieval and evaluation chunks): :func:`read_benchmarks`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__
from ..collections.sources import sha256_of
from ..io import write_json, write_parquet
from ..runs import RUN_COLUMNS, RUN_SCHEMA

METADATA_KEY = b"irgrid.provenance"
SIDECAR_SUFFIX = ".provenance.json"
REPO_ROOT = Path(__file__).resolve().parents[3]


def digest(data: Any) -> str:
    """sha256 of the canonical JSON of ``data`` (keys sorted, no spaces)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def cell_digest(family: str, params: str, analyzer: Mapping[str, Any], collection_entry: Mapping[str, Any],
                queryset: str, depth: int, measures: Iterable[str]) -> str:
    return digest({"family": family, "params": params, "analyzer": dict(analyzer),
                   "collection": dict(collection_entry), "queryset": queryset, "depth": depth,
                   "measures": list(measures)})


def cell_digests(analyzer: Mapping[str, Any], collection_entry: Mapping[str, Any], queryset: str, depth: int,
                 measures: Iterable[str]):
    """:func:`cell_digest` of the cells of one collection, analyzer and query set: a function of (family,
    params) that serialises the parts they share once (a 30,000-cell manifest dumped the registry entry
    30,000 times). The same canonical JSON, so the same digests."""
    def dump(value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))

    # the keys in sorted order, as json.dumps(sort_keys=True) writes them
    head = f'{{"analyzer":{dump(dict(analyzer))},"collection":{dump(dict(collection_entry))},"depth":{dump(depth)},"family":'
    middle = f',"measures":{dump(list(measures))},"params":'
    tail = f',"queryset":{dump(queryset)}}}'

    def of(family: str, params: str) -> str:
        return hashlib.sha256(f"{head}{dump(family)}{middle}{dump(params)}{tail}".encode()).hexdigest()

    return of


@functools.cache
def git_commit(repo: str | os.PathLike = REPO_ROOT) -> str | None:
    """The checkout's commit (with ``+dirty`` when tracked files differ from it), or None outside git.

    Asked once a process: a retrieval job writes a sidecar for every run of its chunk, and the
    code it runs cannot change under it."""
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "") if commit else None


def run_provenance(index: str | os.PathLike, topics: str | os.PathLike, family: str, params: str,
                   depth: int) -> dict[str, Any]:
    """What made a run, from the files the retrieval read (no commit: see the module's docstring)."""
    stats = json.loads((Path(index) / "stats.json").read_text(encoding="utf-8"))
    return {"irgrid_version": __version__, "family": family, "params": params, "depth": depth,
            "index": str(index), "topics": str(topics), "topics_sha256": sha256_of(topics),
            "index_stats": {key: stats.get(key) for key in ("num_docs", "total_length", "num_terms",
                                                            "format_version", "analyzer")}}


def sidecar_path(run_path: str | os.PathLike) -> Path:
    return Path(run_path).with_suffix(SIDECAR_SUFFIX)


def write_run_with_provenance(run: pa.Table, path: str | os.PathLike, provenance: Mapping[str, Any]) -> None:
    """The run as :func:`irgrid.runs.write_run` writes it, its schema carrying ``provenance``, and the
    sidecar with the provenance and the git commit."""
    schema = RUN_SCHEMA.with_metadata({METADATA_KEY: json.dumps(dict(provenance), sort_keys=True).encode("utf-8")})
    # An older run's sidecar must not outlive a write that fails: it would describe a run that is gone.
    sidecar_path(path).unlink(missing_ok=True)
    write_parquet(run.select(RUN_COLUMNS).cast(schema), path)
    write_json({**provenance, "git_commit": git_commit(), "run": Path(path).name}, sidecar_path(path))


def read_run_provenance(path: str | os.PathLike) -> dict[str, Any]:
    """The provenance of a run file: its schema's, updated by its sidecar's where present ({} for neither)."""
    found: dict[str, Any] = {}
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid):
        metadata = {}
    if METADATA_KEY in metadata:
        found.update(json.loads(metadata[METADATA_KEY]))
    sidecar = sidecar_path(path)
    if sidecar.exists():
        found.update(json.loads(sidecar.read_text(encoding="utf-8")))
    return found


#: Snakemake benchmark columns kept: wall-clock seconds, peak resident memory (MB), CPU seconds
BENCHMARK_COLUMNS = {"s": "seconds", "max_rss": "max_rss_mb", "cpu_time": "cpu_seconds"}


def read_benchmarks(paths: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """``paths``: benchmark file -> {stage, job, ...}. One row per file that exists: its labels, seconds,
    max_rss_mb, cpu_seconds (the first repeat: the rules do not repeat)."""
    rows = []
    for path, labels in paths.items():
        if not Path(path).exists():
            continue
        table = pd.read_csv(path, sep="\t")
        first = table.iloc[0]
        values = {}
        for column, name in BENCHMARK_COLUMNS.items():
            value = pd.to_numeric(first.get(column), errors="coerce") if column in table.columns else float("nan")
            values[name] = float(value)
        rows.append({**labels, "benchmark": str(path), **values})
    return pd.DataFrame(rows, columns=["stage", "job", "collection", "benchmark", *BENCHMARK_COLUMNS.values()])


def time_by_stage(benchmarks: pd.DataFrame) -> pd.DataFrame:
    """Job seconds, CPU seconds and peak memory summed (memory: maximum) per stage and collection."""
    if benchmarks.empty:
        return pd.DataFrame(columns=["stage", "collection", "jobs", "seconds", "cpu_seconds", "max_rss_mb"])
    grouped = benchmarks.groupby(["stage", "collection"], sort=False)
    table = grouped.agg(jobs=("job", "size"), seconds=("seconds", "sum"), cpu_seconds=("cpu_seconds", "sum"),
                        max_rss_mb=("max_rss_mb", "max")).reset_index()
    return table.sort_values("seconds", ascending=False, kind="stable").reset_index(drop=True)
