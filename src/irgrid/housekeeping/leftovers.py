"""Temporaries that killed jobs left under a results tree, and removing those nobody will finish.

Every temporary the package writes is named ``.{name}.{host}~{pid}~{token}.tmp`` (or ``.old``
for a replaced directory on its way out; :func:`irgrid.io.temporary_name`). One is *dead* when it
was made on this host by a process that no longer runs: nothing will rename it into place or
remove it. Temporaries of live processes are in use; those of other hosts (a cluster's nodes)
cannot be judged from here and are reported, not removed.

Names of older versions of the package (``.{name}.XXXXXXXX.tmp``, ``{name}.tmp-XXXX``,
``.{name}.old-XXXX``) carry no process; they are reported as ``unowned`` and removed only when
asked (``--unowned``), which is safe when no run is active.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..io import Leftover, parse_leftover, process_is_alive, remove_path, this_host

# Temporary names of earlier versions: mkstemp's ".name.XXXXXXXX.tmp", the index's "name.tmp-<hex>",
# mkdtemp's ".name.tmp-XXXX" and ".name.old-XXXX".
_UNOWNED = re.compile(r"^(\..+\.[A-Za-z0-9_]{8}\.tmp|.+\.tmp-[A-Za-z0-9_]+|\..+\.old-[A-Za-z0-9_]+)$")


@dataclass
class LeftoverReport:
    """What :func:`clean_leftovers` found: removed (dead), in use (live), elsewhere (other hosts), unowned."""

    removed: list[Path] = field(default_factory=list)
    in_use: list[Leftover] = field(default_factory=list)
    other_hosts: list[Leftover] = field(default_factory=list)
    unowned: list[Path] = field(default_factory=list)
    removed_bytes: int = 0

    def lines(self) -> list[str]:
        """One line per finding, then a summary, for the command's output."""
        out = [f"removed {path} (left by a process that no longer runs)" for path in self.removed]
        out += [f"kept {item.path}: process {item.pid} is still writing it" for item in self.in_use]
        out += [f"kept {item.path}: made on host {item.host} (pid {item.pid}); run clean-leftovers there"
                for item in self.other_hosts]
        out += [f"unowned {path}: an older temporary name; --unowned removes it (when no run is active)"
                for path in self.unowned]
        out.append(f"{len(self.removed)} leftovers removed ({self.removed_bytes / 1e6:.1f} MB), "
                   f"{len(self.in_use)} in use, {len(self.other_hosts)} on other hosts, {len(self.unowned)} unowned")
        return out


def _size(path: Path) -> int:
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size if path.exists() or path.is_symlink() else 0
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def find_leftovers(root: str | os.PathLike) -> tuple[list[Leftover], list[Path]]:
    """Every temporary under ``root``: the package's (with their maker) and unowned older ones.

    A temporary directory is not searched inside: it goes (or stays) as a whole.
    """
    ours: list[Leftover] = []
    unowned: list[Path] = []
    root = Path(root)
    if not root.exists():
        return ours, unowned
    for directory, subdirs, files in os.walk(root):
        base = Path(directory)
        for name in list(subdirs) + files:
            leftover = parse_leftover(base / name)
            if leftover is not None:
                ours.append(leftover)
            elif _UNOWNED.match(name):
                unowned.append(base / name)
            else:
                continue
            if name in subdirs:
                subdirs.remove(name)
    return sorted(ours), sorted(unowned)


def clean_leftovers(root: str | os.PathLike, unowned: bool = False, dry_run: bool = False) -> LeftoverReport:
    """Remove the temporaries under ``root`` left by dead processes of this host (and unowned ones if asked)."""
    report = LeftoverReport()
    host = this_host()
    found, old_names = find_leftovers(root)
    for leftover in found:
        if leftover.host != host:
            report.other_hosts.append(leftover)
        elif process_is_alive(leftover.pid):
            report.in_use.append(leftover)
        else:
            report.removed_bytes += _size(leftover.path)
            if not dry_run:
                remove_path(leftover.path)
            report.removed.append(leftover.path)
    for path in old_names:
        if unowned:
            report.removed_bytes += _size(path)
            if not dry_run:
                remove_path(path)
            report.removed.append(path)
        else:
            report.unowned.append(path)
    return report
