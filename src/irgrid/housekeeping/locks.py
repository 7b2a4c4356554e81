"""Snakemake's lock on a working directory, and whether a live run holds it.

Snakemake writes ``.snakemake/locks/*.lock`` when a run starts and removes them when it ends. A run
killed with SIGKILL (or a node that went down) leaves them, and the next run stops with "Directory
cannot be locked", suggesting ``--unlock`` even when another run really is active there. This
module tells the two apart: a lock is *held* while a Snakemake process runs with this directory as
its working directory (``/proc/<pid>/cwd``, or ``--directory``/``-d`` on its command line);
otherwise it is stale and removed.

Linux only (``/proc``); elsewhere nothing is found to be running and the caller is told so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

LOCK_DIR = Path(".snakemake") / "locks"


@dataclass(frozen=True)
class SnakemakeProcess:
    pid: int
    command: str


@dataclass
class LockState:
    """The lock files of a directory and the Snakemake processes running there."""

    directory: Path
    locks: list[Path] = field(default_factory=list)
    holders: list[SnakemakeProcess] = field(default_factory=list)
    removed: bool = False

    @property
    def stale(self) -> bool:
        return bool(self.locks) and not self.holders


def _is_snakemake(argv: list[str]) -> bool:
    """``.../bin/snakemake ...`` or ``python -m snakemake ...`` (not a job that merely mentions it)."""
    if not argv:
        return False
    if os.path.basename(argv[0]) == "snakemake":
        return True
    if os.path.basename(argv[0]).startswith("python") and len(argv) > 1:
        if argv[1] == "-m" and len(argv) > 2 and argv[2] == "snakemake":
            return True
        return os.path.basename(argv[1]) == "snakemake"  # python .venv/bin/snakemake
    return False


def _directory_argument(argv: list[str], cwd: Path) -> Path | None:
    for i, arg in enumerate(argv):
        if arg in ("--directory", "-d") and i + 1 < len(argv):
            return (cwd / argv[i + 1]).resolve()
        if arg.startswith("--directory="):
            return (cwd / arg.split("=", 1)[1]).resolve()
    return None


def snakemake_processes(directory: str | os.PathLike, proc: str | os.PathLike = "/proc") -> list[SnakemakeProcess]:
    """Snakemake processes whose working directory (or ``--directory``) is ``directory``, this one excluded."""
    directory = Path(directory).resolve()
    found = []
    proc = Path(proc)
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
            argv = [arg for arg in argv if arg]
            if not _is_snakemake(argv):
                continue
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone meanwhile, or another user's process we may not inspect
            continue
        working = _directory_argument(argv, cwd) or cwd.resolve()
        if working == directory:
            found.append(SnakemakeProcess(int(entry.name), " ".join(argv)))
    return sorted(found, key=lambda p: p.pid)


def check_lock(directory: str | os.PathLike = ".", remove_stale: bool = True) -> LockState:
    """The lock state of ``directory``; a stale lock (no live Snakemake there) is removed if asked."""
    directory = Path(directory).resolve()
    lock_dir = directory / LOCK_DIR
    locks = sorted(path for path in lock_dir.iterdir() if path.is_file()) if lock_dir.is_dir() else []
    state = LockState(directory, locks, snakemake_processes(directory) if locks else [])
    if state.stale and remove_stale:
        for path in locks:
            path.unlink(missing_ok=True)
        state.removed = True
    return state
