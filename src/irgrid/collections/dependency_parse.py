"""A dependency parse of one sentence, checked when it is made.

Heads are 0-based token indices, ``-1`` for a root.  A parse may be a forest (more
than one root): spaCy splits a text it reads as two sentences into two trees, and a
data set's own parse may do the same; two tokens in different trees are not
connected (:mod:`irgrid.features.trees`).  What a parse may not be: of unequal
lengths, with a head outside the sentence, a token its own head, or a cycle in the
heads (a token that never reaches a root).  Readers turn those into an
:class:`~irgrid.errors.InputFormatError` naming the file and line
(:func:`check_parse`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from ..errors import InputFormatError

ROOT = -1


class ParseError(ValueError):
    """What is wrong with a parse, without where it came from (the reader adds the file and line)."""


@dataclass(frozen=True)
class Parse:
    """Tokens, their 0-based heads (-1: root) and dependency labels, checked to form a forest."""

    tokens: tuple[str, ...]
    heads: tuple[int, ...]
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        n = len(self.tokens)
        if len(self.heads) != n or len(self.labels) != n:
            raise ParseError(f"{n} tokens but {len(self.heads)} heads and {len(self.labels)} labels")
        for i, head in enumerate(self.heads):
            if head != ROOT and not 0 <= head < n:
                raise ParseError(f"token {i + 1} ({self.tokens[i]!r}) has head {head + 1}, outside 1..{n} "
                                 "(0 for the root)")
            if head == i:
                raise ParseError(f"token {i + 1} ({self.tokens[i]!r}) is its own head")
        # every token must reach a root: walk up, marking tokens known to reach one
        reaches_root = [False] * n
        for start in range(n):
            path, node = [], start
            while node != ROOT and not reaches_root[node]:
                if node in path:
                    cycle = path[path.index(node):]
                    raise ParseError("a cycle in the heads: tokens " + " -> ".join(str(t + 1) for t in cycle + [node]))
                path.append(node)
                node = self.heads[node]
            for visited in path:
                reaches_root[visited] = True

    @classmethod
    def from_one_based(cls, tokens: Sequence[str], heads: Sequence[int], labels: Sequence[str]) -> Parse:
        """From CoNLL-style heads: 1-based, 0 for the root."""
        return cls(tuple(tokens), tuple(int(h) - 1 for h in heads), tuple(labels))

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def roots(self) -> tuple[int, ...]:
        return tuple(i for i, head in enumerate(self.heads) if head == ROOT)


def check_parse(tokens: Sequence[str], heads: Sequence[int], labels: Sequence[str],
                path: str | os.PathLike, line: int | None, one_based: bool = True) -> Parse:
    """A :class:`Parse`, or an :class:`InputFormatError` at ``path:line`` saying what is wrong with it."""
    try:
        if one_based:
            return Parse.from_one_based(tokens, heads, labels)
        return Parse(tuple(tokens), tuple(int(h) for h in heads), tuple(labels))
    except ParseError as error:
        raise InputFormatError(path, line, "a dependency parse whose heads form a tree over the tokens",
                               found=str(error)) from None


# ---------------------------------------------------------------------- stored parses

#: the shards of a documents directory and of a parses directory
SHARD_GLOB = "part-*.parquet"


def _shard_key(path: Path) -> tuple[int, str]:
    match = re.fullmatch(r"part-(\d+)\.parquet", path.name)
    return (int(match.group(1)) if match else -1, path.name)


def shard_paths(directory: Path, what: str) -> list[Path]:
    """The ``part-*.parquet`` files of ``directory`` in shard order; an error names the directory when there are none."""
    if not directory.is_dir():
        raise InputFormatError(directory, None, f"a directory of {SHARD_GLOB} {what}", "no such directory")
    paths = sorted(directory.glob(SHARD_GLOB), key=_shard_key)
    if not paths:
        raise InputFormatError(directory, None, f"{SHARD_GLOB} {what}", "no such files in the directory")
    return paths


def _read_parses_file(path: Path, parses: dict[str, Parse], seen_in: dict[str, Path]) -> None:
    try:
        table = pq.read_table(path)
    except Exception as error:  # not Parquet, truncated
        raise InputFormatError(path, None, "a Parquet file of parses", f"{type(error).__name__}: {error}") from None
    missing = [name for name in ("id", "tokens", "heads", "labels") if name not in table.column_names]
    if missing:
        raise InputFormatError(path, None, "the columns id, tokens, heads, labels, source",
                               "no " + ", ".join(missing) + "; columns " + ", ".join(table.column_names))
    columns = [table.column(name).to_pylist() for name in ("id", "tokens", "heads", "labels")]
    expected = "a dependency parse whose heads form a tree over the tokens"
    for row, (id_, tokens, heads, labels) in enumerate(zip(*columns), start=1):
        if id_ is None:
            raise InputFormatError(path, None, "an id on every row", f"row {row}: none")
        if tokens is None or heads is None or labels is None or None in heads:
            raise InputFormatError(path, None, expected, f"id {id_!r} (row {row}): missing tokens, heads or labels")
        try:
            parse = Parse(tuple(tokens), tuple(int(h) for h in heads), tuple(labels))
        except (ParseError, TypeError, ValueError) as error:
            raise InputFormatError(path, None, expected, f"id {id_!r} (row {row}): {error}") from None
        if id_ in parses:
            raise InputFormatError(path, None, "one parse per id", f"id {id_!r} (row {row}) again, first in "
                                   f"{seen_in[id_].name}")
        parses[id_] = parse
        seen_in[id_] = path


def read_parses(path: str | os.PathLike) -> dict[str, Parse]:
    """The parses of a Parquet file, or of every ``part-*.parquet`` of a directory, by id.

    Every stored parse is checked: unequal lengths, a head outside the sentence
    or a cycle give an :class:`~irgrid.errors.InputFormatError` naming the file
    and the row's id; so does an id stored twice.
    """
    path = Path(path)
    if not path.exists():
        raise InputFormatError(path, None, "a Parquet file or directory of parses", "no such file")
    files = shard_paths(path, "parse files") if path.is_dir() else [path]
    parses: dict[str, Parse] = {}
    seen_in: dict[str, Path] = {}
    for file in files:
        _read_parses_file(file, parses, seen_in)
    return parses
