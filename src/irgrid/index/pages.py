"""A bucket's postings decoded from its Parquet pages, straight into a query set's flat arrays.

A postings file (:data:`irgrid.index.format.POSTINGS_SCHEMA`) is two required int32 columns,
uncompressed: ``docid`` in ``DELTA_BINARY_PACKED`` pages, ``tf`` dictionary-encoded (a ``PLAIN``
dictionary page, then data pages of ``RLE/bit-packed`` dictionary indices). pyarrow decodes whole
row groups into a table the reader then copies rows out of; :func:`read_rows` walks the page
headers of the row groups that hold the rows asked for, in the memory-mapped file, and decodes
each page only as far as its last row asked for, writing each row asked for where it goes:

- a page none of whose rows is asked for is skipped (its header gives its size);
- a ``DELTA_BINARY_PACKED`` page is a sum of gaps from the value in its header, so its
  miniblocks are unpacked from its start up to the last row asked for;
- runs of dictionary indices before the rows asked for are skipped unread.

The Parquet format (``parquet.thrift``, ``Encodings.md`` of apache/parquet-format) fixes the
layout: a page is a Thrift compact-protocol ``PageHeader`` followed by its data, and the footer, a
compact-protocol ``FileMetaData``, gives each row group's rows and where its column chunks are (read
here too, with :mod:`irgrid.index.thrift`: pyarrow's parse of it builds an object for every
statistic of every chunk). What this module does not know (a codec,
a nullable column, another encoding, a page type it does not read) it reports, and the caller reads
that bucket with pyarrow instead (:meth:`irgrid.index.reader.IndexReader.postings_into`).
"""

from __future__ import annotations

import mmap
import os

import numpy as np
from numba import njit

from ..aot.loader import guarded
from .thrift import BINARY, I32, I64, LIST, STRUCT, field_header, list_header, skip, struct_ints, uvarint, zigzag

#: what :func:`read_rows` returns: the rows were written, or why they were not
OK, UNSUPPORTED, MALFORMED = 0, 1, 2

# parquet.thrift PageType and Encoding
_DATA_PAGE, _INDEX_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 1, 2, 3
_PLAIN, _PLAIN_DICTIONARY, _DELTA_BINARY_PACKED, _RLE_DICTIONARY = 0, 2, 5, 8
#: the values a run of dictionary indices or a PLAIN page is decoded in before they are placed
_CHUNK_VALUES = 256


#: fields of the page header kept by _page_header, by index
_TYPE, _COMPRESSED_SIZE, _NUM_VALUES, _ENCODING, _NUM_NULLS, _LEVELS_BYTES, _IS_COMPRESSED = range(7)


@njit(cache=True, nogil=True)
def _page_header(buf, p, end, out):
    """Parse the ``PageHeader`` at ``p`` into ``out`` (type, compressed size, values, encoding, nulls,
    v2 level bytes, v2 compressed flag); the position of the page's data, -1 if malformed."""
    out[:] = 0
    out[_TYPE] = -1
    out[_COMPRESSED_SIZE] = -1
    out[_NUM_VALUES] = -1
    out[_ENCODING] = -1
    out[_IS_COMPRESSED] = 1  # DataPageHeaderV2.is_compressed defaults to true
    nested = np.zeros(8, np.int64)
    field = 0
    while True:
        field, kind, p = field_header(buf, p, end, field)
        if p < 0 or kind == 0:
            return p
        if kind == I32 and (field == 1 or field == 3):  # type, compressed_page_size
            raw, p = uvarint(buf, p, end)
            out[_TYPE if field == 1 else _COMPRESSED_SIZE] = zigzag(raw)
        elif kind == STRUCT and (field == 5 or field == 7):  # DataPageHeader, DictionaryPageHeader
            nested[:] = -1
            p = struct_ints(buf, p, end, nested[:3])  # 1 num_values, 2 encoding
            out[_NUM_VALUES] = nested[1]
            out[_ENCODING] = nested[2]
        elif kind == STRUCT and field == 8:  # DataPageHeaderV2
            nested[:] = -1
            nested[7] = 1
            # 1 num_values, 2 num_nulls, 3 num_rows, 4 encoding, 5 and 6 level bytes, 7 is_compressed
            p = struct_ints(buf, p, end, nested)
            out[_NUM_VALUES] = nested[1]
            out[_NUM_NULLS] = nested[2]
            out[_ENCODING] = nested[4]
            out[_LEVELS_BYTES] = nested[5] + nested[6]
            out[_IS_COMPRESSED] = nested[7]
        else:
            p = skip(buf, p, end, kind)


