"""Thrift compact protocol, the parts a Parquet reader needs, in numba: integers, field and list
headers, and skipping any value (Parquet's footer and page headers are compact-protocol structs,
``parquet.thrift`` of apache/parquet-format).

Every reader takes the buffer, a position and the end not to read past, and returns the position
after what it read; -1 for a value that runs past the end or is malformed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: compact-protocol types (a field header's low nibble, a list header's element type)
BOOL_TRUE, BOOL_FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)


@njit(cache=True, nogil=True)
def uvarint(buf, p, end):
    """A ULEB128 integer at ``p``: ``(value, next p)``; ``next p`` is -1 past ``end`` or beyond 64 bits."""
    value = np.int64(0)
    shift = 0
    while p < end and shift < 64:
        byte = np.int64(buf[p])
        p += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, p
        shift += 7
    return value, -1


@njit(cache=True, nogil=True)
def zigzag(value):
    return (value >> 1) ^ -(value & 1)


@njit(cache=True, nogil=True)
def _skip_scalar(buf, p, end, kind, in_collection):
    """Past a value of a non-container type; -1 if it runs past ``end`` or the type is unknown."""
    if kind == BOOL_TRUE or kind == BOOL_FALSE:
        # a struct field's boolean is its type; a list's takes a byte per element
        return p + 1 if in_collection else p
    if kind == BYTE:
        return p + 1
    if kind == I16 or kind == I32 or kind == I64:
        return uvarint(buf, p, end)[1]
    if kind == DOUBLE:
        return p + 8
    if kind == BINARY:
        length, p = uvarint(buf, p, end)
        return -1 if p < 0 or length < 0 else p + length
    return -1


@njit(cache=True, nogil=True)
def list_header(buf, p, end):
    """A compact-protocol list header at ``p``: (size, element type, next p); next p is -1 if malformed."""
    if p >= end:
        return 0, 0, -1
    header = np.int64(buf[p])
    p += 1
    size = header >> 4
    if size == 15:
        size, p = uvarint(buf, p, end)
    return size, header & 0x0F, p


@njit(cache=True, nogil=True)
def _skip_scalars(buf, p, end):
    """Past a list or set whose elements are not containers; -1 if it is not one, or malformed."""
    if p >= end:
        return -1
    header = np.int64(buf[p])
    p += 1
    size, element = header >> 4, header & 0x0F
    if size == 15:
        size, p = uvarint(buf, p, end)
    if element >= LIST:
        return -1
    for _ in range(size):
        if p < 0:
            return -1
        p = _skip_scalar(buf, p, end, element, True)
    return p


#: what the shallow skips answer for a value nested deeper than they go (then _skip_nested skips it)
_NESTED = -2


@njit(cache=True, nogil=True)
def _skip_flat_struct(buf, p, end):
    """Past a struct whose fields are scalars or lists of scalars; :data:`_NESTED` if one is not."""
    while True:
        if p < 0 or p >= end:
            return -1
        header = np.int64(buf[p])
        p += 1
        if header == 0:
            return p
        if header >> 4 == 0:
            _, p = uvarint(buf, p, end)
            if p < 0:
                return -1
        kind = header & 0x0F
        if kind < LIST:
            p = _skip_scalar(buf, p, end, kind, False)
        elif kind == LIST or kind == SET:
            p = _skip_scalars(buf, p, end)
            if p < 0:
                return _NESTED
        else:
            return _NESTED


@njit(cache=True, nogil=True)
def skip(buf, p, end, kind):
    """Past a value of type ``kind``. The footer and page headers' values to skip are scalars, lists
    of scalars, structs of those (statistics) and lists of such structs (encoding stats): skipped
    here without the stack of :func:`_skip_nested`, which takes an allocation a call."""
    if kind < LIST:
        return _skip_scalar(buf, p, end, kind, False)
    after = _NESTED
    if kind == STRUCT:
        after = _skip_flat_struct(buf, p, end)
    elif (kind == LIST or kind == SET) and p < end:
        header = np.int64(buf[p])
        if header & 0x0F < LIST:
            after = _skip_scalars(buf, p, end)
        elif header & 0x0F == STRUCT:
            size, _, q = list_header(buf, p, end)
            for _ in range(size):
                if q < 0:
                    break
                q = _skip_flat_struct(buf, q, end)
            after = q if q >= 0 else _NESTED
    return after if after != _NESTED else _skip_nested(buf, p, end, kind)


@njit(cache=True, nogil=True)
def _skip_nested(buf, p, end, kind):
    """Past a value of type ``kind`` (nested structs, lists and maps walked with a stack of their own)."""
    frame_kind = np.empty(64, np.int64)   # STRUCT, LIST or MAP
    frame_left = np.empty(64, np.int64)   # values left in a list, keys and values left in a map
    frame_key = np.empty(64, np.int64)    # a list's element type, a map's key type
    frame_value = np.empty(64, np.int64)  # a map's value type
    depth = 0
    in_collection = False
    while True:
        if p < 0 or p > end:
            return -1
        if kind == STRUCT or kind == LIST or kind == SET or kind == MAP:
            if depth == 64:
                return -1
            frame_kind[depth] = STRUCT if kind == STRUCT else (MAP if kind == MAP else LIST)
            if kind == LIST or kind == SET:
                if p >= end:
                    return -1
                header = np.int64(buf[p])
                p += 1
                size = header >> 4
                if size == 15:
                    size, p = uvarint(buf, p, end)
                    if p < 0:
                        return -1
                frame_left[depth] = size
                frame_key[depth] = header & 0x0F
            elif kind == MAP:
                size, p = uvarint(buf, p, end)
                if p < 0:
                    return -1
                frame_left[depth] = 2 * size
                if size > 0:
                    if p >= end:
                        return -1
                    frame_key[depth] = np.int64(buf[p]) >> 4
                    frame_value[depth] = np.int64(buf[p]) & 0x0F
                    p += 1
            depth += 1
        else:
            p = _skip_scalar(buf, p, end, kind, in_collection)
            if p < 0:
                return -1
        # the next value to skip, closing the containers done
        found = False
        while depth > 0 and not found:
            top = depth - 1
            if frame_kind[top] == STRUCT:
                if p >= end:
                    return -1
                header = np.int64(buf[p])
                p += 1
                if header == 0:  # STOP
                    depth -= 1
                    continue
                if header >> 4 == 0:  # the field id follows as a zigzag varint
                    _, p = uvarint(buf, p, end)
                    if p < 0:
                        return -1
                kind = header & 0x0F
                in_collection = False
                found = True
            elif frame_left[top] == 0:
                depth -= 1
            else:
                frame_left[top] -= 1
                if frame_kind[top] == LIST:
                    kind = frame_key[top]
                else:  # a map: key, value, key, value ...
                    kind = frame_value[top] if frame_left[top] % 2 == 0 else frame_key[top]
                in_collection = True
                found = True
        if not found:
            return p


@njit(cache=True, nogil=True)
def struct_ints(buf, p, end, values):
    """Read a struct, keeping its integer and boolean fields ``1 .. len(values) - 1`` in ``values``
    (others skipped); the position past it, -1 if malformed."""
    field = 0
    while True:
        field, kind, p = field_header(buf, p, end, field)
        if p < 0 or kind == 0:
            return p
        if kind == BOOL_TRUE or kind == BOOL_FALSE:
            if 0 < field < len(values):
                values[field] = 1 if kind == BOOL_TRUE else 0
        elif (kind == I32 or kind == I64 or kind == I16) and 0 < field < len(values):
            raw, p = uvarint(buf, p, end)
            values[field] = zigzag(raw)
        else:
            p = skip(buf, p, end, kind)


@njit(cache=True, nogil=True)
def field_header(buf, p, end, field):
    """A struct's next field header: (field id, type, next p); type 0 is the struct's end, next p -1 malformed."""
    if p < 0 or p >= end:
        return field, 0, -1
    header = np.int64(buf[p])
    p += 1
    if header == 0:
        return field, 0, p
    if header & 0x0F == 0:  # a type of 0 belongs to the stop byte alone
        return field, 0, -1
    if header >> 4:
        return field + (header >> 4), header & 0x0F, p
    raw, p = uvarint(buf, p, end)
    return zigzag(raw), header & 0x0F, p
