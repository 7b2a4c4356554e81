"""Atomic writes: a result file either exists whole or not at all.

Everything is written to a temporary sibling and renamed into place, so a
killed job never leaves a half-written Parquet file that a later run (or
Snakemake's mtime check) could take for a finished one.  The temporary file or
directory gets the mode a plain ``open`` or ``mkdir`` would have given it
(0666 or 0777 less the umask) before it is renamed: ``tempfile`` makes them
owner-only, and on a shared cluster nobody else could read the results.

Temporary names say who made them: ``.{name}.{host}~{pid}~{token}.tmp`` (``.old`` for a replaced
directory on its way out). A killed job leaves its temporary behind; the next job writing the same
output removes those of processes that no longer run on this host (:func:`remove_dead_leftovers`),
and ``irgrid clean-leftovers results/`` removes them everywhere (:mod:`irgrid.housekeeping`).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq


def read_parquet_file(path: str | os.PathLike, columns: list[str] | None = None, memory_map: bool = False) -> pa.Table:
    """One Parquet file (``columns`` of it, all by default), read without ``pq.read_table``'s dataset
    layer: its first use imports pyarrow.dataset, a noticeable share of the CPU of every job that
    reads a file (the same table). ``memory_map``: pyarrow's (the file's pages decoded from the page
    cache rather than from a buffer read first)."""
    with pq.ParquetFile(path, memory_map=memory_map) as file:
        return file.read(columns=columns)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def publish_mode(path: str | os.PathLike, directory: bool = False) -> None:
    """Give a temporary file (or directory) the mode a plain open (mkdir) would: 0666 (0777) less the umask."""
    os.chmod(path, (0o777 if directory else 0o666) & ~_umask())


# ------------------------------------------------------------------ temporary names that say who made them

#: ``.{name}.{host}~{pid}~{token}.{kind}``, kind ``tmp`` (being written) or ``old`` (being replaced)
LEFTOVER_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<host>[A-Za-z0-9-]+)~(?P<pid>\d+)~(?P<token>[0-9a-f]+)\.(?P<kind>tmp|old)$")


def this_host() -> str:
    """The host name as it appears in temporary names (dots and other characters as ``-``)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "localhost"


class Leftover(NamedTuple):
    """A temporary file or directory, and who made it."""

    path: Path
    target: Path  # the output it was for
    host: str
    pid: int
    kind: str  # "tmp" or "old"


def parse_leftover(path: str | os.PathLike) -> Leftover | None:
    """The :class:`Leftover` a path names, or None if it is not a temporary name of this package."""
    path = Path(path)
    match = LEFTOVER_NAME.match(path.name)
    if match is None:
        return None
    return Leftover(path, path.with_name(match["name"]), match["host"], int(match["pid"]), match["kind"])


def process_is_alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (a zombie counts as dead: it writes nothing)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def is_dead_leftover(leftover: Leftover, host: str | None = None) -> bool:
    """Made on this host by a process that no longer runs: nobody will finish or remove it."""
    return leftover.host == (host or this_host()) and not process_is_alive(leftover.pid)


def remove_path(path: Path) -> None:
    """Remove a file or a directory tree (no error if it is already gone)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def remove_dead_leftovers(target: str | os.PathLike) -> list[Path]:
    """Remove the temporaries of ``target`` left by dead processes of this host; returns them.

    Called by every atomic write before it starts: a job rerun after ``kill -9`` tidies what the
    killed one left for the same output. Temporaries of live processes and of other hosts stay.
    """
    target = Path(target)
    removed = []
    if not target.parent.is_dir():
        return removed
    host = this_host()
    for candidate in target.parent.glob(f".{glob_escape(target.name)}.*"):
        leftover = parse_leftover(candidate)
        if leftover is not None and leftover.target == target and is_dead_leftover(leftover, host):
            remove_path(candidate)
            removed.append(candidate)
    return removed


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def temporary_name(target: str | os.PathLike, kind: str = "tmp") -> Path:
    """A new hidden sibling name of ``target`` naming this host and process (:data:`LEFTOVER_NAME`)."""
    target = Path(target)
    return target.with_name(f".{target.name}.{this_host()}~{os.getpid()}~{secrets.token_hex(4)}.{kind}")


def install_directory(tmp: str | os.PathLike, out_dir: str | os.PathLike) -> None:
    """Move the finished directory ``tmp`` to ``out_dir``, replacing what is there: the old one is
    renamed aside first, so ``out_dir`` is never a half-written or half-removed tree."""
    tmp, out_dir = Path(tmp), Path(out_dir)
    if out_dir.exists() or out_dir.is_symlink():
        old = temporary_name(out_dir, "old")
        os.rename(out_dir, old)
        os.rename(tmp, out_dir)
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink()
    else:
        os.rename(tmp, out_dir)


def temporary_dir_for(target: str | os.PathLike) -> Path:
    """A new directory beside ``target`` to build it in, with the mode mkdir would give it.

    Leftovers of dead processes for the same target are removed first.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_leftovers(target)
    path = temporary_name(target)
    path.mkdir()
    publish_mode(path, directory=True)
    return path


def temporary_dir(parent: str | os.PathLike, prefix: str) -> Path:
    """A new directory under ``parent`` to build a result in (``prefix`` ``.{name}.tmp-``: for ``name``)."""
    name = prefix.removeprefix(".").removesuffix(".tmp-").removesuffix("-")
    return temporary_dir_for(Path(parent) / name)


def replace_dir(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target``, replacing an existing ``target`` directory.

    The old directory is first renamed to a ``.old`` temporary (one rename, so ``target`` is
    never half old, half new), then removed.
    """
    if target.exists() or target.is_symlink():
        old = temporary_name(target, "old")
        os.replace(target, old)
        os.replace(source, target)
        remove_path(old)
    else:
        os.replace(source, target)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_leftovers(target)
    tmp = temporary_name(target)
    os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    try:
        yield tmp
        if tmp.exists():
            publish_mode(tmp, directory=tmp.is_dir())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_parquet(table: pa.Table, path: str | os.PathLike, **options) -> None:
    """``table`` as Parquet at ``path``, atomically; ``options`` go to ``pq.write_table``."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **options)


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(data: object, path: str | os.PathLike) -> None:
    write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", path)
