"""The registry of collection formats: a name (the entry's ``format``, ``queries_format`` or
``qrels_format``) -> its :class:`~irgrid.collections.reading.Format`.

Each format module declares its names in a ``FORMATS`` table; a name two modules declare (``smart``
documents and queries in :mod:`.smart`, ``smart`` judgements in :mod:`.qrels`) is one format with
the readers of both. Adding a format is one reader module and its line in :data:`MODULES`.
"""

from __future__ import annotations

import dataclasses

from ..errors import ConfigError
from . import answer_tsv, html_files, irds, local, npl, qrels, smart, squad, trec, trecqa
from .reading import Format

#: The format modules, in the order their names are listed to users.
MODULES = (smart, npl, trec, local, irds, squad, trecqa, answer_tsv, html_files, qrels)


def _merged(first: Format, second: Format, name: str) -> Format:
    """One format of two declarations of ``name``: each attribute set by at most one of them."""
    default = Format()
    values = {}
    for attribute in dataclasses.fields(Format):
        a, b = getattr(first, attribute.name), getattr(second, attribute.name)
        unset = getattr(default, attribute.name)
        if a != unset and b != unset and a != b:
            raise TypeError(f"format {name!r}: two modules set {attribute.name}")
        values[attribute.name] = a if a != unset else b
    return Format(**values)


def _registry(modules=MODULES) -> dict[str, Format]:
    registry: dict[str, Format] = {}
    for module in modules:
        for name, declared in module.FORMATS.items():
            registry[name] = _merged(registry[name], declared, name) if name in registry else declared
    return registry


FORMATS: dict[str, Format] = _registry()

DOCUMENT_FORMATS = tuple(name for name, fmt in FORMATS.items() if fmt.documents)
QUERY_FORMATS = tuple(name for name, fmt in FORMATS.items() if fmt.queries)
QRELS_FORMATS = tuple(name for name, fmt in FORMATS.items() if fmt.qrels)
#: Formats whose every file holds documents, queries and qrels together (read by role, each role's
#: questions a query set): an entry's format, queries_format and qrels_format are all that one.
BUNDLED_FORMATS = tuple(name for name, fmt in FORMATS.items() if fmt.bundled)


def get_format(name: str, reads: str) -> Format:
    """The format ``name``, which must read ``reads`` (``documents``, ``queries``, ``qrels``)."""
    fmt = FORMATS.get(name)
    if fmt is None or getattr(fmt, reads) is None:
        known = [known_name for known_name, known in FORMATS.items() if getattr(known, reads)]
        raise ConfigError(f"no format {name!r} reads {reads}; formats that do: {known}")
    return fmt


def default_queries_format(name: str) -> str:
    """The queries format of an entry whose documents are in ``name`` and that names none."""
    return FORMATS[name].queries_format or name


def default_qrels_format(name: str) -> str:
    """The qrels format of an entry whose documents are in ``name`` ("": the entry must say)."""
    fmt = FORMATS[name]
    return fmt.qrels_format or (name if fmt.bundled else "")
