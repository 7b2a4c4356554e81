"""What a collection step's output is made from: rerun triggers that follow content, not locations.

Each collection step of the workflow (document shards, one query set's topics, qrels, sentence
parses) gets one tracked param, :func:`step_provenance`: the registry entry's fields that step
reads and the sha256 of every raw file it reads. So

- fixing a bad source file changes the digest and reruns exactly the steps reading that file
  (and what depends on their outputs);
- editing one field of an entry (a query set's fields, the relevance mapping, ``doc_fields``)
  reruns only the steps that read it; its ``description``, ``url``, ``mirror`` key and file
  *names* are read by no collection step (the report, showing a digest of the whole entry, is remade);
- moving or copying the mirror, or naming the registry by another path, changes no provenance:
  where files are read from is passed to the jobs as a derived param, which Snakemake does not
  record (see ``collection_sources`` in ``workflow/rules/common.smk``).

Hashing every raw file on every ``snakemake -n`` would cost seconds to minutes, so digests are
cached in a JSON file (the workflow's ``.snakemake/irgrid/source-digests.json``) keyed by the
file's path, size, mtime, ctime and inode: any write to the file, even one that restores its
mtime, changes its ctime and so is hashed again. A file not yet downloaded counts as the
registry's checksum for it: the download is verified against that checksum before it is used,
so the provenance does not change when it arrives.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from ..io import publish_mode
from .sources import CollectionNotAvailable, download_dir, resolve_files, sha256_of
from .spec import BUNDLED_FORMATS, CollectionSpec
from .textio import iter_files

log = logging.getLogger(__name__)

#: the steps and the entry fields each one reads (besides the query set, for topics)
STEP_FIELDS: dict[str, tuple[str, ...]] = {
    "docs": ("format", "doc_fields", "encoding", "docno_field", "irds_id", "columns"),
    "topics": ("queries_format", "query_id", "encoding", "qid_field", "irds_id", "columns"),
    # format: MED.REL's docnos are read as numbers because MED's documents (SMART) are numbered
    "qrels": ("format", "qrels_format", "relevance", "encoding", "irds_id", "columns"),
    # every query of the collection (all query sets), and for TrecQA the parses its files carry
    "sentence_parses": ("format", "queries_format", "query_id", "encoding", "qid_field", "irds_id", "columns"),
}
#: fields a step reads that only some entries set: in the provenance only where they are set
_STEP_FIELDS_WHEN_SET: dict[str, tuple[str, ...]] = {"qrels": ("qrels_docno",)}
#: the file role each step reads, for formats keeping documents, queries and qrels in files of their own
_STEP_ROLE = {"docs": "docs", "topics": "queries", "qrels": "qrels", "sentence_parses": "queries"}
#: a file that is neither present nor has a checksum in the registry
NOT_AVAILABLE = "not available yet, and no sha256 in the registry"


def step_roles(spec: CollectionSpec, step: str) -> list[str]:
    """The roles (keys of the entry's ``files``) of the raw files ``step`` reads."""
    if step not in STEP_FIELDS:
        raise ValueError(f"unknown collection step {step!r}; steps: {sorted(STEP_FIELDS)}")
    if spec.format == "ir_datasets":
        return []  # ir_datasets reads its own copy; the entry's irds_id names it
    if spec.format in BUNDLED_FORMATS:
        return list(spec.files)  # every file holds documents, questions and judgements
    role = _STEP_ROLE[step]
    return [role] if role in spec.files else []


def step_fields(spec: CollectionSpec, step: str, queryset: str | None = None) -> dict[str, Any]:
    """The entry's fields ``step`` reads, as plain data (a query set's own fields for topics)."""
    entry = spec.to_dict()
    fields = {name: entry.get(name) for name in STEP_FIELDS[step]}
    # Read only where set (HTML collections), and left out elsewhere so that the provenance of the
    # entries written before it existed, and what was made from them, stays the same.
    for name in _STEP_FIELDS_WHEN_SET.get(step, ()):
        if entry.get(name):
            fields[name] = entry[name]
    if step == "topics":
        if queryset is None:
            raise ValueError("the topics step reads one query set: name it")
        fields["queryset"] = {queryset: spec.queryset_fields(queryset)}
    return fields


class DigestCache:
    """sha256 of files, remembered in a JSON file under the file's (size, mtime, ctime, inode).

    ``path=None`` keeps the digests in memory only. Writes are atomic (a temporary file renamed
    into place), so Snakemake processes running side by side never read half a cache; one of two
    concurrent writers may lose the other's new entries, which only costs hashing them again.
    """

    def __init__(self, path: str | os.PathLike | None):
        self.path = Path(path) if path is not None else None
        self._entries: dict[str, dict[str, Any]] | None = None
        self._changed = False  # digests not yet written to the cache file

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = {}
            if self.path is not None and self.path.is_file():
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                    if isinstance(data, dict) and isinstance(data.get("files"), dict):
                        self._entries = data["files"]
                except (OSError, ValueError):
                    log.warning("%s: unreadable digest cache; hashing the raw files again", self.path)
        return self._entries

    def save(self) -> None:
        """Write the digests to the cache file (atomically)."""
        if self.path is None or not self._changed:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp_name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"files": self._entries}, out, sort_keys=True, indent=0)
            publish_mode(temp_name)
            os.replace(temp_name, self.path)
            self._changed = False
        finally:
            if os.path.exists(temp_name):
                os.unlink(temp_name)

    def sha256(self, path: str | os.PathLike, save: bool = True) -> str:
        """The file's sha256, hashed only when it is new or changed since it was last hashed.

        ``save=False`` leaves writing the cache file to the caller (:meth:`save`), once for many files.
        """
        resolved = Path(path).resolve()
        stat = resolved.stat()
        key = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "ctime_ns": stat.st_ctime_ns,
               "inode": stat.st_ino}
        entries = self._load()
        known = entries.get(str(resolved))
        if known is not None and all(known.get(name) == value for name, value in key.items()):
            return known["sha256"]
        digest = sha256_of(resolved)
        entries[str(resolved)] = {**key, "sha256": digest}
        self._changed = True
        if save:
            self.save()
        return digest


