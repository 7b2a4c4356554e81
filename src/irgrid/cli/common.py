"""What the commands share: JSON arguments, the collection a command names, the log."""

from __future__ import annotations

import json
import logging
import sys

from ..errors import ConfigError

log = logging.getLogger("irgrid")


def _json_argument(value: str):
    """A JSON argument given inline, or ``-`` for standard input: an experiment's cells outgrow the
    128 KiB a single command-line argument may hold, so the rules pass them through a here-document."""
    return json.loads(sys.stdin.read() if value == "-" else value)


def _collection(args):
    # deferred: this command's own dependencies (see the module's docstring)
    from ..collections import load_registry, resolve_files

    registry = load_registry(args.registry)
    if args.collection not in registry:
        raise ConfigError(f"{args.registry}: no collection {args.collection!r}; it has {sorted(registry)}")
    spec = registry[args.collection]
    files = resolve_files(spec, mirror=args.mirror, resources_dir=args.resources)
    return spec, files
