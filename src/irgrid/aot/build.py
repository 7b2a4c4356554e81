"""Building the ahead-of-time module: ``numba.pycc`` compiles the kernels of :data:`irgrid.aot.kernels.EXPORTS`
into one extension module, written with its manifest into a directory (``irgrid aot build``).

Each kernel is the JIT dispatcher's own Python function compiled at the exported types, the @njit
functions it calls compiled in; a keyed kernel once per registered weighting it applies to, at the
weighting's kernel key (:func:`~irgrid.aot.kernels.keyed_source`). A kernel numba refuses is left out
(the JIT serves it) and the manifest records why; any other failure (no C compiler, say) fails the
build. The exported functions release the GIL, as the JIT kernels do (``nogil=True``): a Scorer's
threads run them at once.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

from numba.core.errors import NumbaError

from .kernels import EXPORTS, KEYED, MODULE_NAME, Arg, export_name, keyed_source
from .loader import MANIFEST_NAME, aot_directory, current_digest, kernel_keys, module_file_name, read_manifest


def numba_type(arg: Arg):
    # numba's types: imported when a module is built
    from numba import types
    from numba.np.numpy_support import from_dtype
    if arg.kind == "int":
        return types.int64
    if arg.kind == "bool":
        return types.boolean
    return types.Array(from_dtype(arg.dtype), arg.ndim, "C", readonly=not arg.writes)


def signature(kernel: str):
    """The numba signature ``kernel`` is exported at (arguments after a keyed kernel's key)."""
    # numba's types: imported when a module is built
    from numba import types
    export = EXPORTS[kernel]
    returns = eval(export.returns, {name: getattr(types, name) for name in dir(types)})  # noqa: S307  (kernels.py's own strings)
    return returns(*(numba_type(arg) for arg in export.args))


def python_functions() -> dict[str, tuple[str, object]]:
    """``{export name: (kernel, Python function)}``: each kernel's JIT dispatcher's ``py_func``; a keyed kernel's
    wrapper at each registered weighting's key."""
    from ..models.parts import WEIGHTINGS  # deferred: irgrid.models (every family), only for a build
    found = {}
    for kernel, export in EXPORTS.items():
        dispatcher = getattr(importlib.import_module(export.module), export.attribute)
        if kernel not in KEYED:
            found[export_name(kernel)] = (kernel, dispatcher.py_func)
            continue
        parameters = list(inspect.signature(dispatcher.py_func).parameters)[1:]  # after the key
        for name, weighting in sorted(WEIGHTINGS.items()):
            if export.applies is not None and not export.applies(weighting):
                continue
            namespace = {export.attribute: dispatcher}
            # the key is made (and recorded for the kernel's lookup of its parts) in this process
            source = keyed_source(export.attribute, parameters, str(weighting.kernel_key))
            exec(compile(source, f"<{kernel} at {name}>", "exec"), namespace)  # noqa: S102  (kernels.py's own source)
            found[export_name(kernel, name)] = (kernel, namespace["at_key"])
    return found


def _compile(name: str, output_dir: Path, exports: dict[str, tuple[str, object]], target_cpu: str) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending-deprecation warning
        # deferred: numba.pycc (a compiler toolchain), only for a build
        import numba.pycc.compiler as pycc_compiler
        from numba.pycc import CC

    class GilReleasingFlags(pycc_compiler.Flags):
        """pycc's compile flags, the Python wrapper releasing the GIL around the kernel (the JIT's nogil)."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    cc = CC(name)
    cc.output_dir = str(output_dir)
    cc.target_cpu = target_cpu
    cc.verbose = False
    for export, (kernel, function) in exports.items():
        cc.export(export, signature(kernel))(function)
    flags = pycc_compiler.Flags
    pycc_compiler.Flags = GilReleasingFlags
    try:
        cc.compile()
    finally:
        pycc_compiler.Flags = flags
    return output_dir / cc.output_file


def is_fresh(directory: Path) -> bool:
    """True when ``directory`` holds a module whose manifest's digest is the current one."""
    manifest = read_manifest(directory)
    return (manifest is not None and manifest.get("digest") == current_digest(kernel_keys())
            and (directory / manifest.get("module", "")).is_file())


def build(directory: Path | None = None, target_cpu: str = "host") -> dict:
    """Compile the module into ``directory`` (:func:`~irgrid.aot.loader.aot_directory` by default) and write its
    manifest; returns the manifest. ``target_cpu``: pycc's (``"host"``: this machine's, as the JIT compiles)."""
    directory = aot_directory() if directory is None else Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    keys = kernel_keys()
    digest = current_digest(keys)  # before compiling: a source changed meanwhile makes the module stale, not wrong
    exports = python_functions()
    refused: dict[str, str] = {}
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as scratch:
        scratch = Path(scratch)
        try:
            built = _compile(MODULE_NAME, scratch, exports, target_cpu)
        except NumbaError:  # a kernel numba cannot compile so: each tried alone, the rest built again
            for export, entry in list(exports.items()):
                try:
                    _compile(f"{MODULE_NAME}_{export}", scratch / "tries", {export: entry}, target_cpu)
                except Exception as error:  # noqa: BLE001
                    message = str(error).strip().splitlines()
                    refused[export] = f"{type(error).__name__}: {message[0] if message else ''}"
                    del exports[export]
            if not exports:
                raise RuntimeError(f"every kernel refused, the first: {next(iter(refused.values()))}") from None
            built = _compile(MODULE_NAME, scratch, exports, target_cpu)
        manifest = {
            "module": module_file_name(), "digest": digest, "target_cpu": target_cpu,
            "exports": {kernel: export for export, (kernel, _) in exports.items() if kernel not in KEYED},
            "keyed": {kernel: {name: export_name(kernel, name) for name in keys
                               if export_name(kernel, name) in exports} for kernel in KEYED},
            "kernel_keys": keys, "refused": refused,
        }
        # the module, then the manifest that names it: a process reading the manifest finds its module complete
        os.replace(built, directory / manifest["module"])
        (scratch / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(scratch / MANIFEST_NAME, directory / MANIFEST_NAME)
        shutil.rmtree(scratch / "tries", ignore_errors=True)
    return manifest