def content_digest(path: Path, cache: DigestCache) -> str:
    """sha256 of a raw file; of a directory (JSONL/TSV/TREC files may be one), of the files read from it.

    A directory's digest covers each file's path below it and bytes, in the order the readers
    take them (:func:`irgrid.collections.textio.iter_files`), so a file added, removed, renamed
    or changed below it changes the digest.
    """
    if not path.is_dir():
        return cache.sha256(path)
    combined = hashlib.sha256()
    for file_path in iter_files(path):  # the cache file written once for the directory, not once a file
        combined.update(f"{file_path.relative_to(path).as_posix()}\0{cache.sha256(file_path, save=False)}\n".encode())
    cache.save()
    return "directory:" + combined.hexdigest()


def source_digests(spec: CollectionSpec, roles: list[str], mirror: str | os.PathLike | None,
                   resources_dir: str | os.PathLike, cache: DigestCache) -> dict[str, str]:
    """role -> sha256 of the file a job would read for it, found as the job finds it.

    Nothing is downloaded: a file in no mirror and not yet downloaded counts as the registry's
    sha256 for it (what its download must match), or :data:`NOT_AVAILABLE` without one.
    """
    if not roles:
        return {}
    try:
        files = resolve_files(spec, mirror=mirror, resources_dir=resources_dir, download=False, verify=False)
    except CollectionNotAvailable:
        # The job will download the missing files next to the ones already downloaded.
        target = download_dir(spec, resources_dir)
        files = {role: target / name for role, name in spec.files.items()}
    digests = {}
    for role in roles:
        path = Path(files[role])
        if path.exists():
            digests[role] = content_digest(path, cache)
        else:
            digests[role] = spec.sha256.get(spec.files[role], NOT_AVAILABLE)
    return digests


def step_provenance(spec: CollectionSpec, step: str, queryset: str | None = None, *,
                    mirror: str | os.PathLike | None = None, resources_dir: str | os.PathLike = "resources",
                    cache: DigestCache | None = None) -> str:
    """What ``step`` of collection ``spec`` reads, as one canonical JSON string (a rule param).

    ``{"entry": <the fields it reads>, "sha256": {role: digest of the raw file}}``; no path,
    mirror or registry location appears in it.
    """
    cache = cache if cache is not None else DigestCache(None)
    provenance = {
        "entry": step_fields(spec, step, queryset),
        "sha256": source_digests(spec, step_roles(spec, step), mirror, resources_dir, cache),
    }
    return json.dumps(provenance, sort_keys=True)

