"""Canonical encoding of parameter points as path segments.

A grid cell's output path encodes every parameter value (``k1~0.9_b~0.4``), the
way ``snakemake.utils.Paramspace`` does, so a changed value is a new path and
Snakemake reruns exactly that cell. The encoding is our own rather than
Paramspace's because Paramspace formats values through a pandas column dtype
(``1000`` becomes ``1000.0`` once a column holds a float): here a value is
always written the same way whatever its neighbours, and parsing it back gives
the declared type.

A point's digests (:func:`point_hash`, :func:`interleaved_point_digest`) are what
groups cells into chunk jobs (:func:`irgrid.config.split_by_hash`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

from .errors import ConfigError

PARAM_SEP = "_"
KEY_VALUE_SEP = "~"
NO_PARAMS = "default"
HASH_BITS = 64
#: bits of a point's digest in a chunk cell's (:func:`irgrid.config.cell_hash`): the model's take the rest
POINT_DIGEST_BITS = 32


def format_value(value: float | int) -> str:
    """Write a number as a short, canonical, path-safe string (0.9, 1000, 1e-05)."""
    if isinstance(value, bool):
        raise ConfigError(f"parameter values must be numbers, not booleans: {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ConfigError(f"parameter values must be finite numbers, found {value!r}")
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return repr(number)


def encode_point(point: Mapping[str, float], order: Sequence[str]) -> str:
    """Encode a parameter point in the model's declared parameter order."""
    missing = [name for name in order if name not in point]
    extra = [name for name in point if name not in order]
    if missing or extra:
        raise ConfigError(f"parameter point {dict(point)} does not match parameters {list(order)}")
    if not order:
        return NO_PARAMS
    return PARAM_SEP.join(f"{name}{KEY_VALUE_SEP}{format_value(point[name])}" for name in order)


def decode_point(encoded: str) -> dict[str, float]:
    """Inverse of :func:`encode_point`; values come back as floats."""
    point: dict[str, float] = {}
    for name, value in _named_values(encoded):
        try:
            point[name] = float(value)
        except ValueError:
            raise ConfigError(f"parameter {name!r} in {encoded!r} is not a number: {value!r}") from None
    return point


def _named_values(encoded: str) -> list[tuple[str, str]]:
    """The ``(name, value as written)`` pairs of an encoded point, in its order.

    A name may hold the separator (``bigram_weight~0.1``), a value never does (a
    number), so each ``_`` that ends a value starts the next name.
    """
    if encoded == NO_PARAMS:
        return []
    pieces = encoded.split(KEY_VALUE_SEP)
    if len(pieces) < 2:
        raise ConfigError(f"cannot read parameter {encoded!r}: expected name{KEY_VALUE_SEP}value")
    names, values = [pieces[0]], []
    for piece in pieces[1:-1]:
        value, sep, name = piece.partition(PARAM_SEP)
        if not sep or not name:
            raise ConfigError(f"cannot read parameter {piece!r} in {encoded!r}: expected "
                              f"value{PARAM_SEP}name between two {KEY_VALUE_SEP}")
        values.append(value)
        names.append(name)
    values.append(pieces[-1])
    for name, value in zip(names, values):
        if not name or PARAM_SEP in value:
            raise ConfigError(f"cannot read parameter {name!r} in {encoded!r}: expected name{KEY_VALUE_SEP}value")
    return list(zip(names, values))


def point_hash(params: str) -> int:
    """The encoded point's digest as an unsigned 64-bit integer, the same on every machine and run."""
    return int.from_bytes(hashlib.blake2b(params.encode("utf-8"), digest_size=HASH_BITS // 8).digest(), "big")


@functools.cache
def _value_digest(name_and_value: str) -> int:
    # one parameter's value, ``name~value``: a grid's axis has few values, each shared by many points
    return point_hash(name_and_value) >> (HASH_BITS - POINT_DIGEST_BITS)


@functools.cache
def interleaved_point_digest(encoded: str) -> int:
    """A :data:`POINT_DIGEST_BITS`-bit digest of an encoded point whose bits take turns among its parameters.

    Bit ``j`` (from the top) is bit ``j // d`` of the digest of parameter ``j % d``'s ``name~value``
    (``d`` parameters, in the encoded order): a Z-order over the digests of each parameter's values.
    The points of a full grid whose digests share a prefix are then every combination of one set of
    values of each parameter, a tile of the grid, and a changed value (a row of the grid) meets the
    tiles of one column of them instead of nearly every set of points a prefix holds, as a digest of
    the whole point would. With one parameter (or none), the digest of the whole encoded point.
    """
    pairs = _named_values(encoded)
    if len(pairs) <= 1:
        return point_hash(encoded) >> (HASH_BITS - POINT_DIGEST_BITS)
    digests = [_value_digest(f"{name}{KEY_VALUE_SEP}{value}") for name, value in pairs]
    out = 0
    for j in range(POINT_DIGEST_BITS):
        bit = POINT_DIGEST_BITS - 1 - j // len(digests)
        out = out << 1 | (digests[j % len(digests)] >> bit) & 1
    return out


def expand_grid(grid: Mapping[str, Iterable[float] | float], order: Sequence[str]) -> list[dict[str, float]]:
    """All points of a grid (the Cartesian product of each parameter's values).

    A scalar stands for a one-value list. Duplicate values are dropped, so the
    same cell is never listed twice.
    """
    axes = []
    for name in order:
        values = grid[name]
        if isinstance(values, (int, float)):
            values = [values]
        unique: dict[str, float] = {}
        for value in values:
            unique.setdefault(format_value(value), float(value))
        axes.append(list(unique.values()))
    return [dict(zip(order, combo)) for combo in itertools.product(*axes)]
