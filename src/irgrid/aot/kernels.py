"""The kernels an ahead-of-time module exports, and the argument types each is compiled for.

One table (:data:`EXPORTS`) serves both sides: :mod:`irgrid.aot.build` turns each argument's
:class:`Arg` into numba's type for ``numba.pycc``, and :mod:`irgrid.aot.loader` checks a call's
arguments against the same :class:`Arg` before it calls the compiled function. The types are the
ones the reader and the Scorer pass (equal to the JIT dispatchers' signatures after a retrieval).

``score_and_rank`` is exported once per weighting, with its ``kernel_key`` written in as the
literal (numba compiles one loop per key): :data:`SCORE_AND_RANK_SOURCE`.
"""

from __future__ import annotations

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
    numba type (a string :mod:`irgrid.aot.build` evaluates over ``numba.types``)."""

    module: str
    attribute: str
    args: tuple[Arg, ...]
    returns: str


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
}

#: the kernels taking a weighting's key first: exported once per weighting
KEYED = frozenset({"score_and_rank"})

#: score_and_rank at one weighting's key: the JIT dispatcher a global (numba compiles a function's globals, not
#: its arguments), the key written in as the literal
SCORE_AND_RANK_SOURCE = """
def score_and_rank_at_key(tabulated, params, term_constants, term_weights, query_constants, query_lengths,
                          query_weights, term_offsets, query_term_offsets, tfs, docids, doc_lengths, slots, candidates,
                          candidate_offsets, docno_rank, depth, first_query, last_query, posting_parts,
                          document_values, candidate_ranks, posting_lengths, offsets, out_docids, out_scores):
    return score_and_rank({key!r}, tabulated, params, term_constants, term_weights, query_constants, query_lengths,
                          query_weights, term_offsets, query_term_offsets, tfs, docids, doc_lengths, slots, candidates,
                          candidate_offsets, docno_rank, depth, first_query, last_query, posting_parts,
                          document_values, candidate_ranks, posting_lengths, offsets, out_docids, out_scores)
"""

#: the package's source files whose code the exported kernels compile (their @njit functions and those they call,
#: the weightings' parts), relative to the package; the manifest's digest covers them and this subpackage
KERNEL_SOURCES = ("index/pages.py", "index/thrift.py", "retrieve/ranking.py", "models/parts/*.py", "aot/kernels.py",
                  "aot/build.py")


def export_name(kernel: str, weighting_name: str | None = None) -> str:
    """The module's function name of ``kernel`` (a keyed kernel's: at weighting ``weighting_name``)."""
    return kernel if weighting_name is None else f"{kernel}_{weighting_name}"