# ------------------------------------------------------------------ placing decoded rows
@njit(cache=True, nogil=True, inline="always")
def _place(values, first_row, count, starts, ends, dests, current, last, out):
    """Write rows ``first_row .. first_row + count - 1`` (``values[:count]``) where the copies
    ``current .. last - 1`` (sorted by start) want them: copy ``c`` takes rows
    ``starts[c] .. ends[c] - 1`` to ``out[dests[c]:]``. Returns the first copy not finished."""
    stop = first_row + count
    while current < last and ends[current] <= first_row:
        current += 1
    c = current
    while c < last and starts[c] < stop:
        lo = max(starts[c], first_row)
        hi = min(ends[c], stop)
        at = np.uint64(dests[c] + lo - starts[c])
        src = np.uint64(lo - first_row)
        for k in range(np.uint64(hi - lo)):
            out[at + k] = values[src + k]
        c += 1
    return current


@njit(cache=True, nogil=True)
def _next_wanted(row, starts, ends, current, last):
    """``(first copy not finished at row, the first row from row on that a copy wants, or -1)``."""
    while current < last and ends[current] <= row:
        current += 1
    if current == last:
        return current, -1
    # the copies after it start no sooner (sorted by start)
    return current, max(row, starts[current])


@njit(cache=True, nogil=True, inline="always")
def _le64(buf, p):
    """The 8 bytes at ``p`` as a little-endian int64 (LLVM makes it one unaligned load). A page's
    last bytes are read with the 7 after them: the footer's 8 bytes follow every page (the caller
    checks that every column chunk ends 8 bytes before the file)."""
    at = np.uint64(p)
    return (np.int64(buf[at]) | (np.int64(buf[at + np.uint64(1)]) << 8) | (np.int64(buf[at + np.uint64(2)]) << 16)
            | (np.int64(buf[at + np.uint64(3)]) << 24) | (np.int64(buf[at + np.uint64(4)]) << 32)
            | (np.int64(buf[at + np.uint64(5)]) << 40) | (np.int64(buf[at + np.uint64(6)]) << 48)
            | (np.int64(buf[at + np.uint64(7)]) << 56))


@njit(cache=True, nogil=True)
def _int32_at(buf, p):
    return np.int32(np.int64(buf[p]) | (np.int64(buf[p + 1]) << 8) | (np.int64(buf[p + 2]) << 16)
                    | (np.int64(buf[p + 3]) << 24))


