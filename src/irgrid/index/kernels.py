"""numba kernels of the index build: the loops over every token of the collection.

Each is O(tokens) with no Python-level work per token; numba compiles them once
per machine (``cache=True`` keeps the machine code next to this file).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..numba_start import import_arraymath_without_blas_probe

# The first kernel call of a build's process installs numba's registries; without this, one of them
# imports all of scipy.linalg to probe for a BLAS no build kernel uses (memory the build holds to the end).
import_arraymath_without_blas_probe()

#: columns of a word's row in ``word_info``: one row (one cache line) per word is
#: what the token loop reads; separate arrays cost a cache miss each for rare words.
FIRST_TERM, FIRST_REL, NUM_TOKENS, MORE_COUNT, MORE_START = range(5)


@njit(cache=True, nogil=True, inline="always")
def _emit(term, docid, position, k, terms, docids, positions, last_doc_of_term):
    """Write token ``k``; 1 if it is the document's first occurrence of the term, else 0."""
    terms[k] = term
    docids[k] = docid
    positions[k] = position
    if last_doc_of_term[term] != docid:
        last_doc_of_term[term] = docid
        return 1
    return 0


@njit(cache=True, nogil=True)
def expand_tokens(word_doc_offsets, word_ids, word_info, more_terms, more_rel, first_docid, last_doc_of_term):
    """Terms of a run of documents, from its whitespace-separated words.

    ``word_doc_offsets[d]:word_doc_offsets[d+1]`` are document ``d``'s words and
    ``word_ids`` their ids.  Row ``word_info[w]`` holds word ``w``'s analysis:
    its first kept term (-1 if none) and that term's token offset in the word,
    its number of tokens (stop words included: they take a position) and where
    its further kept terms are in ``more_terms``/``more_rel``.
    ``last_doc_of_term[t]`` is the last document term ``t`` was seen in (docids
    grow, so it needs no reset): it counts each document's distinct terms.

    Returns ``(terms, docids, positions, lengths, unique_terms)``: tokens in
    (document, position) order and per-document counts.
    """
    num_docs = len(word_doc_offsets) - 1
    # the exact number of tokens (a pass over the words): sizing by the word with the most
    # terms multiplied every word's room by it, ten-fold for one hyphenated run of ten parts
    total = 0
    for i in range(len(word_ids)):
        info = word_info[word_ids[i]]
        if info[FIRST_TERM] >= 0:
            total += 1 + info[MORE_COUNT]
    terms = np.empty(total, np.int32)
    docids = np.empty(total, np.int32)
    positions = np.empty(total, np.int32)
    lengths = np.zeros(num_docs, np.int32)
    unique_terms = np.zeros(num_docs, np.int32)
    k = 0
    for d in range(num_docs):
        docid = first_docid + d
        first = k
        position = 0
        distinct = 0
        for i in range(word_doc_offsets[d], word_doc_offsets[d + 1]):
            info = word_info[word_ids[i]]
            if info[FIRST_TERM] >= 0:
                distinct += _emit(info[FIRST_TERM], docid, position + info[FIRST_REL], k, terms, docids, positions,
                                  last_doc_of_term)
                k += 1
                for j in range(info[MORE_START], info[MORE_START] + info[MORE_COUNT]):
                    distinct += _emit(more_terms[j], docid, position + more_rel[j], k, terms, docids, positions,
                                      last_doc_of_term)
                    k += 1
            position += info[NUM_TOKENS]
        lengths[d] = k - first
        unique_terms[d] = distinct
    return terms[:k], docids[:k], positions[:k], lengths, unique_terms


@njit(cache=True, nogil=True)
def counting_sort(keys, num_keys):
    """A stable ordering of ``keys`` (ints in ``0..num_keys-1``) and where each key starts.

    Returns ``(order, starts)``: ``keys[order]`` is sorted, equal keys keep their
    input order, and key ``k`` occupies ``starts[k]:starts[k+1]``.  O(n + num_keys).
    """
    starts = np.zeros(num_keys + 1, np.int64)
    for i in range(len(keys)):
        starts[keys[i] + 1] += 1
    for k in range(num_keys):
        starts[k + 1] += starts[k]
    fill = starts[:-1].copy()
    order = np.empty(len(keys), np.int64)
    for i in range(len(keys)):
        k = keys[i]
        order[fill[k]] = i
        fill[k] += 1
    return order, starts


@njit(cache=True, nogil=True)
def tokens_by_key(terms, docids, positions, key_of_term, num_keys):
    """The tokens grouped by ``key_of_term[term]`` (ints in ``0..num_keys-1``), in input order within a key.

    Returns ``(terms, docids, positions, starts)``: key ``k``'s tokens are at ``starts[k]:starts[k+1]``.
    The same arrays as a :func:`counting_sort` of the keys followed by a gather of each column, in
    one scatter pass without the order array (8 bytes a token). Keys are a shard's postings buckets
    (its term -> bucket map), or a bucket's terms themselves (``term - lo``: sorted by term).
    """
    n = len(terms)
    starts = np.zeros(num_keys + 1, np.int64)
    for i in range(n):
        starts[key_of_term[terms[i]] + 1] += 1
    for k in range(num_keys):
        starts[k + 1] += starts[k]
    fill = starts[:-1].copy()
    out_terms = np.empty(n, np.int32)
    out_docids = np.empty(n, np.int32)
    out_positions = np.empty(n, np.int32)
    for i in range(n):
        k = key_of_term[terms[i]]
        j = fill[k]
        out_terms[j] = terms[i]
        out_docids[j] = docids[i]
        out_positions[j] = positions[i]
        fill[k] = j + 1
    return out_terms, out_docids, out_positions, starts


