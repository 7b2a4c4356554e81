"""The run's report: one self-contained HTML file (figures inlined as data URIs, no network needed).

Per experiment: what it reproduces (paper, table, collections, analyzers, models and grids), the
findings (its claims checked on every row), the tables, the cells behind them with their
provenance, the per-query evidence and the figures. Then where the run's time went and the inputs
(raw files' checksums, index statistics). A file the manifest names but the run did not make (an
experiment whose step failed, a benchmark of a job made before benchmarks were recorded) is said to
be missing in the page, never silently dropped.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .. import __version__
from ..io import write_text
from ..jobs.job_warnings import collect_warnings, merged
from ..jobs.provenance import git_commit, read_benchmarks, read_run_provenance, time_by_stage
from .findings import findings_html

STYLE = """
body{font-family:system-ui,sans-serif;max-width:78em;margin:1.5em auto;padding:0 1em;line-height:1.4;color:#222}
h1{font-size:1.7em}h2{border-bottom:2px solid #ccc;padding-bottom:.2em;margin-top:2em}
h3{margin-top:1.5em}h4{margin:1em 0 .3em}
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0}
table{border-collapse:collapse;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right;white-space:nowrap}
td:first-child,th:first-child,td.text,td.left,th.left{text-align:left}
td.text{white-space:normal;min-width:20em;max-width:40em}
th{background:#f3f3f3}
code,.digest{font-family:ui-monospace,monospace;font-size:.9em}
img{max-width:100%;height:auto}figure img{width:100%;max-width:64em}
figure{margin:1em 0}figcaption{font-size:.9em;color:#444}
.verdict-holds{background:#d9f2dd;font-weight:bold}.verdict-opposite{background:#f8d7d5;font-weight:bold}
.verdict-no-difference{background:#f1f1f1}.verdict-no-judged-queries{background:#fff3cd}
.verdict-direction-holds{background:#eaf7ec}.verdict-direction-reversed{background:#fbeceb}.verdict-tie{background:#f1f1f1}
.verdict-no-rows{background:#fff3cd}.verdict-untestable{background:#fff3cd}
.missing{color:#9c2a00}.legend,.claim{font-size:.9em;color:#444}
nav ul{columns:2}dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:bold}dd{margin:0}
"""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


def _e(value: Any) -> str:
    return html.escape(str(value))


def _missing(path: str) -> str:
    return f"<p class='missing'>Not made in this run: <code>{_e(path)}</code>.</p>"


def _image(path: str, caption: str) -> str:
    """An SVG inlined as a data URI: the page opens anywhere, and the figures' ids cannot collide."""
    file = Path(path)
    if not file.exists():
        return _missing(path)
    data = base64.b64encode(file.read_bytes()).decode("ascii")
    return (f"<figure><img src='data:image/svg+xml;base64,{data}' alt='{_e(caption)}'>"
            f"<figcaption>{_e(caption)} (<code>{_e(path)}</code>)</figcaption></figure>")


def _fragment(path: str, heading: bool = True) -> str:
    file = Path(path)
    if not file.exists():
        return _missing(path)
    text = file.read_text(encoding="utf-8")
    # a table fragment's own heading: a level below the section's, or left out where the report names it
    text = text.replace("<h2>", "<h4>").replace("</h2>", "</h4>") if heading else re.sub(r"<h2>.*?</h2>", "", text)
    return f"<div class='scroll'>{text}</div>" if "<table" in text else text


SELECTION_NAMES = {"best": "Best run (each model at its best point: an oracle choice)",
                   "cv": "Cross-validated (parameters chosen on the other folds)",
                   "tuned": "Tuned on another query set"}


def _other_formats(html_path: str, out_dir: Path) -> str:
    """Links to the table's other formats beside it in results/ (they resolve where the report sits)."""
    path = Path(html_path)
    links = " · ".join(f"<a href='{_e(os.path.relpath(path.with_suffix(f'.{suffix}'), out_dir))}'>{suffix}</a>"
                       for suffix in ("md", "tex", "csv"))
    return f"<p class='legend'>{_e(path.stem)} also as {links} (files beside the report in results/).</p>"


def _number(value: Any, digits: int = 4) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return _e(value)
    return "" if math.isnan(number) else f"{number:.{digits}f}"


def _p(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(number) else f"{number:.3g}"


def _frame_table(frame: pd.DataFrame, formats: Mapping[str, Any] | None = None, left: tuple[str, ...] = ()) -> str:
    formats = formats or {}
    head = "".join(f"<th class='left'>{_e(column)}</th>" if column in left else f"<th>{_e(column)}</th>"
                   for column in frame.columns)
    body = []
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row):
            text = formats[column](value) if column in formats else _e(value)
            css = " class='left'" if column in left else ""
            cells.append(f"<td{css}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"


def _benchmarks(manifest: Mapping[str, Any]) -> pd.DataFrame:
    return read_benchmarks(manifest.get("benchmarks", {}))


def _job_cost(benchmarks: pd.DataFrame, path: str) -> str:
    row = benchmarks[benchmarks["benchmark"] == path]
    if row.empty:
        return "not recorded"
    entry = row.iloc[0]
    return f"{entry['seconds']:.1f} s, {entry['max_rss_mb']:.0f} MB"


def _experiment_head(name: str, experiment: Mapping[str, Any]) -> str:
    parts = []
    paper = experiment.get("paper") or {}
    if paper:
        cite = _e(paper["citation"])
        if paper.get("url"):
            cite = f"<a href='{_e(paper['url'])}'>{cite}</a>"
        parts.append(f"<p><b>Reproduces</b>: {cite}{', ' + _e(paper['table']) if paper.get('table') else ''}.</p>")
    if experiment.get("description"):
        parts.append(f"<p>{_e(experiment['description'])}</p>")
    querysets = "; ".join(f"{c}: {', '.join(q)}" for c, q in experiment["querysets"].items())
    analyzers = "; ".join(f"{a} ({', '.join(f'{k} {v}' for k, v in spec.items())})"
                          for a, spec in experiment["analyzers"].items())
    parts.append("<dl>"
                 f"<dt>experiment file</dt><dd><code>{_e(experiment.get('source') or name)}</code></dd>"
                 f"<dt>collections, query sets</dt><dd>{_e(querysets)}</dd>"
                 f"<dt>analyzers</dt><dd>{_e(analyzers)}</dd>"
                 f"<dt>baseline</dt><dd>{_e(experiment['baseline'])}</dd>"
                 f"<dt>measures</dt><dd>{_e(', '.join(experiment['table_measures']))} "
                 f"(chosen by {_e(experiment['select_by'])})</dd>"
                 f"<dt>test</dt><dd>{_e(experiment['test'])} ({_e(experiment['alternative'])}), correction "
                 f"{_e(experiment['correction'])}, alpha {_e(experiment['alpha'])}</dd></dl>")
    models = pd.DataFrame([{"model": model, "label": spec["label"], "family": spec["family"],
                            "grid": ", ".join(f"{k} ∈ {v}" for k, v in spec["grid"].items()) or "defaults",
                            "points": _grid_size(spec["grid"])}
                           for model, spec in experiment["models"].items()])
    parts.append(_frame_table(models, left=("model", "label", "family", "grid")))
    return "\n".join(parts)


def _grid_size(grid: Mapping[str, Any]) -> int:
    size = 1
    for values in grid.values():
        size *= len(values) if isinstance(values, list) else 1
    return size


def _cells_table(name: str, experiment: Mapping[str, Any], table: Mapping[str, str], benchmarks: pd.DataFrame) -> str:
    """Every cell of a table (row x model) with its chosen point, means, p-values and provenance."""
    path = Path(table["csv"])
    if not path.exists():
        return _missing(table["csv"])
    summary = pd.read_csv(path, dtype={"params": str, "queryset": str, "collection": str, "model": str})
    if summary.empty:
        return "<p>No table rows: no judged queries on any row.</p>"
    cells = {(c["collection"], c["queryset"], c["model"], c["params"]): c for c in experiment["cells"]}
    lines = []
    for (collection, queryset, model), rows in summary.groupby(["collection", "queryset", "model"], sort=False):
        rows = rows.set_index("measure")
        params = str(rows["params"].iloc[0])
        entry = {"row": f"{collection} ({queryset})", "model": model, "parameters": params,
                 "queries": int(rows["num_queries"].max())}
        for measure in experiment["table_measures"]:
            if measure in rows.index:
                m = rows.loc[measure]
                entry[measure] = _number(m["mean"]) + ("†" if bool(m["significant"]) else "")
                entry[f"p {measure}"] = "baseline" if model == experiment["baseline"] else \
                    f"{_p(m['p_value'])} / {_p(m['p_corrected'])}"
        if "tied_queries" in rows.columns:  # the table's runs tie relevant documents (irgrid.tables._ties_line)
            tied = rows[rows["tied_queries"] > 0]
            entry["queries with ties (E)"] = ", ".join(
                f"{measure} {int(m['tied_queries'])} ({_number(m['expected'])})" for measure, m in tied.iterrows())
        cell = cells.get((collection, queryset, model, params))
        if cell is None:
            entry.update({"config digest": "several points (cross-validated)", "code": "",
                          "retrieval and evaluation": ""})
        else:
            made = read_run_provenance(cell["evaluation"])  # the chunk's evaluation file: no run is kept
            entry["config digest"] = cell["digest"][:12]
            entry["code"] = (f"{made.get('irgrid_version', '?')} @ {str(made.get('git_commit') or 'unknown')[:12]}"
                             if made else "no provenance")
            points = cell["chunk_points"]
            entry["retrieval and evaluation"] = f"{_job_cost(benchmarks, cell['chunk_benchmark'])} / {points} pts"
        lines.append(entry)
    frame = pd.DataFrame(lines)
    return _frame_table(frame, left=("row", "model", "parameters", "config digest", "code"))


def _findings(experiment: Mapping[str, Any]) -> str:
    path = Path(experiment["findings"])
    if not path.exists():
        return _missing(experiment["findings"])
    frame = pd.read_csv(path, dtype={"queryset": str, "collection": str, "text": str}, keep_default_na=False,
                        na_values={c: [""] for c in ("difference", "ci_low", "ci_high", "p_value", "p_corrected",
                                                     "mean_better", "mean_than", "paper_p", "points_better",
                                                     "points_than", "oracle_difference", "oracle_p_corrected")})
    if frame.empty:
        return "<p>The experiment states no claims (<code>claims:</code> in its file).</p>"
    return findings_html(frame, float(experiment["alpha"]))


def _experiment(name: str, experiment: Mapping[str, Any], benchmarks: pd.DataFrame, out_dir: Path) -> str:
    anchor = f"x-{_slug(name)}"
    out = [f"<section id='{anchor}'><h2>{_e(name)}: {_e(experiment.get('title') or name)}</h2>",
           _experiment_head(name, experiment),
           f"<h3 id='{anchor}-findings'>Findings</h3>", _findings(experiment),
           f"<h3 id='{anchor}-tables'>Tables</h3>"]
    for table in experiment["table_files"]:
        out.append(f"<h4>{_e(SELECTION_NAMES.get(table['selection'], table['selection']))}</h4>")
        out.append(_fragment(table["html"], heading=False))
        out.append(_other_formats(table["html"], out_dir))
        out.append(f"<h4>Cells of the {_e(table['selection'])} table: chosen parameters, p (raw / corrected), "
                   "provenance</h4>")
        out.append(_cells_table(name, experiment, table, benchmarks))
    out.append("<p class='legend'>config digest: sha256 of the cell's family, parameters, analyzer, collection entry, "
               "query set, depth and measures (first 12 hex digits). code: irgrid version @ git commit that wrote the "
               "run (its sidecar). retrieval / evaluation: time and peak memory of the job that made the cell's "
               "chunk of points.</p>")
    for extra in experiment["extra_tables"]:
        out.append(_fragment(extra))
        out.append(_other_formats(extra, out_dir))
    out.append(f"<h3 id='{anchor}-evidence'>Per-query evidence</h3>")
    out.append(_image(experiment["per_query_figure"], f"{name}: per-query differences against the baseline "
                      f"({experiment['select_by']}), sorted"))
    out.append(_fragment(experiment["per_query"]))
    if experiment["figures"]:
        out.append(f"<h3 id='{anchor}-figures'>Figures</h3>")
        for figure in experiment["figures"]:
            out.append(_image(figure, f"{name}: {Path(figure).stem}"))
    out.append("</section>")
    return "\n".join(out)


def _time_section(benchmarks: pd.DataFrame) -> str:
    out = ["<section id='time'><h2>Where the run's time went</h2>"]
    if benchmarks.empty:
        out.append("<p>No job benchmarks recorded (results made before the rules recorded them, or not made).</p>")
        return "\n".join(out + ["</section>"])
    total = benchmarks["seconds"].sum()
    out.append(f"<p>{len(benchmarks)} jobs with a benchmark (index builds, retrieval and evaluation chunks), "
               f"{total:.1f} s of job time in all.</p>")
    stages = time_by_stage(benchmarks)
    stages["share"] = stages["seconds"] / total
    out.append(_frame_table(stages, {"seconds": lambda v: f"{v:.1f}", "cpu_seconds": lambda v: _number(v, 1),
                                     "max_rss_mb": lambda v: _number(v, 0), "share": lambda v: f"{100 * v:.1f}%"},
                            left=("stage", "collection")))
    slowest = benchmarks.sort_values("seconds", ascending=False).head(10)[["job", "seconds", "max_rss_mb"]]
    out.append("<h4>Slowest jobs</h4>")
    out.append(_frame_table(slowest, {"seconds": lambda v: f"{v:.1f}", "max_rss_mb": lambda v: _number(v, 0)},
                            left=("job",)))
    return "\n".join(out + ["</section>"])


def _warnings_section(manifest: Mapping[str, Any]) -> str:
    """The run's warnings: the config's, and each distinct one its jobs logged with the logs saying it
    (irgrid.jobs.job_warnings), so that none is seen only by whoever opens a job's log."""
    sources = manifest.get("warnings") or {}
    config_warnings = list(dict.fromkeys(sources.get("config", [])))
    job_warnings = merged(collect_warnings(sources.get("logs", [])))
    out = ["<section id='warnings'><h2>Warnings</h2>"]
    if not config_warnings and not job_warnings:
        out.append("<p>No warnings: the config and the jobs that made these results logged none.</p>")
        return "\n".join(out + ["</section>"])
    out.append(f"<p>{len(config_warnings) + len(job_warnings)} distinct warnings of the config and of the jobs "
               "that made these results (each also in the job's log).</p><ul>")
    out += [f"<li>{_e(message)} <span class='legend'>[config]</span></li>" for message in config_warnings]
    for message, logs in job_warnings:
        where = ", ".join(f"<code>{_e(log)}</code>" for log in logs[:3]) + (
            f" and {len(logs) - 3} more" if len(logs) > 3 else "")
        out.append(f"<li>{_e(message)} <span class='legend'>[{where or 'log unknown'}]</span></li>")
    return "\n".join(out + ["</ul>", "</section>"])


def _inputs_section(manifest: Mapping[str, Any]) -> str:
    out = ["<section id='inputs'><h2>Inputs</h2>", "<h3>Raw files (each file read and its sha256)</h3>"]
    rows = []
    for collection, entry in manifest.get("collections", {}).items():
        # "files": what was read and its digest (irgrid.report.manifest.raw_file_rows); older
        # manifests carry only the registry's checksums
        files = [(row["file"], row["sha256"]) for row in entry.get("files", [])] or list(entry["sha256"].items())
        for file, sha in files or [("(no file listed in the registry)", "")]:
            rows.append({"collection": collection, "format": entry["format"], "file": file, "sha256": sha})
    out.append(_frame_table(pd.DataFrame(rows, columns=["collection", "format", "file", "sha256"]),
                            left=("collection", "format", "file", "sha256")))
    rows = []
    for path, labels in manifest.get("indexes", {}).items():
        stats_path = Path(path) / "stats.json"
        stats = json.loads(stats_path.read_text(encoding="utf-8")) if stats_path.exists() else {}
        rows.append({"collection": labels["collection"], "analyzer": labels["analyzer"],
                     "documents": stats.get("num_docs", "missing"), "tokens": stats.get("total_length", ""),
                     "terms": stats.get("num_terms", ""), "format": stats.get("format_version", "")})
    out.append("<h3>Indexes</h3>")
    out.append(_frame_table(pd.DataFrame(rows, columns=["collection", "analyzer", "documents", "tokens", "terms",
                                                        "format"]), left=("collection", "analyzer")))
    settings = manifest.get("settings", {})
    out.append(f"<p>Retrieval depth {_e(settings.get('depth'))}, measures {_e(', '.join(settings.get('measures', [])))}, "
               f"{_e(settings.get('chunk_size'))} points a job at most"
               + (f" (doubled for a query set of more than {_e(settings['max_chunks'])} such jobs)"
                  if settings.get("max_chunks") else "") + ".</p>")
    return "\n".join(out + ["</section>"])


def render_report(manifest: Mapping[str, Any], out_dir: str | os.PathLike = "results") -> str:
    experiments = manifest.get("experiments", {})
    benchmarks = _benchmarks(manifest)
    commit = git_commit()
    toc = []
    for name, experiment in experiments.items():
        anchor = f"x-{_slug(name)}"
        subs = [("findings", "findings"), ("tables", "tables"), ("evidence", "per-query evidence")]
        if experiment["figures"]:
            subs.append(("figures", "figures"))
        links = " · ".join(f"<a href='#{anchor}-{key}'>{label}</a>" for key, label in subs)
        toc.append(f"<li><a href='#{anchor}'>{_e(name)}</a>: {links}</li>")
    toc.append("<li><a href='#time'>Where the run's time went</a></li><li><a href='#inputs'>Inputs</a></li>"
               "<li><a href='#warnings'>Warnings</a></li>")
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>irgrid report</title><style>{STYLE}</style></head><body>",
        "<h1>irgrid report</h1>",
        f"<p>irgrid {_e(__version__)}, git commit <code>{_e(commit or 'unknown')}</code>, generated "
        f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC. Every number below was computed by the workflow "
        "from the per-query evaluation files.</p>",
        f"<nav><h2 id='contents'>Contents</h2><ul>{''.join(toc)}</ul></nav>",
    ]
    parts += [_experiment(name, experiment, benchmarks, Path(out_dir)) for name, experiment in experiments.items()]
    parts += [_time_section(benchmarks), _inputs_section(manifest), _warnings_section(manifest), "</body></html>"]
    return "\n".join(parts) + "\n"


def write_report(manifest: Mapping[str, Any], out: str | os.PathLike) -> None:
    write_text(render_report(manifest, Path(out).parent), out)
