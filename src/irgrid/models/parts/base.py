"""A weighting function declared once: its per-posting and per-document parts and their constants.

A model family that the fused query-set kernel (:func:`irgrid.retrieve.ranking.score_and_rank`) scores
declares its :class:`Weighting`: a per-posting part ``posting(tf, |D|, term_constant, params)``,
optionally a per-document part ``document(|D|, params)`` (the score adds
``query_constant - query_length * document``), and how the point's ``params`` row, each term's
constant and each query's constants are computed from the index statistics and the point. The
fused kernel, the models' numpy ``term_scores`` / ``document_scores`` (:class:`WeightedModel`)
and per-query scoring all call these same scalar numba functions over the loops below, so they
give the same numbers to the last bit: numpy's vectorised ``log1p`` (SIMD) and the C library's
differ in the last place for some inputs, so a formula with a logarithm cannot be written once
in numpy and once in numba.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit, types
from numba.extending import overload, typeof_impl

#: a term gets a table of its parts when it has at least this many postings per table entry
TABLE_POSTINGS_PER_ENTRY = 4


class KernelKey(str):
    """A weighting's name in numba code: typed as a string literal, so each weighting gets its own compilation."""


@typeof_impl.register(KernelKey)
def _typeof_kernel_key(value, context):
    # a literal type from the first call on: a plain str would be unicode_type, and numba's
    # ``literally`` re-dispatches every call from Python through an exception (milliseconds a call)
    return types.literal(str(value))