# ------------------------------------------------------------------ page decoders
@njit(cache=True, nogil=True)
def _delta_page(buf, p, end, first_row, num_values, wanted_end, starts, ends, dests, current, last, out):
    """A DELTA_BINARY_PACKED page's values from its first row to ``wanted_end``, placed.

    Returns (status, rows decoded)."""
    block_size, p = uvarint(buf, p, end)
    if p < 0:
        return MALFORMED, 0
    miniblocks, p = uvarint(buf, p, end)
    if p < 0:
        return MALFORMED, 0
    total, p = uvarint(buf, p, end)
    if p < 0:
        return MALFORMED, 0
    raw, p = uvarint(buf, p, end)
    if p < 0:
        return MALFORMED, 0
    if (block_size <= 0 or block_size % 128 or miniblocks <= 0 or block_size % miniblocks
            or (block_size // miniblocks) % 32 or total != num_values):
        return MALFORMED, 0
    per_miniblock = block_size // miniblocks
    values = np.empty(per_miniblock, np.int32)
    # the arithmetic wraps in 32 bits (Encodings.md): the low 32 bits of an int64 sum are the same
    value = zigzag(raw)
    values[0] = np.int32(value)
    current = _place(values, first_row, 1, starts, ends, dests, current, last, out)
    row = first_row + 1
    left = total - 1
    stop = min(first_row + num_values, wanted_end)
    while left > 0 and row < stop:
        raw, p = uvarint(buf, p, end)
        if p < 0 or p + miniblocks > end:
            return MALFORMED, row - first_row
        min_delta = zigzag(raw)
        widths = p
        p += miniblocks
        for m in range(miniblocks):
            if left <= 0 or row >= stop:
                break
            width = np.int64(buf[widths + m])
            if width > 32:
                return MALFORMED, row - first_row
            count = min(per_miniblock, left)
            if p + (count * width + 7) // 8 > end:
                return MALFORMED, row - first_row
            mask = (np.int64(1) << width) - 1
            for k in range(count):
                bit = k * width  # value k's bits start there, least significant first
                value += min_delta + ((_le64(buf, p + (bit >> 3)) >> (bit & 7)) & mask)
                values[k] = np.int32(value)
            current = _place(values, row, count, starts, ends, dests, current, last, out)
            p += per_miniblock * width // 8
            row += count
            left -= count
    return OK, row - first_row


@njit(cache=True, nogil=True)
def _dictionary_page(buf, p, end, first_row, num_values, wanted_end, dictionary, starts, ends, dests, current, last,
                     out):
    """A page of RLE/bit-packed dictionary indices, its runs before the rows wanted skipped unread."""
    if p >= end:
        return MALFORMED
    width = np.int64(buf[p])
    p += 1
    if width > 32:
        return MALFORMED
    mask = (np.int64(1) << width) - 1
    values = np.empty(_CHUNK_VALUES, np.int32)
    row = first_row
    stop = min(first_row + num_values, wanted_end)
    while row < stop:
        header, p = uvarint(buf, p, end)
        if p < 0:
            return MALFORMED
        current, wanted = _next_wanted(row, starts, ends, current, last)
        if header & 1:  # bit-packed: groups of 8 indices
            count = (header >> 1) * 8
            size = (header >> 1) * width
            if p + size > end:
                return MALFORMED
            count = min(count, first_row + num_values - row)
            if wanted >= 0 and wanted < row + count:
                # the groups of 8 before the first wanted row are skipped: 8 indices fill whole bytes
                done = (wanted - row) // 8 * 8 if wanted > row else 0
                while done < count and row + done < stop:
                    n = min(_CHUNK_VALUES, count - done)
                    for k in range(n):
                        bit = (done + k) * width
                        index = np.uint64((_le64(buf, p + (bit >> 3)) >> (bit & 7)) & mask)
                        if index >= len(dictionary):
                            return MALFORMED
                        values[k] = dictionary[index]
                    current = _place(values, row + done, n, starts, ends, dests, current, last, out)
                    done += n
            p += size
        else:  # a run of one index
            count = min(header >> 1, first_row + num_values - row)
            size = (width + 7) // 8
            if p + size > end:
                return MALFORMED
            index = np.int64(0)
            for k in range(size):
                index |= np.int64(buf[p + k]) << (8 * k)
            p += size
            if wanted >= 0 and wanted < row + count:
                if index >= len(dictionary):
                    return MALFORMED
                values[:min(count, _CHUNK_VALUES)] = dictionary[index]
                done = wanted - row  # the run's rows before the first wanted need no writing
                while done < count and row + done < stop:
                    n = min(_CHUNK_VALUES, count - done)
                    current = _place(values, row + done, n, starts, ends, dests, current, last, out)
                    done += n
        if count <= 0:
            return MALFORMED
        row += count
    return OK


@njit(cache=True, nogil=True)
def _plain_page(buf, p, end, first_row, num_values, wanted_end, starts, ends, dests, current, last, out):
    """A PLAIN page of int32 values (4 bytes little-endian each)."""
    if p + 4 * num_values > end:
        return MALFORMED
    values = np.empty(_CHUNK_VALUES, np.int32)
    stop = min(first_row + num_values, wanted_end)
    row = first_row
    while row < stop:
        current, wanted = _next_wanted(row, starts, ends, current, last)
        if wanted < 0 or wanted >= stop:
            break
        n = min(_CHUNK_VALUES, stop - wanted)
        for k in range(n):
            values[k] = _int32_at(buf, p + 4 * (wanted - first_row + k))
        current = _place(values, wanted, n, starts, ends, dests, current, last, out)
        row = wanted + n
    return OK


@njit(cache=True, nogil=True)
def _column_chunk(buf, chunk_start, chunk_end, first_row, num_rows, wanted_end, starts, ends, dests, current, last,
                  out):
    """The rows ``first_row .. wanted_end - 1`` of one column chunk the copies want, placed.

    Returns (status, rows decoded)."""
    header = np.empty(7, np.int64)
    dictionary = np.zeros(0, np.int32)
    row = first_row
    decoded = 0
    p = chunk_start
    while row < wanted_end:
        if p >= chunk_end:
            return MALFORMED, decoded
        data = _page_header(buf, p, chunk_end, header)
        if data < 0 or header[_COMPRESSED_SIZE] < 0 or data + header[_COMPRESSED_SIZE] > chunk_end:
            return MALFORMED, decoded
        kind = header[_TYPE]
        page_end = data + header[_COMPRESSED_SIZE]
        num_values = header[_NUM_VALUES]
        encoding = header[_ENCODING]
        if kind == _DICTIONARY_PAGE:
            if encoding != _PLAIN and encoding != _PLAIN_DICTIONARY:
                return UNSUPPORTED, decoded
            if num_values < 0 or data + 4 * num_values > page_end:
                return MALFORMED, decoded
            dictionary = np.empty(num_values, np.int32)
            for k in range(num_values):
                dictionary[k] = _int32_at(buf, data + 4 * k)
        elif kind == _DATA_PAGE or kind == _DATA_PAGE_V2:
            if kind == _DATA_PAGE_V2:
                if header[_NUM_NULLS] != 0 or header[_IS_COMPRESSED] != 0:
                    return UNSUPPORTED, decoded
                data += header[_LEVELS_BYTES]  # none for a required column, but skipped all the same
            if num_values <= 0 or row + num_values > first_row + num_rows:
                return MALFORMED, decoded
            current, wanted = _next_wanted(row, starts, ends, current, last)
            if wanted >= 0 and wanted < min(row + num_values, wanted_end):
                if encoding == _DELTA_BINARY_PACKED:
                    status, n = _delta_page(buf, data, page_end, row, num_values, wanted_end, starts, ends, dests,
                                            current, last, out)
                    decoded += n
                elif encoding == _RLE_DICTIONARY or encoding == _PLAIN_DICTIONARY:
                    if len(dictionary) == 0:
                        return MALFORMED, decoded
                    status = _dictionary_page(buf, data, page_end, row, num_values, wanted_end, dictionary, starts,
                                              ends, dests, current, last, out)
                elif encoding == _PLAIN:
                    status = _plain_page(buf, data, page_end, row, num_values, wanted_end, starts, ends, dests,
                                         current, last, out)
                else:
                    return UNSUPPORTED, decoded
                if status != OK:
                    return status, decoded
            row += num_values
        elif kind != _INDEX_PAGE:
            return UNSUPPORTED, decoded
        p = page_end
    return OK, decoded


@njit(cache=True, nogil=True)
def _read_groups(buf, groups, group_starts, chunk_bounds, starts, ends, dests, docids, tfs):
    """The rows the copies want from the row groups ``groups`` (ascending), both columns.

    ``chunk_bounds[g]``: (docid chunk start, end, tf chunk start, end) of group ``g`` in ``buf``.
    Returns (status, docid rows decoded)."""
    first = 0  # the first copy not finished before the group
    last = 0   # one past the last copy starting before the group's end
    decoded = 0
    for g in groups:
        group_start, group_end = group_starts[g], group_starts[g + 1]
        while first < len(starts) and ends[first] <= group_start:
            first += 1
        while last < len(starts) and starts[last] < group_end:
            last += 1
        wanted_end = group_start
        for c in range(first, last):
            wanted_end = max(wanted_end, min(ends[c], group_end))
        if wanted_end == group_start:
            continue
        num_rows = group_end - group_start
        status, n = _column_chunk(buf, chunk_bounds[g, 0], chunk_bounds[g, 1], group_start, num_rows, wanted_end,
                                  starts, ends, dests, first, last, docids)
        decoded += n
        if status != OK:
            return status, decoded
        status, _ = _column_chunk(buf, chunk_bounds[g, 2], chunk_bounds[g, 3], group_start, num_rows, wanted_end,
                                  starts, ends, dests, first, last, tfs)
        if status != OK:
            return status, decoded
    return OK, decoded


# ------------------------------------------------------------------ a bucket file's footer
#: columns of a schema element's row in _footer's answer
_SCHEMA_TYPE, _SCHEMA_REPETITION, _SCHEMA_CHILDREN, _SCHEMA_NAME_AT, _SCHEMA_NAME_LENGTH = range(5)
_MAX_SCHEMA = 8


@njit(cache=True, nogil=True)
def _schema_element(buf, p, end, row):
    """A ``SchemaElement``: its type, repetition, children and name's place into ``row``."""
    field = 0
    while True:
        field, kind, p = field_header(buf, p, end, field)
        if p < 0 or kind == 0:
            return p
        if kind == I32 and (field == 1 or field == 3 or field == 5):  # type, repetition_type, num_children
            raw, p = uvarint(buf, p, end)
            row[_SCHEMA_TYPE if field == 1 else (_SCHEMA_REPETITION if field == 3 else _SCHEMA_CHILDREN)] = zigzag(raw)
        elif kind == BINARY and field == 4:  # name
            length, p = uvarint(buf, p, end)
            row[_SCHEMA_NAME_AT] = p
            row[_SCHEMA_NAME_LENGTH] = length
            p = p + length if p >= 0 else -1
        else:
            p = skip(buf, p, end, kind)


@njit(cache=True, nogil=True)
def _column_chunk_meta(buf, p, end, group_rows, bounds, column, meta):
    """A ``ColumnChunk``: its chunk's bounds into ``bounds[column * 2:]``, or -2 there when it is in another
    file, encrypted, compressed, or holds other than the group's rows; the position past it. ``meta``:
    room for ColumnMetaData's fields 1 .. 11."""
    meta[:] = -1
    usable = True
    field = 0
    while True:
        field, kind, p = field_header(buf, p, end, field)
        if p < 0:
            return -1
        if kind == 0:
            break
        if field == 3 and kind == STRUCT:  # ColumnMetaData
            p = struct_ints(buf, p, end, meta)
        else:
            if field == 1 or field == 8 or field == 9:  # file_path, crypto_metadata, encrypted_column_metadata
                usable = False
            p = skip(buf, p, end, kind)
    # ColumnMetaData: 4 codec, 5 num_values, 7 total_compressed_size, 9 data_page_offset, 11 dictionary_page_offset
    start = meta[11] if 0 < meta[11] < meta[9] else meta[9]
    if not usable or meta[4] != 0 or meta[5] != group_rows or meta[7] <= 0 or start <= 0:
        bounds[2 * column] = -2
        bounds[2 * column + 1] = -2
    else:
        bounds[2 * column] = start
        bounds[2 * column + 1] = start + meta[7]
    return p


@njit(cache=True, nogil=True)
def _footer(buf):
    """What :func:`read_rows` needs of a Parquet file's footer (``FileMetaData``): (status, the schema's
    elements (a row each, _SCHEMA_* columns), each row group's rows, each group's chunk bounds
    (docid start, end, tf start, end; -2 for a chunk not readable here))."""
    schema = np.full((_MAX_SCHEMA, 5), -1, np.int64)
    group_rows = np.zeros(0, np.int64)
    bounds = np.zeros((0, 4), np.int64)
    n = len(buf)
    if n < 12 or buf[0] != 80 or buf[1] != 65 or buf[2] != 82 or buf[3] != 49:  # "PAR1"
        return UNSUPPORTED, schema[:0], group_rows, bounds
    if buf[n - 4] != 80 or buf[n - 3] != 65 or buf[n - 2] != 82 or buf[n - 1] != 49:  # "PARE": encrypted
        return UNSUPPORTED, schema[:0], group_rows, bounds
    end = n - 8
    p = end - np.int64(_int32_at(buf, end))
    if p < 4 or p > end:
        return MALFORMED, schema[:0], group_rows, bounds
    num_schema = 0
    field = 0
    while True:
        field, kind, p = field_header(buf, p, end, field)
        if p < 0:
            return MALFORMED, schema[:0], group_rows, bounds
        if kind == 0:
            break
        if field == 2 and kind == LIST:  # schema
            size, element, p = list_header(buf, p, end)
            if p < 0 or element != STRUCT or size > _MAX_SCHEMA:
                return UNSUPPORTED, schema[:0], group_rows, bounds
            for i in range(size):
                p = _schema_element(buf, p, end, schema[i])
                if p < 0:
                    return MALFORMED, schema[:0], group_rows, bounds
            num_schema = size
        elif field == 4 and kind == LIST:  # row_groups
            size, element, p = list_header(buf, p, end)
            if p < 0 or element != STRUCT:
                return MALFORMED, schema[:0], group_rows, bounds
            group_rows = np.full(size, -1, np.int64)
            bounds = np.full((size, 4), -2, np.int64)
            meta = np.empty(12, np.int64)
            for g in range(size):
                # RowGroup: 1 columns, 3 num_rows; the rows come after the columns, so the columns' spans are
                # kept and read again once the rows are known
                columns_at = -1
                group_field = 0
                while True:
                    group_field, kind, p = field_header(buf, p, end, group_field)
                    if p < 0:
                        return MALFORMED, schema[:0], group_rows, bounds
                    if kind == 0:
                        break
                    if group_field == 1 and kind == LIST:
                        columns_at = p
                    if group_field == 3 and kind == I64:
                        raw, p = uvarint(buf, p, end)
                        group_rows[g] = zigzag(raw)
                    else:
                        p = skip(buf, p, end, kind)
                if columns_at < 0 or group_rows[g] < 0:
                    return MALFORMED, schema[:0], group_rows, bounds
                columns, element, q = list_header(buf, columns_at, end)
                if q < 0 or element != STRUCT or columns != 2:
                    return UNSUPPORTED, schema[:0], group_rows, bounds
                for c in range(2):
                    q = _column_chunk_meta(buf, q, end, group_rows[g], bounds[g], c, meta)
                    if q < 0:
                        return MALFORMED, schema[:0], group_rows, bounds
        elif field == 8:  # encryption_algorithm: a plaintext footer of encrypted columns
            return UNSUPPORTED, schema[:0], group_rows, bounds
        else:
            p = skip(buf, p, end, kind)
    return OK, schema[:num_schema], group_rows, bounds


#: _footer and _read_groups as the reader calls them: the ahead-of-time module's when it is built and fresh and the
#: arguments are of its types, else the JIT's (irgrid.aot.loader.guarded)
aot_footer = guarded("footer", _footer)
aot_read_groups = guarded("read_groups", _read_groups)

#: parquet.thrift: Type.INT32, FieldRepetitionType.REQUIRED
_INT32, _REQUIRED = 1, 0


class PostingsPages:
    """A postings bucket file memory-mapped, with what :func:`read_rows` needs of its footer (read here,
    without pyarrow: the row groups' rows and their column chunks' bounds).

    ``readable`` is False for a file this module does not read: columns other than the format's two
    required int32 columns (``docid``, ``tf``), a codec, encryption, a column chunk that does not end 8
    bytes before the file (the decoders read 8 bytes at a time; the footer's last 8 follow every page).
    The caller reads such a file with pyarrow.
    """

    def __init__(self, path: str | os.PathLike):
        with open(path, "rb") as f:
            # the map outlives the file object; numpy holds it through the buffer
            self.buffer = np.frombuffer(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), dtype=np.uint8)
        status, schema, group_rows, self.chunk_bounds = aot_footer(self.buffer)
        self.group_starts = np.zeros(len(group_rows) + 1, np.int64)
        np.cumsum(group_rows, out=self.group_starts[1:])
        leaves = schema[1:]
        names = [bytes(self.buffer[at:at + length]) for at, length in leaves[:, _SCHEMA_NAME_AT:].tolist()]
        bounds = self.chunk_bounds
        self.readable = bool(
            status == OK
            and len(schema) == 3 and schema[0, _SCHEMA_CHILDREN] == 2
            and names == [b"docid", b"tf"]
            and (leaves[:, _SCHEMA_TYPE] == _INT32).all() and (leaves[:, _SCHEMA_REPETITION] == _REQUIRED).all()
            and (leaves[:, _SCHEMA_CHILDREN] <= 0).all()
            and ((bounds[:, 0::2] > 0) & (bounds[:, 0::2] < bounds[:, 1::2])
                 & (bounds[:, 1::2] <= len(self.buffer) - 8)).all()
        )


def read_rows(pages: PostingsPages, groups: np.ndarray, starts: np.ndarray, counts: np.ndarray, dests: np.ndarray,
              docids: np.ndarray, tfs: np.ndarray) -> tuple[int, int]:
    """Rows ``starts[i] .. starts[i] + counts[i] - 1`` of the bucket into ``docids`` and ``tfs`` from ``dests[i]``
    on, for each copy ``i`` (in any order; ``groups``: the row groups holding them, ascending).

    Returns ``(status, docid rows decoded)``: :data:`OK`, or :data:`UNSUPPORTED` / :data:`MALFORMED`, when
    the rows written so far are to be discarded and the bucket read another way.
    """
    if not pages.readable:
        return UNSUPPORTED, 0
    order = np.argsort(starts, kind="stable")
    order = order[counts[order] > 0]  # an empty span wants no row
    starts = starts[order].astype(np.int64)
    status, decoded = aot_read_groups(pages.buffer, groups.astype(np.int64), pages.group_starts, pages.chunk_bounds,
                                       starts, starts + counts[order], dests[order].astype(np.int64), docids, tfs)
    return int(status), int(decoded)
