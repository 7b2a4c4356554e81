"""numba's start-up in a process that only loads irgrid's cached kernels: without the SciPy import.

The first call of any ``@njit`` function in a process, even one loaded from numba's cache,
installs numba's typing and lowering registries, and one of them
(``numba.np.arraymath``) probes for a BLAS at import by importing
``scipy.linalg.cython_blas``, which imports all of ``scipy.linalg``: the largest single
part of a fresh retrieval process's fixed cost (docs/scale.md, "Opening an index").
The probe's answer is used only to choose ``np.cov`` / ``np.corrcoef``'s inner product
inside jitted code, which no irgrid kernel calls; every other linear-algebra function
still imports SciPy when a kernel using it is compiled.

:func:`import_arraymath_without_blas_probe` imports ``numba.np.arraymath`` with that one
import made to fail, then puts ``sys.modules`` back as it was, so a later ``import
scipy.linalg`` anywhere in the process works as usual. It does nothing when SciPy's
linear algebra or numba's module is already imported (then the probe is free, or done).

:func:`import_arraymath_at_numba_start` defers that import to numba's own start-up: numba's CPU
target installs its registries (``CPUContext.load_additional_registries``) before the first JIT
call of the process, cached or not, and the hook imports ``numba.np.arraymath`` without the probe
just before. A process whose kernels all run from the ahead-of-time module (:mod:`irgrid.aot`)
never starts numba's machinery, and then never imports the module at all.
"""

from __future__ import annotations

import sys

#: the module numba's BLAS probe imports (numba.np.linalg.ensure_blas)
BLAS_PROBE_MODULE = "scipy.linalg.cython_blas"


def import_arraymath_without_blas_probe() -> None:
    """Import ``numba.np.arraymath`` with its BLAS probe answered "no BLAS", without importing SciPy."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    # None in sys.modules makes `import scipy.linalg.cython_blas` raise ImportError at once, before
    # its parent packages are imported: the probe's own fallback
    sys.modules[BLAS_PROBE_MODULE] = None  # type: ignore[assignment]
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if sys.modules.get(BLAS_PROBE_MODULE, 0) is None:
            del sys.modules[BLAS_PROBE_MODULE]


def import_arraymath_at_numba_start() -> None:
    """:func:`import_arraymath_without_blas_probe` at numba's start-up (its registries' installation),
    not now; at once if numba has no such step to hook (another version) or is started already."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    # deferred: numba, which import_arraymath_without_blas_probe imports only in part
    from numba.core.cpu import CPUContext

    load_registries = getattr(CPUContext, "load_additional_registries", None)
    if load_registries is None:
        import_arraymath_without_blas_probe()
        return
    if getattr(load_registries, "imports_arraymath_first", False):  # hooked already
        return

    def load_additional_registries(self):
        import_arraymath_without_blas_probe()
        return load_registries(self)

    load_additional_registries.imports_arraymath_first = True  # type: ignore[attr-defined]
    CPUContext.load_additional_registries = load_additional_registries
