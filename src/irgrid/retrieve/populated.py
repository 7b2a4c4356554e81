"""Arrays the size of a query set's postings, their pages mapped in one call.

A fresh array of tens of MB is faulted in a page at a time by the first loop that writes it: one
trap into the kernel per 4 KiB, which on a virtual machine cost a kernel's pass over a query set's
postings as much as the pass itself (``candidate_slots``' output). Linux maps an anonymous region's
pages at once when asked (``MAP_POPULATE``): the same zeroed pages, without a trap each. numpy's
own large arrays ask for transparent huge pages instead, whose first use is fast or very slow by
the state of the machine's memory (the kernel compacts it to find 2 MiB pages; on a virtual machine,
whether the host backs the guest's pages yet): a query set's flat postings (:func:`flat_postings`)
and candidate slots are mapped here instead.

A gather into such an array (:func:`gathered`) is a numba loop: ``np.take`` with int32 indices
first copies them into a fresh array of 8-byte indices, twice the output's pages again.
"""

from __future__ import annotations

import mmap

import numpy as np
from numba import njit

#: arrays smaller than this are numpy's (a mapping of its own costs more than the faults it saves)
POPULATED_BYTES = 1 << 22


def populated_empty(length: int, dtype) -> np.ndarray:
    """An array of ``length`` items of ``dtype`` to be written whole, its pages mapped at once where
    the platform can (zeros, though only the caller's writes are meant to be read); else ``np.empty``."""
    dtype = np.dtype(dtype)
    size = length * dtype.itemsize
    populate = getattr(mmap, "MAP_POPULATE", None)
    if populate is None or size < max(POPULATED_BYTES, 1):
        return np.empty(length, dtype)
    region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | populate)
    return np.frombuffer(region, dtype, length)  # the array holds the mapping; unmapped with the array


def flat_postings(length: int) -> tuple[np.ndarray, np.ndarray]:
    """A query set's flat ``(docids, tfs)`` (int32, ``length`` postings each), for the reader to write whole
    (:meth:`irgrid.index.IndexReader.postings_into`): :func:`populated_empty`'s, not numpy's huge pages."""
    return populated_empty(length, np.int32), populated_empty(length, np.int32)


def gathered(table: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``table[indices]`` (``indices`` non-negative, below ``len(table)``) into a :func:`populated_empty` array."""
    out = populated_empty(len(indices), table.dtype)
    _gather_into(table, indices, out)
    return out


@njit(cache=True, nogil=True)
def _gather_into(table, indices, out):
    for i in range(len(indices)):
        out[i] = table[np.uint32(indices[i])]  # unsigned: no wrap-around check of a negative index
