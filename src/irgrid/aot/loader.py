"""Where the ahead-of-time module lives, whether it is fresh, and the guarded calls that use it.

The module (built by :func:`irgrid.aot.build.build`, ``irgrid aot build``) sits in
:func:`aot_directory` beside a manifest (:data:`MANIFEST_NAME`, JSON) holding the digest of what
made its machine code (:func:`current_digest`). At the first guarded call of a process the loader
recomputes that digest and imports the module only when it matches; a missing, stale or
unimportable module, or ``IRGRID_AOT=0``, leaves the JIT kernels in use (one debug log line).

:func:`guarded` wraps a JIT dispatcher: a call goes to the module's function only when every
argument is exactly what it was compiled for (:func:`arguments_match`), since a ``numba.pycc``
function checks neither dtype nor layout (a wrong dtype crashes the interpreter, a strided view
gives a wrong answer); any other call goes to the JIT dispatcher, which compiles for what it gets.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .kernels import EXPORTS, KERNEL_SOURCES, KEYED, MODULE_NAME, Arg

logger = logging.getLogger(__name__)

#: the manifest beside the module
MANIFEST_NAME = "manifest.json"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_INT_TYPES = (int, np.int64)
_BOOL_TYPES = (bool, np.bool_)


def aot_directory() -> Path:
    """``IRGRID_AOT_DIR`` if set, else the environment's ``share/irgrid/aot``."""
    configured = os.environ.get("IRGRID_AOT_DIR")
    return Path(configured) if configured else Path(sys.prefix) / "share" / "irgrid" / "aot"


def aot_enabled() -> bool:
    """False when ``IRGRID_AOT=0``."""
    return os.environ.get("IRGRID_AOT", "1").strip() != "0"


def module_file_name() -> str:
    """The module's file name: :data:`~irgrid.aot.kernels.MODULE_NAME` and this interpreter's extension suffix."""
    return MODULE_NAME + importlib.machinery.EXTENSION_SUFFIXES[0]


def source_files() -> list[Path]:
    """The kernel source files (:data:`~irgrid.aot.kernels.KERNEL_SOURCES`), sorted."""
    package = Path(__file__).resolve().parent.parent
    return sorted({path for pattern in KERNEL_SOURCES for path in package.glob(pattern)})


def host_cpu() -> str:
    """The CPU numba compiles for: LLVM's name of the host CPU and its features."""
    # llvmlite is numba's (imported with it by the kernels' modules)
    import llvmlite.binding as llvm
    return f"{llvm.get_host_cpu_name()} {llvm.get_host_cpu_features().flatten()}"


def current_digest(kernel_keys: dict[str, str]) -> str:
    """A digest of what makes the module's machine code: the kernel source files, the weightings' kernel keys
    (``{name: key}``), numba's, numpy's and Python's versions, the platform and the target CPU."""
    # numba and llvmlite: imported already by the modules whose kernels are guarded
    import numba
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    for path in source_files():
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    facts = {"keys": kernel_keys, "numba": numba.__version__, "numpy": np.__version__, "python": sys.version,
             "platform": sysconfig.get_platform(), "extension": importlib.machinery.EXTENSION_SUFFIXES[0],
             "cpu": host_cpu()}
    digest.update(json.dumps(facts, sort_keys=True).encode())
    return digest.hexdigest()


def kernel_keys() -> dict[str, str]:
    """Each registered weighting's kernel key, by name."""
    # deferred: irgrid.models (every family) is imported when a module is loaded or built, not by the reader
    from ..models.parts import WEIGHTINGS
    return {name: str(weighting.kernel_key) for name, weighting in sorted(WEIGHTINGS.items())}


