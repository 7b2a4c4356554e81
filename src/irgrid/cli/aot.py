"""`irgrid aot build`: the ahead-of-time kernel module (irgrid.aot) of this environment."""

from __future__ import annotations

import sys
from pathlib import Path


def cmd_aot_build(args) -> int:
    """Build the module into ``--directory`` (the environment's by default) unless a fresh one is there
    (``--force``: build anyway). A failed build (no C compiler, a numba without pycc) prints one line and
    returns 1: the JIT kernels serve every call."""
    # deferred: this command's own dependencies (numba, the kernels' modules)
    from ..aot.build import build, is_fresh
    from ..aot.loader import aot_directory

    directory = Path(args.directory) if args.directory else aot_directory()
    if not args.force and is_fresh(directory):
        print(f"irgrid aot build: the module in {directory} is fresh")
        return 0
    try:
        manifest = build(directory, target_cpu=args.target_cpu)
    except Exception as error:  # noqa: BLE001  (any failure: the JIT kernels, said in one line)
        text = str(error).strip().splitlines()
        print(f"irgrid aot build: not built ({type(error).__name__}: {text[0] if text else ''}); "
              "the JIT kernels are used", file=sys.stderr)
        return 1
    refused = manifest["refused"]
    print(f"irgrid aot build: {directory / manifest['module']}"
          + (f"; left to the JIT: {', '.join(f'{k} ({v})' for k, v in refused.items())}" if refused else ""))
    return 0
