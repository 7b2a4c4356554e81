"""Commands that tidy up after killed runs: leftover temporaries, a stale lock."""

from __future__ import annotations

import sys


def cmd_clean_leftovers(args) -> None:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..housekeeping import clean_leftovers

    for root in args.roots:
        for line in clean_leftovers(root, unowned=args.unowned, dry_run=args.dry_run).lines():
            print(f"{root}: {line}" if line[0].isdigit() else line)


def cmd_check_lock(args) -> int:
    # deferred: this command's own dependencies (see the module's docstring)
    from ..housekeeping import check_lock

    state = check_lock(args.directory)
    if state.holders:
        holder = state.holders[0]
        print(f"irgrid check-lock: a Snakemake run is active in {state.directory} (pid {holder.pid}: "
              f"{holder.command[:200]}); wait for it to finish, or stop it with 'kill {holder.pid}'", file=sys.stderr)
        return 2
    if state.removed:
        print(f"irgrid check-lock: removed a stale Snakemake lock in {state.directory / '.snakemake' / 'locks'} "
              "(no Snakemake process runs in this directory; the run that held it was killed)", file=sys.stderr)
    return 0