@dataclass(frozen=True)
class Weighting:
    """One weighting function's parts, declared once (docs/models.md, "Scoring paths").

    ``posting``: an ``@njit`` scalar function ``(tf, doc_length, term_constant, params) -> part``
    (``params``: the point's row of :attr:`params`, a float64 array). ``reads_length``: False when
    the part depends on ``tf`` and the term constant alone; the kernel then computes each posting's
    part once for a block of points sharing the params and term constants (a table per term).
    ``document``: None, or an ``@njit`` ``(doc_length, params) -> value``; a query's score adds
    ``query_constant - query_length * value``. ``params(model, stats, point)``: the point's
    constants (a float64 array); ``term_constants(model, terms, stats, point)``: one float64
    per term; ``query_constants(model, terms, stats, point)``: ``(constant, length)`` of one
    query (needed with a ``document`` part).
    """

    name: str
    posting: Callable
    params: Callable[..., np.ndarray]
    term_constants: Callable[..., np.ndarray]
    reads_length: bool = True
    document: Callable | None = None
    query_constants: Callable[..., tuple[float, float]] | None = None

    @functools.cached_property
    def kernel_key(self) -> KernelKey:
        """What the numba loops take to name this weighting: its name and a digest of its parts' code.

        A :class:`KernelKey`, which numba types as a string literal (:func:`posting_part`): the
        loops are compiled and cached once per weighting, its parts inlined. A dispatcher passed as an argument would be typed by
        the object, whose cache entry no other process finds; the digest makes a changed part a new key,
        so a cached kernel is never one compiled with an older part.
        """
        functions = [self.posting] + ([self.document] if self.document is not None else [])
        digest = hashlib.sha256(b"".join(marshal.dumps(f.py_func.__code__) for f in functions)).hexdigest()[:16]
        key = KernelKey(f"{self.name}@{digest}")
        _DECLARED[key] = self
        return key

    def __getstate__(self):
        # without the key: unpickled in another process, it is made (and recorded for the loops) there
        return {name: value for name, value in self.__dict__.items() if name != "kernel_key"}

    @property
    def shares_block_inputs(self) -> bool:
        """True when a kernel block's points must share params and term constants (parts computed once a block)."""
        return not self.reads_length or self.document is not None

    def point_params(self, model, stats, point: Mapping[str, float]) -> np.ndarray:
        return np.ascontiguousarray(self.params(model, stats, point), dtype=np.float64)

    def kernel_inputs(self, model, terms: Sequence, query_term_offsets: np.ndarray, stats,
                      point: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(params, term_constants, query_constants, query_lengths)`` of a query set (the fused kernel's)."""
        params = self.point_params(model, stats, point)
        term_constants = np.ascontiguousarray(self.term_constants(model, terms, stats, point), dtype=np.float64)
        num_queries = len(query_term_offsets) - 1
        if self.query_constants is None:
            no_query_part = np.zeros(num_queries, dtype=np.float64)
            return params, term_constants, no_query_part, no_query_part
        per_query = [self.query_constants(model, terms[lo:hi], stats, point)
                     for lo, hi in zip(query_term_offsets[:-1].tolist(), query_term_offsets[1:].tolist())]
        constants = np.array([c for c, _ in per_query], dtype=np.float64)
        lengths = np.array([n for _, n in per_query], dtype=np.float64)
        return params, term_constants, constants, lengths


#: kernel key -> its weighting, for each weighting whose ``kernel_key`` was made in this process
_DECLARED: dict[str, Weighting] = {}


def declared(key: str) -> Weighting:
    """The weighting whose ``kernel_key`` is ``key`` (numba compiles a loop for a key after the key was made)."""
    return _DECLARED[key]


def posting_part(weighting, tf, doc_length, term_constant, params):
    """In numba code: the per-posting part of the weighting whose ``kernel_key`` is ``weighting`` (a literal)."""
    raise NotImplementedError("posting_part is called from numba code only")


def document_part(weighting, doc_length, params):
    """In numba code: the per-document part of the weighting whose ``kernel_key`` is ``weighting`` (a literal)."""
    raise NotImplementedError("document_part is called from numba code only")


@overload(posting_part, inline="always")
def _posting_part(weighting, tf, doc_length, term_constant, params):
    if not isinstance(weighting, types.StringLiteral):
        return None
    posting = declared(weighting.literal_value).posting

    def implementation(weighting, tf, doc_length, term_constant, params):
        return posting(tf, doc_length, term_constant, params)
    return implementation


@overload(document_part, inline="always")
def _document_part(weighting, doc_length, params):
    if not isinstance(weighting, types.StringLiteral):
        return None
    document = declared(weighting.literal_value).document

    def implementation(weighting, doc_length, params):
        return document(doc_length, params)
    return implementation


@njit(cache=True, nogil=True)
def posting_parts_array(weighting, tfs, doc_lengths, term_constant, params):
    """The posting part of each (tf, length) pair: the numpy path's term scores."""
    out = np.empty(len(tfs), np.float64)
    for i in range(len(tfs)):
        out[i] = posting_part(weighting, np.float64(tfs[i]), np.float64(doc_lengths[i]), term_constant, params)
    return out


@njit(cache=True, nogil=True)
def document_parts_array(weighting, doc_lengths, params, query_constant, query_length):
    """``query_constant - query_length * document part`` of each length: the numpy path's document scores."""
    out = np.empty(len(doc_lengths), np.float64)
    for i in range(len(doc_lengths)):
        out[i] = query_constant - query_length * document_part(weighting, np.float64(doc_lengths[i]), params)
    return out


@njit(cache=True, nogil=True)
def tabulated_posting_parts(weighting, params, tfs, term_constants, term_offsets, out):
    """The posting part of every posting (term ``i``'s at ``term_offsets[i]:term_offsets[i+1]``), for a
    weighting whose part reads no document length: the same for every point of one block.

    A term's tfs are small integers repeated over its postings (a character of a Chinese
    collection has tens of thousands of postings with tfs below 30), so a term with many postings
    for its largest tf gets a table of its parts, one call per distinct tf value up to that
    largest, and each posting a lookup: the table holds the values the scalar function gives, so
    the parts are the same to the last bit. On a large query set (DRCD's phrase families) the
    log1p of every posting was a large share of a retrieval job.

    ``out``: a float64 array as long as ``tfs`` to write them into (and returned): a grid's
    next block reuses the previous block's array (as large as the query set's postings) instead of a new one.
    The length passed is NaN: a part that read it would show.
    """
    table = np.empty(0, np.float64)
    for i in range(len(term_constants)):
        constant = term_constants[i]
        lo, hi = term_offsets[i], term_offsets[i + 1]
        largest = 0
        for p in range(lo, hi):
            largest = max(largest, np.int64(tfs[p]))
        if largest < (hi - lo) // TABLE_POSTINGS_PER_ENTRY:
            if len(table) <= largest:
                table = np.empty(largest + 1, np.float64)
            for tf in range(largest + 1):
                table[tf] = posting_part(weighting, np.float64(tf), math.nan, constant, params)
            for p in range(lo, hi):
                out[p] = table[tfs[p]]
        else:
            for p in range(lo, hi):
                out[p] = posting_part(weighting, np.float64(tfs[p]), math.nan, constant, params)
    return out


@njit(cache=True, nogil=True)
def document_value_table(weighting, doc_lengths, params):
    """The document part of each length ``0..max(doc_lengths)``, or an empty array when a length is
    not a whole number or the largest exceeds the number of documents (a table longer than the
    documents costs more than it saves): :func:`candidate_document_values`' lookup table.

    Entry ``n`` is the scalar function of ``np.float64(n)``, the float64 a whole length of ``n``
    is, so a value looked up is the one computed from the length to the last bit.
    """
    largest = 0.0
    for d in range(len(doc_lengths)):
        length = doc_lengths[d]
        if not (length >= 0.0 and length == math.floor(length)) or length > len(doc_lengths):
            return np.empty(0, np.float64)
        largest = max(largest, length)
    table = np.empty(int(largest) + 1, np.float64)
    for length in range(len(table)):
        table[length] = document_part(weighting, np.float64(length), params)
    return table


@njit(cache=True, nogil=True)
def candidate_document_values(weighting, doc_lengths, candidates, params, table, out):
    """The document part of each candidate's length (``doc_lengths[candidates]``) into ``out``
    (returned): once a block, for the kernel.

    ``table``: :func:`document_value_table` of ``doc_lengths`` and ``params``; when it is not
    empty, each candidate looks its value up there (a query set's candidates far outnumber the
    distinct lengths: no logarithm, Dirichlet's, a candidate); else the part is computed.
    """
    if len(table):
        for c in range(len(candidates)):
            out[c] = table[int(doc_lengths[candidates[c]])]
    else:
        for c in range(len(candidates)):
            out[c] = document_part(weighting, np.float64(doc_lengths[candidates[c]]), params)
    return out


def as_float_array(values) -> tuple[np.ndarray, tuple[int, ...]]:
    """``values`` as a flat contiguous float64 array, and the shape to give the result back."""
    array = np.asarray(values, dtype=np.float64)
    return np.ascontiguousarray(array.reshape(-1)), array.shape
