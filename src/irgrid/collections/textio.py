"""Low-level helpers shared by the readers: numbered lines from (possibly compressed) files.

Every reader goes through :func:`iter_lines`, so they all agree on three things:

- line numbers are 1-based and count physical lines, so an error names the line a user sees
  in an editor;
- CRLF and LF files read the same (the Glasgow collections mix both);
- a byte sequence that is not valid in the collection's encoding is an
  :class:`~irgrid.errors.InputFormatError` naming the line, not a bare ``UnicodeDecodeError``.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import unicodedata
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import InputFormatError

# Compression is recognised by magic bytes rather than the file suffix: TREC disks 4 and 5
# ship gzip files named ``*.0z``, ``*.1z``, ..., which a suffix test would miss.
_GZIP_MAGIC = b"\x1f\x8b"
_BZIP2_MAGIC = b"BZh"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_UNIX_COMPRESS_MAGIC = b"\x1f\x9d"


def open_binary(path: str | os.PathLike) -> BinaryIO:
    """Open ``path`` for binary reading, transparently decompressing gzip, bzip2 and xz."""
    path = Path(path)
    with open(path, "rb") as probe:
        magic = probe.read(6)
    if magic.startswith(_GZIP_MAGIC):
        return gzip.open(path, "rb")
    if magic.startswith(_BZIP2_MAGIC):
        return bz2.open(path, "rb")
    if magic.startswith(_XZ_MAGIC):
        return lzma.open(path, "rb")
    if magic.startswith(_UNIX_COMPRESS_MAGIC):
        # Python has no reader for Unix `compress` (.Z); say so instead of parsing garbage.
        raise InputFormatError(path, None, "an uncompressed, gzip, bzip2 or xz file",
                               found="Unix 'compress' (.Z) data; decompress it first (e.g. with 'gzip -d')")
    return open(path, "rb")


# What a damaged or cut-short gzip, bzip2 or xz stream raises while being read.
_COMPRESSED_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


def read_compressed_error(path: str | os.PathLike, line_no: int | None, error: Exception) -> InputFormatError:
    """The error for a compressed file that cannot be read to its end (cut short, damaged)."""
    return InputFormatError(path, line_no, "a complete, undamaged gzip, bzip2 or xz stream",
                            found=f"{type(error).__name__}: {error}")


def iter_lines(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """Yield ``(line_no, text)`` for each line of ``path``, without its line ending.

    ``line_no`` is 1-based. Trailing ``\\r`` is removed as well as ``\\n`` so CRLF files
    need no special handling downstream, and a byte-order mark at the start of the file
    (editors on Windows write one) is dropped: kept, it would become part of the first id.
    """
    with open_binary(path) as handle:
        compressed = not isinstance(handle, io.BufferedReader)
        line_no = 0
        lines = iter(handle)
        while True:
            try:
                raw = next(lines)
            except StopIteration:
                break
            except _COMPRESSED_ERRORS as error:
                if not compressed:
                    raise
                raise read_compressed_error(path, line_no + 1, error) from None
            line_no += 1
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError as error:
                snippet = raw[max(0, error.start - 20): error.end + 20]
                raise InputFormatError(
                    path, line_no,
                    f"text encoded as {encoding} (set 'encoding' for this collection in the registry)",
                    found=repr(snippet),
                ) from None
            if line_no == 1 and text.startswith("\ufeff"):
                text = text[1:]
            yield line_no, text.rstrip("\r\n")


def check_identifier(identifier: str, path: str | os.PathLike, line_no: int | None, what: str,
                     found: str | None = None) -> str:
    """``identifier`` if it holds no whitespace, else an :class:`InputFormatError` at ``path:line_no``.

    An id is one token everywhere downstream: a TREC run line is ``qid Q0 docno rank score tag``,
    six blank-separated fields, and a qid ``"3 a"`` would make seven; a space inside an id would
    also change its meaning once a tool splits the line again. Invisible characters are refused
    too (:func:`check_visible_identifier`).
    """
    if not identifier or any(character.isspace() for character in identifier):
        raise InputFormatError(path, line_no, f"a {what} without blanks (one token, e.g. '1', 'FT911-3')",
                               found=identifier if found is None else found)
    return check_visible_identifier(identifier, path, line_no, what)


def invisible_character(identifier: str) -> str | None:
    """The first control or format character of ``identifier`` (NUL, U+200B-U+200D zero-width
    characters, U+FEFF, bidirectional marks: Unicode categories Cc and Cf), else None."""
    for character in identifier:
        if unicodedata.category(character) in ("Cc", "Cf"):
            return character
    return None


def check_visible_identifier(identifier: str, path: str | os.PathLike, line_no: int | None, what: str) -> str:
    """``identifier`` if every character of it shows, else an :class:`InputFormatError` at ``path:line_no``.

    An id holding a NUL or a zero-width space looks like another id on screen and in a run file
    (``d1`` and ``d\u200b1``) while it never matches it: judgements would silently miss it.
    """
    character = invisible_character(identifier)
    if character is not None:
        name = unicodedata.name(character, "a control character")
        raise InputFormatError(path, line_no, f"a {what} of visible characters only (no control or zero-width "
                               "characters)", found=f"{identifier!r}, holding U+{ord(character):04X} ({name})")
    return identifier


def is_encodable_text(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8: JSON's ``\\ud800`` escapes decode to lone surrogates,
    which are no characters, and Parquet (any UTF-8 writer) refuses them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def normalize_numeric_id(identifier: str) -> str:
    """Drop leading zeros from an all-digit id ("01" -> "1", "000" -> "0"); others unchanged.

    CACM's qrels write query ids as "01" while its topics say "1", and Cranfield's topics
    say "001": ids must compare equal as strings across files, so every numeric query id
    (and every docno of the numbered Glasgow collections) goes through this.
    """
    if identifier.isdigit() and identifier.isascii():
        return str(int(identifier))
    return identifier


def iter_files(path: str | os.PathLike) -> Iterator[Path]:
    """``path`` itself if it is a file, else every regular file under it in sorted path order.

    Hidden files (a leading dot, e.g. editor or download leftovers) are skipped; the sort
    makes the document order, and so docids, independent of the file system.
    """
    path = Path(path)
    if path.is_file():
        yield path
        return
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such file or directory")
    for child in sorted(path.rglob("*")):
        relative = child.relative_to(path)
        if child.is_file() and not any(part.startswith(".") for part in relative.parts):
            yield child
