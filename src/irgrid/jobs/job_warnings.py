"""A run's warnings, gathered from its jobs and said once at the end (and in the report).

A job writes its log to a file (``2> logs/...log``), and a warning there is read by nobody: a
run has hundreds of jobs. The ``irgrid`` command therefore also writes each warning it logs as
one JSON line to a file beside the job's log (``logs/adi/qrels.log`` ->
``logs/adi/qrels.warnings.jsonl``, :func:`install_warning_file`), made afresh by each run of
the job, so a job that no longer warns leaves no file. Snakemake's ``onsuccess:`` and
``onerror:`` hooks (Snakefile) call :func:`report_run_warnings` with the run's log: the jobs
that ran are the start blocks there, and their warnings are printed once, each message once
with the number of jobs that gave it. The report lists the warnings of the logs under the
directories of its collections and experiments (:func:`collect_warnings`).

The job's log is found from the process's standard error (``/proc/self/fd/2``): the rules need
no extra argument. ``IRGRID_WARNINGS_FILE`` names the file instead (elsewhere than Linux, or
for a command run by hand).
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from .failures import _blocks

#: beside a job's ``X.log``: ``X.warnings.jsonl``
WARNINGS_SUFFIX = ".warnings.jsonl"
WARNINGS_FILE_ENV = "IRGRID_WARNINGS_FILE"
#: warnings of a run printed at its end at most; the rest are counted
MAX_PRINTED = 50


def warnings_path_for_log(log_path: str | os.PathLike) -> Path:
    """``logs/a/b.log`` -> ``logs/a/b.warnings.jsonl`` (a log without ``.log``: the suffix appended)."""
    path = Path(log_path)
    stem = path.name[:-len(".log")] if path.name.endswith(".log") else path.name
    return path.with_name(stem + WARNINGS_SUFFIX)


def stderr_log_path() -> Path | None:
    """The file standard error is redirected to, when it is a regular file named ``*.log`` (a job's
    log), else None. The name is the one ``/proc`` gives, checked to be the same file."""
    try:
        status = os.fstat(2)
        if not stat.S_ISREG(status.st_mode):
            return None
        target = Path(os.readlink("/proc/self/fd/2"))
        same = target.stat()
    except OSError:
        return None
    if (same.st_dev, same.st_ino) != (status.st_dev, status.st_ino) or not target.name.endswith(".log"):
        return None
    # relative to the working directory where it lies below it, as the rules name logs
    try:
        return target.relative_to(Path.cwd())
    except ValueError:
        return target


#: how warnings.warn's text reaches logging: "path:line: Category: message\n  source line\n"
_PY_WARNING = re.compile(r"^.*?:\d+: (\w+): (.*)$")


def _message(record: logging.LogRecord) -> str:
    """The record's message; for a ``warnings.warn`` (logger ``py.warnings``) its text and category only,
    without the file, line and source line that would differ between copies of the code."""
    message = record.getMessage()
    if record.name == "py.warnings":
        first = message.strip().splitlines()[0] if message.strip() else message
        found = _PY_WARNING.match(first)
        return f"{found.group(2)} ({found.group(1)})" if found else first
    return message


class JsonLinesWarningHandler(logging.Handler):
    """Appends each record of level WARNING and above to ``path`` as one JSON object a line."""

    def __init__(self, path: Path, command: str, log: str, outputs: Sequence[str]):
        super().__init__(level=logging.WARNING)
        self.path = path
        self.fields = {"command": command, "log": log, "outputs": list(outputs)}

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = json.dumps({**self.fields, "level": record.levelname, "logger": record.name,
                               "message": _message(record)}, ensure_ascii=False)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(line + "\n")
        except Exception:  # a warning that cannot be kept must not fail the job
            self.handleError(record)


def install_warning_file(command: str, outputs: Sequence[str] = (),
                         logger: logging.Logger | None = None) -> JsonLinesWarningHandler | None:
    """Keep the warnings this process logs in the file beside its job's log (see the module's text);
    an earlier run's file is removed first. None when the process writes to no log file."""
    named = os.environ.get(WARNINGS_FILE_ENV)
    log = stderr_log_path()
    if named:
        path = Path(named)
    elif log is not None:
        path = warnings_path_for_log(log)
    else:
        return None
    try:
        path.unlink(missing_ok=True)
    except OSError:
        return None
    handler = JsonLinesWarningHandler(path, command, str(log) if log else "", outputs)
    (logger or logging.getLogger()).addHandler(handler)
    logging.captureWarnings(True)  # warnings.warn (scipy's, the statistics') are warnings too
    return handler


