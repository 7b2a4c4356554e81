"""The one line a failed run ends with: which job failed first, why, and where its log is.

Snakemake's ``onerror:`` hook (Snakefile) calls :func:`report_first_failure` with the run's own
log. Snakemake prints every failed job's error block, and with ``--show-failed-logs`` every log
besides; the cause (``ADI.ALL: sha256 is ..., the registry expects ...``) then sits somewhere in
hundreds of lines. This prints it once, last::

    First failed job qrels (collection=adi): irgrid qrels: error: ADI.REL:5: expected ... [log: logs/adi/qrels.log]

The run's log gives the first ``Error in rule R:`` block (its job id and log path) and, from the
job's start block with the same id, its wildcards; the job's log gives the cause: its last line
that reads as an error, skipping traceback frames and progress bars.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MAX_CAUSE_CHARS = 400

_HEADER = re.compile(r"^(?:local)?(?:rule|checkpoint) (\S+):$")
_ERROR_HEADER = re.compile(r"^Error in rule (\S+):$")
_FIELD = re.compile(r"^\s{4}(\w+): ?(.*)$")
_LOG_HINT = " (check log file(s) for error details)"
#: a line naming an exception or an error: "irgrid index: error: ...", "ValueError: ...", "... Error: ..."
_ERROR_LINE = re.compile(r"(\berror\b|^[\w.]*(Error|Exception|Interrupt|Exit)\b)", re.IGNORECASE)
#: traceback and progress noise: frames, carets, Dask's and tqdm's bars
_NOISE = re.compile(r"^(Traceback \(most recent call last\):|During handling of the above|The above exception"
                    r"|\[#* *\] \| |.*\d+%\|)")


@dataclass(frozen=True)
class Failure:
    rule: str
    wildcards: str  # "collection=adi, analyzer=porter", or "" for a rule without wildcards
    logs: tuple[str, ...]
    cause: str

    def summary(self) -> str:
        job = f"{self.rule} ({self.wildcards})" if self.wildcards else self.rule
        where = f" [log: {', '.join(self.logs)}]" if self.logs else ""
        return f"First failed job {job}: {self.cause}{where}"


def _blocks(lines: list[str]) -> Iterable[tuple[str, str, dict[str, str]]]:
    """``(kind, rule, fields)`` for each job block: kind ``start`` (``rule R:``) or ``error`` (``Error in rule R:``)."""
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        start, error = _HEADER.match(line), _ERROR_HEADER.match(line)
        if not (start or error):
            i += 1
            continue
        fields: dict[str, str] = {}
        i += 1
        while i < len(lines) and lines[i].startswith("    "):
            field = _FIELD.match(lines[i].rstrip())
            if field and field.group(1) not in fields:
                fields[field.group(1)] = field.group(2)
            i += 1
        yield ("error" if error else "start"), (error or start).group(1), fields


def first_failure(run_log_text: str, workdir: str | os.PathLike = ".") -> Failure | None:
    """The first failed job of a Snakemake run log, with the cause read from the job's own log."""
    wildcards_of: dict[str, str] = {}
    for kind, rule, fields in _blocks(run_log_text.splitlines()):
        if kind == "start":
            wildcards_of.setdefault(fields.get("jobid", ""), fields.get("wildcards", ""))
            continue
        logs = tuple(
            path.strip() for path in fields.get("log", "").replace(_LOG_HINT, "").split(",") if path.strip()
        )
        cause = None
        for path in logs:
            cause = cause_in_log(Path(workdir) / path)
            if cause:
                break
        if not cause:
            message = fields.get("message", "")
            cause = message if message and message != "None" else "no cause in its log; see Snakemake's output above"
        return Failure(rule, wildcards_of.get(fields.get("jobid", ""), ""), logs, cause)
    return None


def cause_in_log(path: str | os.PathLike) -> str | None:
    """The last line of a job's log that reads as an error, else its last meaningful line, else None."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return last_meaningful_line(text)


def last_meaningful_line(text: str) -> str | None:
    lines = [line.strip() for line in re.split(r"[\r\n]+", text)]
    meaningful = [
        line for line, raw in zip(lines, re.split(r"[\r\n]+", text))
        if line and not raw[:1].isspace() and not _NOISE.match(line) and not set(line) <= set("^~-=* ")
    ]
    if not meaningful:
        return None
    errors = [line for line in meaningful if _ERROR_LINE.search(line)]
    line = (errors or meaningful)[-1]
    return line if len(line) <= MAX_CAUSE_CHARS else line[: MAX_CAUSE_CHARS - 3] + "..."


def report_first_failure(log, workdir: str | os.PathLike = ".", stream=None) -> str | None:
    """Print the summary line of a failed run (Snakemake's ``onerror`` hook passes ``log``: its log file(s))."""
    paths = [log] if isinstance(log, (str, os.PathLike)) else list(log or [])
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        failure = first_failure(text, workdir)
        if failure is not None:
            line = failure.summary()
            print(line, file=stream or sys.stderr, flush=True)
            return line
    return None