def read_manifest(directory: Path) -> dict | None:
    try:
        return json.loads((directory / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def load_functions(directory: Path | None = None) -> dict[str, Callable]:
    """The fresh module's functions: ``{kernel: function}`` and ``{(kernel, key): function}`` for the keyed ones;
    empty when the module is disabled, missing, stale or does not import."""
    if not aot_enabled():
        logger.debug("AOT kernels disabled (IRGRID_AOT=0): the JIT kernels are used")
        return {}
    directory = aot_directory() if directory is None else directory
    manifest = read_manifest(directory)
    if manifest is None:
        logger.debug("no AOT kernel module in %s: the JIT kernels are used", directory)
        return {}
    try:
        keys = kernel_keys()
        if manifest.get("digest") != current_digest(keys):
            logger.debug("the AOT kernel module in %s is stale: the JIT kernels are used", directory)
            return {}
        module = _import_extension(directory / manifest["module"])
        functions: dict = {kernel: getattr(module, name) for kernel, name in manifest["exports"].items()}
        for kernel, by_weighting in manifest["keyed"].items():
            for weighting_name, name in by_weighting.items():
                functions[kernel, keys[weighting_name]] = getattr(module, name)
    except Exception as error:  # noqa: BLE001  (any failure to check or load it: the JIT kernels)
        logger.debug("the AOT kernel module in %s did not load (%s): the JIT kernels are used", directory, error)
        return {}
    logger.debug("AOT kernels from %s: %s", directory, sorted(map(str, functions)))
    return functions


def _import_extension(path: Path):
    if MODULE_NAME in sys.modules:  # loaded once a process (an extension module cannot be loaded twice)
        module = sys.modules[MODULE_NAME]
        if Path(module.__file__).resolve() == path.resolve():
            return module
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[MODULE_NAME] = module
    return module


_functions: dict | None = None


def functions() -> dict:
    """The module's functions, loaded at the first call of the process (:func:`load_functions`)."""
    global _functions
    if _functions is None:
        _functions = load_functions()
    return _functions


def reset() -> None:
    """Forget the loaded functions: the next guarded call looks at the environment and the directory again."""
    global _functions
    _functions = None


#: numpy's array flags (ndarray.flags.num): C-contiguous, aligned, writeable
_C_CONTIGUOUS, _ALIGNED, _WRITEABLE = 0x1, 0x100, 0x400
_ARRAY, _INT, _BOOL = 0, 1, 2


def compiled_checks(specs: tuple[Arg, ...]) -> tuple[tuple, ...]:
    """``specs`` as :func:`arguments_match` reads them: ``(kind, dtype, ndim, flags that must be set)``."""
    kinds = {"array": _ARRAY, "int": _INT, "bool": _BOOL}
    return tuple((kinds[spec.kind], spec.dtype, spec.ndim,
                  _C_CONTIGUOUS | _ALIGNED | (_WRITEABLE if spec.writes else 0)) for spec in specs)


def arguments_match(args: tuple, specs: tuple) -> bool:
    """True when each of ``args`` is exactly of its :class:`~irgrid.aot.kernels.Arg` (or :func:`compiled_checks`'
    tuple): an ndarray of the dtype (native byte order) and ndim, C-contiguous and aligned, writeable where the
    kernel writes; an int64 (a Python int in range, or np.int64); a bool (or np.bool_)."""
    if len(args) != len(specs):
        return False
    if specs and isinstance(specs[0], Arg):
        specs = compiled_checks(specs)
    for value, (kind, dtype, ndim, flags) in zip(args, specs):
        if kind == _ARRAY:
            if (not isinstance(value, np.ndarray) or value.ndim != ndim or value.dtype != dtype
                    or value.flags.num & flags != flags):
                return False
        elif kind == _INT:
            if type(value) not in _INT_TYPES or not _INT64_MIN <= value <= _INT64_MAX:
                return False
        elif type(value) not in _BOOL_TYPES:
            return False
    return True


def guarded(kernel: str, jit: Callable) -> Callable:
    """``jit`` (the kernel's JIT dispatcher), calling the AOT module's function instead when the module is fresh
    and every argument matches its exported type; a keyed kernel (``score_and_rank``) takes the key first."""
    specs = compiled_checks(EXPORTS[kernel].args)
    if kernel in KEYED:
        def call_keyed(key, *args):
            function = (_functions if _functions is not None else functions()).get((kernel, key))
            if function is not None and arguments_match(args, specs):
                return function(*args)
            return jit(key, *args)
        call_keyed.__doc__ = jit.__doc__
        return call_keyed

    def call(*args):
        function = (_functions if _functions is not None else functions()).get(kernel)
        if function is not None and arguments_match(args, specs):
            return function(*args)
        return jit(*args)
    call.__doc__ = jit.__doc__
    return call
