"""The collection registry (``config/collections.yaml``) and its parsed entries.

The registry is validated twice: against ``workflow/schemas/collections.schema.yaml`` (shape,
allowed values, every key described there) and by :meth:`CollectionSpec.from_dict` (relations
the schema cannot express, e.g. a checksum for a file the entry does not use). Either failure
is a :class:`~irgrid.errors.ConfigError` naming the collection and the key.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError
from ..schema_errors import describe_schema_error
from .answer_tsv import DEFAULT_COLUMNS as ANSWER_TSV_DEFAULT_COLUMNS
from .formats import BUNDLED_FORMATS, DOCUMENT_FORMATS, QRELS_FORMATS, QUERY_FORMATS, default_qrels_format, default_queries_format
from .formats import FORMATS as FORMAT_REGISTRY

# The registry's format names and what each implies (defaults, bundled files): :mod:`.formats`.
FORMATS = DOCUMENT_FORMATS
QUERIES_FORMATS = QUERY_FORMATS
# answer_tsv: what is read -> header name (WikiQA's), overridden by the entry's ``columns``.
ANSWER_TSV_COLUMNS = ANSWER_TSV_DEFAULT_COLUMNS

SCHEMA_RELATIVE_PATH = Path("workflow") / "schemas" / "collections.schema.yaml"
# src/irgrid/collections/spec.py -> the checkout holding src/
PACKAGE_REPO_ROOT = Path(__file__).resolve().parents[3]
# irgrid's package data (src/irgrid/data/), where the files of an entry's ``package_files`` are
PACKAGE_DATA_DIR = Path(__file__).resolve().parents[1] / "data"


@dataclass(frozen=True)
class CollectionSpec:
    """One registry entry, with every default filled in.

    ``doc_fields`` / a query set's field list of ``None`` mean "every field of the record,
    in source order". ``relevance`` maps raw judgement values to graded ones; empty means
    identity. ``columns`` (answer_tsv only, else empty): what is read (qid, question,
    sentence, label) -> its header name, defaults filled in. ``file_mirrors``: file name ->
    the mirror sub-directory holding it where that is not ``mirror``; ``package_files``: the
    file names found in irgrid's package data instead of a mirror; ``qrels_docno``: the
    template (``{docno}``) a qrels docno is written into, empty for the docno as read.
    """

    id: str
    format: str
    files: dict[str, str] = field(default_factory=dict)
    mirror: str = ""
    sha256: dict[str, str] = field(default_factory=dict)
    url: dict[str, str] = field(default_factory=dict)
    doc_fields: tuple[str, ...] | None = None
    querysets: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    query_id: str = "record"
    queries_format: str = ""
    qrels_format: str = ""
    relevance: dict[int, int] = field(default_factory=dict)
    encoding: str = "utf-8"
    irds_id: str | None = None
    docno_field: str | None = None
    qid_field: str | None = None
    description: str = ""
    columns: dict[str, str] = field(default_factory=dict)
    file_mirrors: dict[str, str] = field(default_factory=dict)
    package_files: tuple[str, ...] = ()
    qrels_docno: str = ""
    checksum: str = "sha256"

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data: a rule param, so editing an entry reruns what reads it."""
        data = dataclasses.asdict(self)
        data["relevance"] = {str(raw): graded for raw, graded in self.relevance.items()}
        # Left out when unused, so the params of entries written before they existed are unchanged.
        for key in ("columns", "file_mirrors", "package_files", "qrels_docno"):
            if not data[key]:
                del data[key]
        if data["checksum"] == "sha256":
            del data["checksum"]
        if "package_files" in data:
            data["package_files"] = list(data["package_files"])
        return data

    @classmethod
    def from_dict(cls, collection_id: str, entry: Mapping[str, Any]) -> CollectionSpec:
        """Build a spec from one registry entry (already schema-valid, or hand-written in tests)."""
        where = f"collection {collection_id!r}"
        entry = dict(entry)
        fmt = entry.get("format")
        if fmt not in FORMATS:
            raise ConfigError(f"{where}: format must be one of {list(FORMATS)}, not {fmt!r}")
        files = {str(role): str(name) for role, name in (entry.get("files") or {}).items()}
        if fmt == "ir_datasets":
            if not entry.get("irds_id"):
                raise ConfigError(f"{where}: format 'ir_datasets' needs 'irds_id' (an ir_datasets dataset id)")
        elif fmt in BUNDLED_FORMATS:
            # Every file holds documents, queries and qrels alike (SQuAD JSON, TrecQA, answer TSV).
            if not files:
                raise ConfigError(f"{where}: format {fmt!r} needs 'files' naming one or more files (role -> file)")
            if len(set(files.values())) != len(files):
                raise ConfigError(f"{where}: format {fmt!r} reads every file as documents and queries, so a file "
                                  f"may be listed under one role only; files: {files}")
        elif "docs" not in files:
            raise ConfigError(f"{where}: 'files' must name the 'docs' file")

        queries_format = entry.get("queries_format") or default_queries_format(fmt)
        if queries_format not in QUERIES_FORMATS:
            raise ConfigError(f"{where}: queries_format must be one of {list(QUERIES_FORMATS)}, not {queries_format!r}")
        qrels_format = entry.get("qrels_format") or default_qrels_format(fmt)
        if "qrels" in files or fmt == "ir_datasets" or fmt in BUNDLED_FORMATS:
            if qrels_format not in QRELS_FORMATS:
                raise ConfigError(f"{where}: qrels_format must be one of {list(QRELS_FORMATS)}, not {qrels_format!r}")
        if (queries_format == "ir_datasets" or qrels_format == "ir_datasets") and fmt != "ir_datasets":
            raise ConfigError(f"{where}: queries_format/qrels_format 'ir_datasets' need format 'ir_datasets'")
        # SQuAD, TrecQA and answer-TSV files hold documents, questions and judgements together,
        # and every file of the entry is read as one: all three formats are that one or none is.
        bundled = [name for name in (fmt, queries_format, qrels_format) if name in BUNDLED_FORMATS]
        if bundled and not fmt == queries_format == qrels_format:
            raise ConfigError(f"{where}: format, queries_format and qrels_format must all be {bundled[0]!r} if one is "
                              f"(found {fmt!r}, {queries_format!r}, {qrels_format!r})")

        columns: dict[str, str] = {}
        if fmt == "answer_tsv":
            given = entry.get("columns") or {}
            if not isinstance(given, Mapping):
                raise ConfigError(f"{where}: columns maps {sorted(ANSWER_TSV_COLUMNS)} to header names, not {given!r}")
            unknown = sorted(set(given) - set(ANSWER_TSV_COLUMNS))
            if unknown:
                raise ConfigError(f"{where}: columns names {sorted(ANSWER_TSV_COLUMNS)} only, not {unknown}")
            columns = {**ANSWER_TSV_COLUMNS, **{str(k): str(v) for k, v in given.items()}}
            if len(set(columns.values())) != len(columns):
                raise ConfigError(f"{where}: columns must name four different header columns; found {columns}")
        elif entry.get("columns"):
            raise ConfigError(f"{where}: 'columns' applies to format 'answer_tsv' only, not {fmt!r}")

        query_id = entry.get("query_id", "record")
        if query_id not in ("record", "position"):
            raise ConfigError(f"{where}: query_id must be 'record' or 'position', not {query_id!r}")
        if query_id == "position" and queries_format != "smart":
            raise ConfigError(f"{where}: query_id 'position' applies to SMART queries only")

        used_files = set(files.values())
        for key in ("sha256", "url"):
            unknown = sorted(set(entry.get(key) or {}) - used_files)
            if unknown:
                raise ConfigError(f"{where}: '{key}' lists {unknown}, which 'files' does not use "
                                  f"(files: {sorted(used_files)})")

        checksum = str(entry.get("checksum") or "sha256")
        if checksum not in ("sha256", "none"):
            raise ConfigError(f"{where}: checksum must be 'sha256' or 'none', not {checksum!r}")
        unchecked = sorted(set(entry.get("url") or {}) - set(entry.get("sha256") or {}))
        if unchecked and checksum != "none":
            # a download nothing checks may be another file than the one the results were made from
            raise ConfigError(f"{where}: {unchecked} {'has a url' if len(unchecked) == 1 else 'have urls'} but no "
                              "sha256: add the file's sha256 under 'sha256' (sha256sum FILE), or say "
                              "'checksum: none' in the entry to download it unchecked")

        file_mirrors = {str(name): str(folder) for name, folder in (entry.get("file_mirrors") or {}).items()}
        package_files = tuple(str(name) for name in (entry.get("package_files") or ()))
        for key, names in (("file_mirrors", file_mirrors), ("package_files", package_files)):
            unknown = sorted(set(names) - used_files)
            if unknown:
                raise ConfigError(f"{where}: '{key}' lists {unknown}, which 'files' does not use "
                                  f"(files: {sorted(used_files)})")
        both = sorted(set(file_mirrors) & set(package_files))
        if both:
            raise ConfigError(f"{where}: {both} cannot be both in a mirror folder ('file_mirrors') and in the "
                              "package data ('package_files')")

        qrels_docno = str(entry.get("qrels_docno") or "")
        if qrels_docno:
            try:
                qrels_docno.format(docno="1")
            except (KeyError, IndexError, ValueError) as error:
                raise ConfigError(f"{where}: qrels_docno must be a template naming only {{docno}} "
                                  f"(e.g. 'CACM-{{docno:0>4}}'), not {qrels_docno!r} ({error})") from None
            if any(character.isspace() for character in qrels_docno.format(docno="1")):
                raise ConfigError(f"{where}: qrels_docno {qrels_docno!r} makes docnos with blanks; a docno is one token")
            if qrels_docno.format(docno="1") == qrels_docno.format(docno="2"):
                raise ConfigError(f"{where}: qrels_docno {qrels_docno!r} does not use {{docno}}: every judgement "
                                  "would name the same document")

        relevance = {}
        for raw, graded in (entry.get("relevance") or {}).items():
            try:
                relevance[int(raw)] = int(graded)
            except (TypeError, ValueError):
                raise ConfigError(f"{where}: relevance maps integers to integers; found {raw!r}: {graded!r}") from None

        querysets_entry = entry.get("querysets")
        if querysets_entry:
            querysets = {}
            for name, names in querysets_entry.items():
                if not names or not all(isinstance(n, str) for n in names):
                    raise ConfigError(f"{where}: query set {name!r} must list one or more field names")
                querysets[str(name)] = tuple(names)
        elif queries_format in BUNDLED_FORMATS:
            querysets = {role: (role,) for role in files}
        else:
            querysets = dict(FORMAT_REGISTRY[queries_format].querysets)

        doc_fields = entry.get("doc_fields")
        # TREC tags are matched case-insensitively: the readers name document fields by the
        # upper-cased tag and topic fields by the lower-cased tag.
        if doc_fields and FORMAT_REGISTRY[fmt].upper_case_fields:
            doc_fields = [name.upper() for name in doc_fields]
        if FORMAT_REGISTRY[queries_format].lower_case_query_fields:
            querysets = {name: tuple(f.lower() for f in names) if names else names
                         for name, names in querysets.items()}
        return cls(
            id=collection_id,
            format=fmt,
            files=files,
            mirror=str(entry.get("mirror") or collection_id),
            sha256={str(k): str(v).lower() for k, v in (entry.get("sha256") or {}).items()},
            url={str(k): str(v) for k, v in (entry.get("url") or {}).items()},
            doc_fields=tuple(doc_fields) if doc_fields else None,
            querysets=querysets,
            query_id=query_id,
            queries_format=queries_format,
            qrels_format=qrels_format,
            relevance=relevance,
            encoding=str(entry.get("encoding") or "utf-8"),
            irds_id=entry.get("irds_id"),
            docno_field=entry.get("docno_field"),
            qid_field=entry.get("qid_field"),
            description=str(entry.get("description") or ""),
            columns=columns,
            file_mirrors=file_mirrors,
            package_files=package_files,
            qrels_docno=qrels_docno,
            checksum=checksum,
        )

    def file_for(self, role: str) -> str:
        """The registry file name of ``role`` (``docs``, ``queries``, ``qrels``...)."""
        try:
            return self.files[role]
        except KeyError:
            raise ConfigError(f"collection {self.id!r} has no {role!r} file; its files: {self.files}") from None

    def folder_of(self, name: str) -> str:
        """The mirror sub-directory holding the file ``name`` (its ``file_mirrors`` entry, else ``mirror``)."""
        return self.file_mirrors.get(name, self.mirror)

    def queryset_fields(self, queryset: str) -> tuple[str, ...] | None:
        """The fields of ``queryset`` (None: every field), or a ConfigError naming the known sets."""
        try:
            return self.querysets[queryset]
        except KeyError:
            raise ConfigError(f"collection {self.id!r} has no query set {queryset!r}; "
                              f"it has {sorted(self.querysets)}") from None