@njit(cache=True, nogil=True)
def group_postings(terms, docids):
    """Start of each posting in tokens sorted by (term, docid, position): where term or docid changes."""
    n = len(terms)
    starts = np.empty(n + 1, np.int64)
    m = 0
    for i in range(n):
        if i == 0 or terms[i] != terms[i - 1] or docids[i] != docids[i - 1]:
            starts[m] = i
            m += 1
    starts[m] = n
    return starts[: m + 1].copy()


# ------------------------------------------------------------------ word table
#
# Words (runs of bytes other than ASCII whitespace) are identified by two
# independent 64-bit FNV-1a hashes: a 128-bit key, so two distinct words among
# 10^8 share a key with probability about 10^-23.  The table is open addressing
# with linear probing; key (0, 0) marks an empty slot (a real key is never 0:
# its low bit is forced to 1).

_FNV_PRIME = np.uint64(0x100000001B3)
_FNV_OFFSET_A = np.uint64(0xCBF29CE484222325)
_FNV_OFFSET_B = np.uint64(0x84222325CBF29CE4)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _is_space(b):
    return b == 32 or (9 <= b <= 13)


@njit(cache=True, nogil=True)
def lookup_words(data, doc_offsets, first_doc, table, num_words, max_load,
                 word_ids, word_doc_offsets, new_starts, new_ends):
    """Split documents into words and give each its id in ``table``, inserting new words.

    ``data[doc_offsets[d]:doc_offsets[d+1]]`` is document ``d``'s UTF-8 text;
    ``table`` has one row ``(key_a, key_b, id)`` per slot (one cache line per
    probe).  Starting at document ``first_doc``, fills ``word_ids`` (one per
    word, in order) and ``word_doc_offsets`` (document ``d``'s words are
    ``word_doc_offsets[d]:word_doc_offsets[d+1]``); a word not yet in the table
    gets the next id and its byte range in ``new_starts/new_ends``.  Stops after
    the document during which the number of words passed ``max_load`` (the
    caller grows the table and resumes).  Returns ``(next_doc, num_words, num_new)``.
    """
    capacity = table.shape[0]
    mask = np.uint64(capacity - 1)
    num_docs = len(doc_offsets) - 1
    k = word_doc_offsets[first_doc]
    num_new = 0
    d = first_doc
    while d < num_docs:
        i = doc_offsets[d]
        end = doc_offsets[d + 1]
        while i < end:
            while i < end and _is_space(data[i]):
                i += 1
            if i >= end:
                break
            start = i
            ha = _FNV_OFFSET_A
            hb = _FNV_OFFSET_B
            while i < end and not _is_space(data[i]):
                ha = (ha ^ np.uint64(data[i])) * _FNV_PRIME
                hb = (hb ^ np.uint64(data[i] ^ 0x5A)) * _FNV_PRIME
                i += 1
            ha = (ha ^ np.uint64(i - start)) | np.uint64(1)
            hb = hb * _MIX
            slot = (ha ^ (ha >> np.uint64(29))) & mask
            while True:
                row = table[slot]
                if row[0] == 0:
                    row[0] = ha
                    row[1] = hb
                    row[2] = num_words
                    new_starts[num_new] = start
                    new_ends[num_new] = i
                    num_new += 1
                    word_ids[k] = num_words
                    num_words += 1
                    break
                if row[0] == ha and row[1] == hb:
                    word_ids[k] = row[2]
                    break
                slot = (slot + np.uint64(1)) & mask
            k += 1
        word_doc_offsets[d + 1] = k
        d += 1
        if num_words > max_load:
            break
    return d, num_words, num_new


@njit(cache=True, nogil=True)
def count_words(data, doc_offsets):
    """The number of whitespace-separated words of the documents ``data[doc_offsets[d]:doc_offsets[d+1]]``
    (:func:`lookup_words`'s words: a word ends with its document)."""
    count = 0
    for d in range(len(doc_offsets) - 1):
        in_word = False
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            space = _is_space(data[i])
            if not space and not in_word:
                count += 1
            in_word = not space
    return count


@njit(cache=True, nogil=True)
def rehash(table, new_capacity):
    """The table's entries in a table of ``new_capacity`` slots (a power of two)."""
    new_table = np.zeros((new_capacity, 3), np.uint64)
    mask = np.uint64(new_capacity - 1)
    for s in range(table.shape[0]):
        ha = table[s, 0]
        if ha != 0:
            slot = (ha ^ (ha >> np.uint64(29))) & mask
            while new_table[slot, 0] != 0:
                slot = (slot + np.uint64(1)) & mask
            new_table[slot] = table[s]
    return new_table


@njit(cache=True, nogil=True)
def gather_bytes(data, starts, ends):
    """The byte ranges ``data[starts[i]:ends[i]]`` concatenated, and their offsets."""
    n = len(starts)
    offsets = np.zeros(n + 1, np.int32)
    for i in range(n):
        offsets[i + 1] = offsets[i] + (ends[i] - starts[i])
    out = np.empty(offsets[n], np.uint8)
    for i in range(n):
        out[offsets[i]:offsets[i + 1]] = data[starts[i]:ends[i]]
    return out, offsets


@njit(cache=True, nogil=True)
def hash_strings(data, offsets):
    """A 64-bit FNV-1a hash of each string ``data[offsets[i]:offsets[i+1]]`` (a pre-filter, not an identity)."""
    n = len(offsets) - 1
    out = np.empty(n, np.uint64)
    for i in range(n):
        h = _FNV_OFFSET_A
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * _FNV_PRIME
        out[i] = h
    return out
