"""Atomic writes: a result file either exists whole or not at all.

Everything is written to a temporary sibling and renamed into place, so a
killed job never leaves a half-written Parquet file that a later run (or
Snakemake's mtime check) could take for a finished one.  The temporary file or
directory gets the mode a plain ``open`` or ``mkdir`` would have given it
(0666 or 0777 less the umask) before it is renamed: ``tempfile`` makes them
owner-only, and on a shared cluster nobody else could read the results.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def publish_mode(path: str | os.PathLike, directory: bool = False) -> None:
    """Give a temporary file (or directory) the mode a plain open (mkdir) would: 0666 (0777) less the umask."""
    os.chmod(path, (0o777 if directory else 0o666) & ~_umask())


def temporary_dir(parent: str | os.PathLike, prefix: str) -> Path:
    """A new directory under ``parent`` to build a result in, with the mode mkdir would give it."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    publish_mode(path, directory=True)
    return path


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        if tmp.exists():
            publish_mode(tmp, directory=tmp.is_dir())
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_parquet(table: pa.Table, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(data: object, path: str | os.PathLike) -> None:
    write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", path)