def find_schema(registry_path: str | os.PathLike | None = None) -> Path | None:
    """``workflow/schemas/collections.schema.yaml`` of the checkout the registry lives in.

    Looks upwards from the registry file, then in the checkout the package was installed
    from (editable install); None if neither has it (e.g. a wheel install).
    """
    starts = []
    if registry_path is not None:
        starts.append(Path(registry_path).resolve().parent)
    starts.append(PACKAGE_REPO_ROOT)
    for start in starts:
        for directory in (start, *start.parents):
            candidate = directory / SCHEMA_RELATIVE_PATH
            if candidate.is_file():
                return candidate
    return None


def validate_registry(data: Any, source: str, schema_path: str | os.PathLike | None) -> None:
    """Validate raw registry data against the JSON schema; ConfigError on the first problem."""
    if schema_path is None:
        return
    import jsonschema  # imported here: only needed when validating

    with open(schema_path, encoding="utf-8") as handle:
        schema = yaml.safe_load(handle)
    # JSON object keys are strings; the YAML has integer keys in 'relevance'. A JSON round trip
    # validates exactly what a JSON copy of the registry would hold.
    as_json = json.loads(json.dumps(data))
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(as_json), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:

        raise ConfigError(f"{source}: {describe_schema_error(errors[0])}")


def load_registry(path: str | os.PathLike = "config/collections.yaml",
                  schema_path: str | os.PathLike | None = None) -> dict[str, CollectionSpec]:
    """Read, validate and parse the collection registry: collection id -> :class:`CollectionSpec`."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: collection registry not found") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{path}: expected a mapping of collection ids to entries")
    validate_registry(data, str(path), schema_path if schema_path is not None else find_schema(path))
    registry = {}
    for collection_id, entry in data.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: entry {collection_id!r} must be a mapping")
        registry[str(collection_id)] = CollectionSpec.from_dict(str(collection_id), entry)
    return registry


def get_spec(registry: Mapping[str, CollectionSpec], collection_id: str) -> CollectionSpec:
    """``registry[collection_id]``, or a ConfigError listing the known ids."""
    try:
        return registry[collection_id]
    except KeyError:
        raise ConfigError(f"unknown collection {collection_id!r}; the registry has {sorted(registry)}") from None
