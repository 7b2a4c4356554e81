"""Tidying up after killed runs: temporaries left by dead processes, and Snakemake's stale lock.

- :mod:`.leftovers`: find the temporary files and directories (``.{name}.{host}~{pid}~{token}.tmp``,
  :mod:`irgrid.io`) under a results tree and remove those whose process no longer runs on this
  host (``irgrid clean-leftovers results/``, ``make clean-partial``).
- :mod:`.locks`: whether a Snakemake run holds this directory's lock; a lock no live process holds
  is removed (``irgrid check-lock``, run by ``make run`` before Snakemake).
"""

from .leftovers import LeftoverReport, clean_leftovers, find_leftovers
from .locks import LockState, check_lock, snakemake_processes

__all__ = ["LeftoverReport", "clean_leftovers", "find_leftovers", "LockState", "check_lock", "snakemake_processes"]
