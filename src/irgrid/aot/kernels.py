"""The kernels an ahead-of-time module exports, and the argument types each is compiled for.

One table (:data:`EXPORTS`) serves both sides: :mod:`irgrid.aot.build` turns each argument's
:class:`Arg` into numba's type for ``numba.pycc``, and :mod:`irgrid.aot.loader` checks a call's
arguments against the same :class:`Arg` before it calls the compiled function. The types are the
ones the reader and the Scorer pass (equal to the JIT dispatchers' signatures after a retrieval).

The kernels taking a weighting's key first (:data:`KEYED`: ``score_and_rank`` and the parts a
block of points shares) are exported once per weighting they are called for, each through a
function with the weighting's ``kernel_key`` written in as the literal (numba compiles one loop
per key): :func:`keyed_source`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: the extension module's name (its file: this name and the interpreter's extension suffix)
MODULE_NAME = "irgrid_aot_kernels"


@dataclass(frozen=True)
class Arg:
    """One argument: ``kind`` "array" (a C-contiguous, aligned array of ``dtype`` and ``ndim``; ``writes``: the
    kernel writes it, so a read-only array goes to the JIT), "int" (int64) or "bool"."""

    kind: str
    dtype: np.dtype | None = None
    ndim: int = 1
    writes: bool = False


def _array(dtype, ndim: int = 1, writes: bool = True) -> Arg:
    return Arg("array", np.dtype(dtype), ndim, writes)


I32, I64, F64 = _array(np.int32), _array(np.int64), _array(np.float64)
F64_2D = _array(np.float64, 2)
INT, BOOL = Arg("int"), Arg("bool")
#: np.frombuffer of a read-only memory map (a bucket file)
MAPPED_FILE = _array(np.uint8, writes=False)
#: the reader's read-only arrays (document lengths, docno ranks)
READ_ONLY_I32 = _array(np.int32, writes=False)


@dataclass(frozen=True)
class Export:
    """A kernel: where its JIT dispatcher lives (``module``, ``attribute``), its arguments and its result's
    numba type (a string :mod:`irgrid.aot.build` evaluates over ``numba.types``); a keyed kernel's ``applies``:
    which weightings call it (all when None), the others' loops are not compiled."""

    module: str
    attribute: str
    args: tuple[Arg, ...]
    returns: str
    applies: Callable[[object], bool] | None = None


EXPORTS: dict[str, Export] = {
    "footer": Export("irgrid.index.pages", "_footer", (MAPPED_FILE,),
                     "Tuple((int64, Array(int64, 2, 'C'), Array(int64, 1, 'C'), Array(int64, 2, 'C')))"),
    "read_groups": Export("irgrid.index.pages", "_read_groups",
                          (MAPPED_FILE, I64, I64, _array(np.int64, 2), I64, I64, I64, I32, I32),
                          "UniTuple(int64, 2)"),
    "candidate_slots_into": Export("irgrid.retrieve.ranking", "_candidate_slots_into",
                                   (I32, I64, I64, INT, I32, I32), "Array(int64, 1, 'C')"),
    # the arguments after the weighting's key; doc_lengths and docno_rank are the reader's read-only arrays
    "score_and_rank": Export(
        "irgrid.retrieve.ranking", "score_and_rank",
        (BOOL, F64_2D, F64_2D, F64_2D, F64_2D, F64_2D, F64_2D, I64, I64, I32, I32, READ_ONLY_I32, I32, I32, I64,
         READ_ONLY_I32, INT, INT, INT, F64, F64, I32, I32, I64, _array(np.int32, 2), F64_2D),
        "Tuple((Array(int32, 2, 'C'), Array(float64, 2, 'C'), Array(int64, 1, 'C')))"),
    # the parts a block of points shares (PreparedQuerySet.block_parts): a weighting whose posting part reads
    # no length (tabulated by tf), and one with a document part (Dirichlet's log(|D| + mu))
    "tabulated_posting_parts": Export("irgrid.models.parts.base", "tabulated_posting_parts", (F64, I32, F64, I64, F64),
                                      "Array(float64, 1, 'C')", applies=lambda weighting: not weighting.reads_length),
    "document_value_table": Export("irgrid.models.parts.base", "document_value_table", (F64, F64),
                                   "Array(float64, 1, 'C')", applies=lambda weighting: weighting.document is not None),
    "candidate_document_values": Export("irgrid.models.parts.base", "candidate_document_values",
                                        (F64, I32, F64, F64, F64), "Array(float64, 1, 'C')",
                                        applies=lambda weighting: weighting.document is not None),
}

#: the kernels taking a weighting's key first: exported once per weighting they apply to
KEYED = frozenset({"score_and_rank", "tabulated_posting_parts", "document_value_table", "candidate_document_values"})

def keyed_source(attribute: str, parameters: Sequence[str], key: str) -> str:
    """The source of ``at_key(parameters)``, calling the kernel ``attribute`` with ``key`` written in as the
    literal first argument: the JIT dispatcher is a global of the function (numba compiles a function's
    globals, not its arguments), so each key gets its own loop."""
    names = ", ".join(parameters)
    return f"def at_key({names}):\n    return {attribute}({key!r}, {names})\n"


#: the package's source files whose code the exported kernels compile (their @njit functions and those they call,
#: the weightings' parts), relative to the package; the manifest's digest covers them and this subpackage
KERNEL_SOURCES = ("index/pages.py", "index/thrift.py", "retrieve/ranking.py", "models/parts/*.py", "aot/kernels.py",
                  "aot/build.py")


def export_name(kernel: str, weighting_name: str | None = None) -> str:
    """The module's function name of ``kernel`` (a keyed kernel's: at weighting ``weighting_name``)."""
    return kernel if weighting_name is None else f"{kernel}_{weighting_name}"
