"""What a collection format is: the readers a format module registers under its name.

A format module (:mod:`.smart`, :mod:`.trec`, :mod:`.local`, ...) reads one layout of raw files
and ends with ``FORMATS = {name: Format(...)}``; :mod:`.formats` gathers those tables into the
registry that :mod:`.readers` and :mod:`.spec` look formats up in. A reader takes the registry
entry (:class:`~irgrid.collections.spec.CollectionSpec`) and the entry's local files (role ->
path, what :func:`~irgrid.collections.resolve_files` returned) and yields records in source
order. This module imports no format and no registry entry type, so a format module can import
it without a cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .dependency_parse import Parse
from .records import Document, Qrel, Query

# A reader's first argument is the registry entry (spec.CollectionSpec, which imports the registry
# of formats, so it is not named here).
Files = Mapping[str, Path]
DocumentReader = Callable[[Any, Files], Iterator[Document]]
QueryReader = Callable[[Any, Files], Iterator[Query]]
#: ``numeric_docnos``: the documents' format writes docnos as numbers (``001`` is ``1``), so
#: judgements naming them are read the same way.
QrelsReader = Callable[[Any, Files, bool], Iterator[Qrel]]
#: ``(kind, id, parse)``, kind ``"query"`` or ``"document"``: parses the files carry.
ParseReader = Callable[[Any, Files], Iterator[tuple[str, str, Parse]]]


@dataclass(frozen=True)
class Format:
    """One format name's readers and what an entry of that format means when it says nothing else.

    A name may read documents, queries, judgements or any of them (``cranfield`` names a qrels
    layout only). ``bundled``: every file holds documents, questions and judgements alike (read
    by role, each role's questions a query set), so the entry's three formats are this one.
    ``queries_format`` / ``qrels_format``: the defaults for an entry whose documents are in this
    format ("" : the entry must say). ``querysets``: the query sets of an entry whose queries are
    in this format and that names none (a field list of None: every field in source order).
    ``metadata_fields``: document fields left out of the indexed text when the entry names no
    ``doc_fields``; ``upper_case_fields``: the format names document fields by the upper-cased
    tag, so an entry's ``doc_fields`` are upper-cased too. ``answer_candidates``: each question comes
    with its judged candidate answers, which the answer-selection protocol re-ranks: an experiment
    naming no query sets runs ``X+judged`` for each query set X (:mod:`irgrid.querysets`).
    """

    documents: DocumentReader | None = None
    queries: QueryReader | None = None
    qrels: QrelsReader | None = None
    parses: ParseReader | None = None
    bundled: bool = False
    queries_format: str = ""
    qrels_format: str = ""
    querysets: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
    numeric_docnos: bool = False
    metadata_fields: frozenset[str] = frozenset()
    upper_case_fields: bool = False
    lower_case_query_fields: bool = False
    answer_candidates: bool = False


def role_path(spec: Any, files: Files, role: str) -> Path:
    """The local path of the entry's ``role`` file (ConfigError when the entry or ``files`` lacks it)."""
    spec.file_for(role)  # ConfigError if the registry entry has no such role
    try:
        return Path(files[role])
    except KeyError:
        raise ConfigError(f"collection {spec.id!r}: no local path for its {role!r} file; "
                          "pass the result of resolve_files(spec)") from None


def role_paths(spec: Any, files: Files) -> dict[str, Path]:
    """Every role's local path, in the registry's ``files`` order (bundled formats read every file)."""
    return {role: role_path(spec, files, role) for role in spec.files}