def read_warnings(path: str | os.PathLike) -> list[dict]:
    """The records of one warnings file ([] if it does not exist); a line that is not JSON is kept as text."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = {"message": line}
        if not isinstance(record, dict):
            record = {"message": str(record)}
        record.setdefault("log", str(path).removesuffix(WARNINGS_SUFFIX) + ".log")
        records.append(record)
    return records


def job_logs_of_run(run_log_text: str) -> list[str]:
    """The log files of the jobs a Snakemake run log shows starting, in order, each once."""
    logs: list[str] = []
    for kind, _rule, fields in _blocks(run_log_text.splitlines()):
        if kind == "start":
            logs += [path.strip() for path in fields.get("log", "").split(",") if path.strip()]
    return list(dict.fromkeys(logs))


def merged(records: Iterable[dict]) -> list[tuple[str, list[str]]]:
    """``(message, logs)`` for each distinct message, in first-seen order."""
    logs_of: dict[str, list[str]] = {}
    for record in records:
        logs = logs_of.setdefault(str(record.get("message", "")), [])
        if record.get("log") and record["log"] not in logs:
            logs.append(record["log"])
    return list(logs_of.items())


def summary_lines(config_warnings: Sequence[str], records: Iterable[dict]) -> list[str]:
    """What the end of a run prints: a heading and one line per distinct warning ([] if none)."""
    distinct = [(message, []) for message in dict.fromkeys(config_warnings)] + merged(records)
    if not distinct:
        return []
    lines = [f"{len(distinct)} warnings in this run (each also in the job's log):" if len(distinct) > 1
             else "1 warning in this run (also in the job's log):"]
    for message, logs in distinct[:MAX_PRINTED]:
        if not logs:
            where = " [config]"
        elif len(logs) == 1:
            where = f" [log: {logs[0]}]"
        else:
            where = f" [{len(logs)} jobs, e.g. log: {logs[0]}]"
        lines.append(f"  irgrid warning: {message}{where}")
    if len(distinct) > MAX_PRINTED:
        lines.append(f"  ... and {len(distinct) - MAX_PRINTED} more (logs/**/*{WARNINGS_SUFFIX})")
    return lines


def report_run_warnings(log, config_warnings: Sequence[str] = (), workdir: str | os.PathLike = ".",
                        stream=None) -> list[str]:
    """Print the warnings of a run's jobs and of its config once (Snakemake's ``onsuccess``/``onerror``
    hooks pass ``log``: the run's log file(s)); returns the lines printed."""
    paths = [log] if isinstance(log, (str, os.PathLike)) else list(log or [])
    records: list[dict] = []
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for job_log in job_logs_of_run(text):
            records += read_warnings(Path(workdir) / warnings_path_for_log(job_log))
    lines = summary_lines(config_warnings, records)
    if lines:
        print("\n".join(lines), file=stream or sys.stderr, flush=True)
    return lines


def collect_warnings(sources: Iterable[str | os.PathLike]) -> list[dict]:
    """The records of every warnings file under the directories ``sources`` (or a file itself), in
    path order. A record whose job's outputs are all gone (results deleted since) is left out."""
    records = []
    for source in sources:
        source = Path(source)
        files = [source] if source.is_file() else sorted(source.rglob(f"*{WARNINGS_SUFFIX}")) if source.is_dir() else []
        for path in files:
            for record in read_warnings(path):
                outputs = record.get("outputs") or []
                if outputs and not any(Path(output).exists() for output in outputs):
                    continue
                records.append(record)
    return records
