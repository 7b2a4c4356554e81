"""Ahead-of-time compiled kernels: a ``numba.pycc`` extension module of the kernels a fresh retrieval process
calls on its open and first query, so that it runs none of numba's per-process start-up (docs/scale.md,
"Opening an index").

:mod:`.kernels` lists the exported kernels and their argument types, :mod:`.build` compiles the module
(``irgrid aot build``), :mod:`.loader` finds it, checks it is fresh and guards each call
(:func:`~irgrid.aot.loader.guarded`): the JIT kernels serve whatever the module does not.
"""
