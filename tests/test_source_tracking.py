"""Rerun triggers of the collection steps follow what the raw files hold, not where they are.

- ``irgrid.collections.provenance``: a step's provenance is the registry fields it reads and the
  sha256 of the raw files it reads; it is the same for a copy of the mirror elsewhere, changes with
  one byte of a file the step reads and not with a file or field it does not read; digests are
  cached under (size, mtime, ctime, inode), so a rewrite that restores the mtime is still seen.
- The workflow, on a small JSONL collection of our own in a temporary mirror (real Snakemake runs):
  a copied mirror or a moved registry leaves nothing to do; a fixed source file reruns the steps
  reading it and what depends on them, and the new bytes reach the results; an edited query set
  reruns that query set's topics and what depends on them only.
- The qrels step reads the document shards: judged documents the collection lacks are logged with
  a count and examples; more than half of them unknown stops the step naming the qrels file (the
  qrels of another collection). Every entry of the registry has none.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from common import ANALYZER, assert_ok, job_outputs, job_stats, make_workdir, snakemake, write_yaml
from common import REGISTRY as REPO_REGISTRY

from irgrid.collections import CollectionNotAvailable, iter_documents, iter_qrels, load_registry, provenance, resolve_files
from irgrid.collections.provenance import NOT_AVAILABLE, DigestCache, step_provenance
from irgrid.collections.sources import ChecksumError
from irgrid.collections.spec import CollectionSpec
from irgrid.collections.writers import check_judged_docnos, write_document_shards
from irgrid.errors import InputFormatError

DOCS = [
    {"docno": "d1", "title": "wind tunnel", "body": "pressure on a wing in a wind tunnel"},
    {"docno": "d2", "title": "heat transfer", "body": "heat transfer at high speed"},
    {"docno": "d3", "title": "boundary layer", "body": "the boundary layer of a flat plate"},
    {"docno": "d4", "title": "shock waves", "body": "shock waves ahead of a blunt body"},
    {"docno": "d5", "title": "wing flutter", "body": "flutter of a wing at high speed"},
    {"docno": "d6", "title": "plate buckling", "body": "buckling of a heated plate"},
]
QUERIES = [
    {"qid": "1", "title": "wing", "desc": "pressure on a wing"},
    {"qid": "2", "title": "heat", "desc": "heat transfer at speed"},
    {"qid": "3", "title": "plate", "desc": "flat plate boundary layer"},
]
QRELS = "1 0 d1 1\n1 0 d5 1\n2 0 d2 1\n3 0 d3 1\n3 0 d6 1\n"
FILES = {"docs": "docs.jsonl", "queries": "queries.jsonl", "qrels": "qrels.txt"}
ENTRY = {
    "description": "six documents, three queries (test)",
    "format": "jsonl",
    "mirror": "tiny",
    "files": FILES,
    "doc_fields": ["title", "body"],
    "querysets": {"title": ["title"], "desc": ["desc"]},
}


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_mirror(root: Path) -> Path:
    """A mirror root holding the tiny collection under tiny/."""
    directory = root / "tiny"
    directory.mkdir(parents=True)
    (directory / FILES["docs"]).write_text(jsonl(DOCS), encoding="utf-8")
    (directory / FILES["queries"]).write_text(jsonl(QUERIES), encoding="utf-8")
    (directory / FILES["qrels"]).write_text(QRELS, encoding="utf-8")
    return root


def spec(**changes) -> CollectionSpec:
    return CollectionSpec.from_dict("tiny", {**ENTRY, **changes})


# --------------------------------------------------------------------------- provenance, without Snakemake


@pytest.mark.parametrize("step, queryset", [("docs", None), ("topics", "title"), ("qrels", None)])
def test_provenance_is_the_same_for_a_copy_of_the_mirror(tmp_path, step, queryset):
    first = write_mirror(tmp_path / "a")
    copy = tmp_path / "elsewhere" / "b"
    shutil.copytree(first, copy)
    made = [step_provenance(spec(), step, queryset, mirror=root, resources_dir=tmp_path / "resources")
            for root in (first, copy)]
    assert made[0] == made[1]
    assert str(tmp_path) not in made[0]


def test_provenance_holds_the_sha256_of_the_files_each_step_reads(tmp_path):
    root = write_mirror(tmp_path / "mirror")
    made = {step: json.loads(step_provenance(spec(), step, "title" if step == "topics" else None, mirror=root))
            for step in ("docs", "topics", "qrels")}
    assert made["docs"]["sha256"] == {"docs": sha256_text(jsonl(DOCS))}
    assert made["topics"]["sha256"] == {"queries": sha256_text(jsonl(QUERIES))}
    assert made["qrels"]["sha256"] == {"qrels": sha256_text(QRELS)}


def test_one_changed_byte_changes_the_provenance_of_the_steps_reading_that_file_only(tmp_path):
    root = write_mirror(tmp_path / "mirror")
    before = {step: step_provenance(spec(), step, "title" if step == "topics" else None, mirror=root)
              for step in ("docs", "topics", "qrels")}
    qrels = root / "tiny" / FILES["qrels"]
    qrels.write_text(QRELS.replace("3 0 d6 1", "3 0 d6 0"), encoding="utf-8")
    after = {step: step_provenance(spec(), step, "title" if step == "topics" else None, mirror=root)
             for step in ("docs", "topics", "qrels")}
    assert after["qrels"] != before["qrels"]
    assert after["docs"] == before["docs"] and after["topics"] == before["topics"]


def test_an_entry_field_changes_only_the_steps_that_read_it(tmp_path):
    root = write_mirror(tmp_path / "mirror")

    def made(entry: CollectionSpec) -> dict[str, str]:
        return {(step, queryset): step_provenance(entry, step, queryset, mirror=root)
                for step, queryset in [("docs", None), ("topics", "title"), ("topics", "desc"), ("qrels", None)]}

    before = made(spec())
    desc_changed = made(spec(querysets={"title": ["title"], "desc": ["title", "desc"]}))
    assert {key for key in before if before[key] != desc_changed[key]} == {("topics", "desc")}
    fields_changed = made(spec(doc_fields=["body"]))
    assert {key for key in before if before[key] != fields_changed[key]} == {("docs", None)}
    relevance_changed = made(spec(relevance={0: 0, 1: 2}))
    assert {key for key in before if before[key] != relevance_changed[key]} == {("qrels", None)}
    # read by no step: the description, the urls (and whether downloads are checked), the mirror
    # directory's name, the files' names
    unread = made(spec(description="another text", url={"docs.jsonl": "https://example.org/docs.jsonl"},
                       checksum="none"))
    assert unread == before
    renamed_root = tmp_path / "renamed"
    shutil.copytree(root / "tiny", renamed_root / "elsewhere")
    (renamed_root / "elsewhere" / FILES["qrels"]).rename(renamed_root / "elsewhere" / "judgements.txt")
    renamed = spec(mirror="elsewhere", files={**FILES, "qrels": "judgements.txt"})
    assert {(step, queryset): step_provenance(renamed, step, queryset, mirror=renamed_root)
            for step, queryset in before} == before


def test_a_file_not_yet_downloaded_counts_as_its_registry_checksum(tmp_path):
    """Before the download the provenance holds the registry's sha256, after it the file's: the same."""
    checksums = {FILES["docs"]: sha256_text(jsonl(DOCS))}
    entry = spec(mirror="absent", sha256=checksums)
    resources = tmp_path / "resources"
    before = json.loads(step_provenance(entry, "docs", mirror=tmp_path / "no-mirror", resources_dir=resources))
    assert before["sha256"] == {"docs": checksums[FILES["docs"]]}
    assert json.loads(step_provenance(entry, "qrels", mirror=tmp_path / "no-mirror", resources_dir=resources)
                      )["sha256"] == {"qrels": NOT_AVAILABLE}
    downloaded = resources / "collections" / "tiny"
    downloaded.mkdir(parents=True)
    (downloaded / FILES["docs"]).write_text(jsonl(DOCS), encoding="utf-8")
    after = json.loads(step_provenance(entry, "docs", mirror=tmp_path / "no-mirror", resources_dir=resources))
    assert after == before


def test_a_directory_of_files_is_tracked_file_by_file(tmp_path):
    root = tmp_path / "mirror"
    docs = root / "tiny" / "docs"
    docs.mkdir(parents=True)
    (docs / "a.jsonl").write_text(jsonl(DOCS[:3]), encoding="utf-8")
    (docs / "b.jsonl").write_text(jsonl(DOCS[3:]), encoding="utf-8")
    entry = spec(files={"docs": "docs"})
    before = step_provenance(entry, "docs", mirror=root)
    (docs / "b.jsonl").write_text(jsonl(DOCS[3:5]), encoding="utf-8")
    assert step_provenance(entry, "docs", mirror=root) != before
    (docs / "b.jsonl").write_text(jsonl(DOCS[3:]), encoding="utf-8")
    assert step_provenance(entry, "docs", mirror=root) == before
    (docs / "b.jsonl").rename(docs / "c.jsonl")
    assert step_provenance(entry, "docs", mirror=root) != before
    cache_file = tmp_path / "source-digests.json"
    step_provenance(entry, "docs", mirror=root, cache=DigestCache(cache_file))
    cached = json.loads(cache_file.read_text(encoding="utf-8"))["files"]
    assert sorted(Path(name).name for name in cached) == ["a.jsonl", "c.jsonl"]


def test_digests_are_cached_until_the_file_changes_even_with_its_old_mtime(tmp_path, monkeypatch):
    root = write_mirror(tmp_path / "mirror")
    hashed = []
    real_sha256_of = provenance.sha256_of
    monkeypatch.setattr(provenance, "sha256_of", lambda path: hashed.append(Path(path).name) or real_sha256_of(path))
    cache_file = tmp_path / "cache" / "source-digests.json"
    first = step_provenance(spec(), "docs", mirror=root, cache=DigestCache(cache_file))
    assert hashed == [FILES["docs"]]
    # a new process (a new cache object) reads the digest from the file
    assert step_provenance(spec(), "docs", mirror=root, cache=DigestCache(cache_file)) == first
    assert hashed == [FILES["docs"]]
    # same size, same mtime, other bytes: the ctime moved, so it is hashed again
    docs = root / "tiny" / FILES["docs"]
    stat = docs.stat()
    docs.write_text(jsonl(DOCS).replace("wind", "wink"), encoding="utf-8")
    os.utime(docs, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert docs.stat().st_size == stat.st_size and docs.stat().st_mtime_ns == stat.st_mtime_ns
    assert step_provenance(spec(), "docs", mirror=root, cache=DigestCache(cache_file)) != first
    assert hashed == [FILES["docs"]] * 2


def test_an_unreadable_digest_cache_is_rebuilt(tmp_path):
    root = write_mirror(tmp_path / "mirror")
    cache_file = tmp_path / "source-digests.json"
    cache_file.write_text("{not json", encoding="utf-8")
    expected = step_provenance(spec(), "docs", mirror=root)
    assert step_provenance(spec(), "docs", mirror=root, cache=DigestCache(cache_file)) == expected
    assert json.loads(cache_file.read_text(encoding="utf-8"))["files"]


# --------------------------------------------------------------------------- the workflow, for real

EXPERIMENT = "small"
SMALL_EXPERIMENT = {
    "title": "BM25 on a tiny collection (test)",
    "collections": ["tiny"],
    "querysets": ["title", "desc"],
    "analyzer": "porter",
    "models": {"bm25": {"family": "bm25", "label": "BM25", "grid": {"k1": 1.2, "b": 0.75}}},
    "baseline": "bm25",
    "select_by": "AP",
    "table_measures": ["AP"],
}
# one chunk job per query set (rule chunk: it retrieves and evaluates)
CHUNK = "chunk"
# what follows any changed evaluation: the table, the findings checked on it, the report
ENDS = {"table": 1, "findings": 1, "report": 1, "all": 1}


def tiny_config(mirror: Path, registry: str = "config/collections.yaml") -> dict:
    return {
        "registry": registry,
        "mirror": str(mirror),
        "resources": "resources",
        "num_shards": 2,
        "analyzers": {"porter": dict(ANALYZER)},
        "measures": ["AP"],
        "experiments": {EXPERIMENT: f"config/experiments/{EXPERIMENT}.yaml"},
    }


def set_up(root: Path) -> tuple[Path, Path]:
    """A workflow directory and a mirror of the tiny collection, the registry holding only that entry."""
    mirror = write_mirror(root / "mirror")
    workdir = make_workdir(root / "work", tiny_config(mirror), SMALL_EXPERIMENT)
    write_yaml({"tiny": ENTRY}, workdir / "config" / "collections.yaml")
    return workdir, mirror


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path]:
    """The tiny workflow run to the end once; each test works on a copy of it."""
    workdir, mirror = set_up(tmp_path_factory.mktemp("tracking"))
    assert_ok(snakemake(workdir))
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout
    return workdir, mirror


def copy_of(finished: tuple[Path, Path], root: Path) -> tuple[Path, Path]:
    """A copy of the finished run (its .snakemake records and the outputs' mtimes kept) and of its mirror."""
    workdir, mirror = finished
    shutil.copytree(workdir, root / "work", symlinks=True)
    shutil.copytree(mirror, root / "mirror")
    write_yaml(tiny_config(root / "mirror"), root / "work" / "config" / "config.yaml")
    return root / "work", root / "mirror"


def read_qrels(workdir: Path) -> list[tuple[str, str, int]]:
    table = pq.read_table(workdir / "results" / "tiny" / "qrels.parquet").to_pylist()
    return [(row["qid"], row["docno"], row["relevance"]) for row in table]


SLOW = [pytest.mark.slow, pytest.mark.xdist_group("test_source_tracking")]


def slow(test):
    for mark in SLOW:
        test = mark(test)
    return test


@slow
def test_a_copied_mirror_and_a_moved_registry_rerun_nothing(finished, tmp_path):
    """The same bytes read from another mirror directory, through a registry at another path: nothing to do."""
    workdir, mirror = copy_of(finished, tmp_path)  # the config now names the copy of the mirror
    moved = workdir / "config" / "registries" / "collections.yaml"
    moved.parent.mkdir()
    (workdir / "config" / "collections.yaml").rename(moved)
    write_yaml(tiny_config(mirror, registry="config/registries/collections.yaml"), workdir / "config" / "config.yaml")
    result = snakemake(workdir, "-n")
    assert_ok(result)
    assert "Nothing to be done" in result.stdout, result.stdout
    # and what the jobs would read is the new place: a collection step forced to run says so
    forced = snakemake(workdir, "-n", "-p", "--forcerun", "results/tiny/qrels.parquet", "results/tiny/qrels.parquet")
    assert_ok(forced)
    assert f"--mirror {mirror}" in forced.stdout and "config/registries/collections.yaml" in forced.stdout


@slow
def test_a_fixed_source_file_reruns_the_steps_reading_it_and_their_dependants(finished, tmp_path):
    workdir, mirror = copy_of(finished, tmp_path)
    qrels = mirror / "tiny" / FILES["qrels"]
    # a judgement corrected, and one of a document the collection does not have (kept, and logged)
    qrels.write_text(QRELS.replace("3 0 d6 1", "3 0 d4 1") + "2 0 d99 0\n", encoding="utf-8")
    result = snakemake(workdir, "-n")
    assert_ok(result)
    # the judgements, and the chunks evaluating with them: no shards, topics or index
    assert job_stats(result.stdout) == {"qrels": 1, CHUNK: 2, **ENDS}
    assert_ok(snakemake(workdir))
    assert ("3", "d4", 1) in read_qrels(workdir) and ("3", "d6", 1) not in read_qrels(workdir)
    log = (workdir / "logs" / "tiny" / "qrels.log").read_text(encoding="utf-8")
    assert "1 of 6 judged documents are not in collection 'tiny'" in log and "'d99'" in log, log
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout

    # a fixed document: the shards, and every step reading them (the qrels check their docnos against them)
    docs = mirror / "tiny" / FILES["docs"]
    docs.write_text(jsonl([{**doc, "body": doc["body"] + " wing"} if doc["docno"] == "d3" else doc for doc in DOCS]),
                    encoding="utf-8")
    result = snakemake(workdir, "-n")
    assert_ok(result)
    assert job_stats(result.stdout) == {"shard_documents": 1, "qrels": 1, "build_index": 1, CHUNK: 2, **ENDS}
    assert_ok(snakemake(workdir))
    shards = pq.read_table(workdir / "results" / "tiny" / "docs").to_pylist()
    assert next(row["text"] for row in shards if row["docno"] == "d3").endswith("flat plate wing")
    assert "Nothing to be done" in snakemake(workdir, "-n").stdout


@slow
def test_an_edited_query_set_reruns_that_query_set_only(finished, tmp_path):
    workdir, _ = copy_of(finished, tmp_path)
    registry = workdir / "config" / "collections.yaml"
    # read by no collection step; the report shows a digest of the whole entry, so it alone is remade
    write_yaml({"tiny": {**ENTRY, "description": "reworded"}}, registry)
    result = snakemake(workdir, "-n")
    assert_ok(result)
    assert job_stats(result.stdout) == {"report": 1, "all": 1}
    write_yaml({"tiny": {**ENTRY, "querysets": {"title": ["title"], "desc": ["title", "desc"]}}}, registry)
    result = snakemake(workdir, "-n")
    assert_ok(result)
    assert job_stats(result.stdout) == {"topics": 1, CHUNK: 1, **ENDS}
    assert job_outputs(result.stdout)["topics"] == ["results/tiny/topics/desc.parquet"]
    assert job_outputs(result.stdout)[CHUNK] == ["results/tiny/eval/porter/desc/chunk-all.parquet"]


# --------------------------------------------------------------------------- judged documents the collection lacks


def test_judged_documents_all_known_pass_silently(caplog):
    caplog.set_level(logging.INFO, logger="irgrid")
    assert check_judged_docnos("q.txt", "tiny", ["d1", "d2", "d1"], {"d1", "d2", "d3"}) == []
    assert "all 2 judged documents are in collection 'tiny'" in caplog.text


def test_a_few_unknown_judged_documents_are_logged_with_a_count_and_examples(caplog):
    known = {f"d{i}" for i in range(10)}
    judged = ["d1", "x1", "d2", "x2", "d2", "x1"]  # 4 distinct, 2 unknown: half is not more than half
    assert check_judged_docnos("q.txt", "tiny", judged, known) == ["x1", "x2"]
    assert "q.txt: 2 of 4 judged documents are not in collection 'tiny'" in caplog.text
    assert "'x1', 'x2'" in caplog.text


def test_mostly_unknown_judged_documents_are_an_error_naming_the_qrels_file():
    judged = ["d1", "x1", "x2", "x3", "x4", "x5", "x6", "x7"]
    with pytest.raises(InputFormatError) as raised:
        check_judged_docnos("/data/other/qrels.txt", "tiny", judged, {"d1", "d2"})
    message = str(raised.value)
    assert message.startswith("/data/other/qrels.txt: expected judgements of documents of collection 'tiny'")
    assert "7 of 8 judged documents not in it" in message and "'x1'" in message and "..." in message


def run_qrels_command(tmp_path: Path, qrels_text: str) -> tuple[subprocess.CompletedProcess, Path]:
    """`irgrid qrels --docs` on the tiny collection with ``qrels_text`` as its qrels file."""
    root = write_mirror(tmp_path / "mirror")
    (root / "tiny" / FILES["qrels"]).write_text(qrels_text, encoding="utf-8")
    write_yaml({"tiny": ENTRY}, tmp_path / "collections.yaml")
    entry = spec()
    write_document_shards(entry, resolve_files(entry, mirror=root, download=False), tmp_path / "docs", num_shards=2)
    out = tmp_path / "qrels.parquet"
    command = [sys.executable, "-m", "irgrid", "qrels", "--registry", str(tmp_path / "collections.yaml"),
               "--collection", "tiny", "--mirror", str(root), "--resources", str(tmp_path / "resources"),
               "--docs", str(tmp_path / "docs"), "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120), out


def test_qrels_command_logs_unknown_judged_documents_and_writes_them(tmp_path):
    result, out = run_qrels_command(tmp_path, QRELS + "3 0 d404 1\n")
    assert result.returncode == 0, result.stderr
    assert "1 of 6 judged documents are not in collection 'tiny'" in result.stderr and "'d404'" in result.stderr
    assert ("3", "d404", 1) in [tuple(row.values()) for row in pq.read_table(out).to_pylist()]


def test_qrels_command_refuses_the_qrels_of_another_collection(tmp_path):
    other = "".join(f"{qid} 0 {docno} 1\n" for qid in (1, 2, 3) for docno in ("CR-101", "CR-102", "d1"))
    result, out = run_qrels_command(tmp_path, other)
    assert result.returncode == 2, result.stderr
    qrels_path = tmp_path / "mirror" / "tiny" / FILES["qrels"]
    assert f"{qrels_path}: expected judgements of documents of collection 'tiny'" in result.stderr
    assert "2 of 3 judged documents not in it" in result.stderr
    assert not out.exists()


# The one entry that judges documents it lacks, on purpose: cacm_anserini names documents 1-999 as
# Anserini's qrels.cacm.txt does, without the zero padding of the pages' names (CACM-46 for the page
# CACM-0046), so that they count as relevant and never retrieved, as in Anserini's published figures
# (docs/anserini.md). Those are all it lacks.
JUDGED_BUT_ABSENT = {"cacm_anserini": lambda docno: int(docno.removeprefix("CACM-")) < 1000}


@pytest.mark.slow
@pytest.mark.mirror
def test_every_registry_entry_judges_only_documents_it_has():
    """The registry's collections, read from the mirror: no judged document is missing from its collection
    (but the unpadded numbers of cacm_anserini, which are all that it lacks)."""
    registry = load_registry(REPO_REGISTRY)
    checked = 0
    for collection_id, entry in registry.items():
        try:
            files = resolve_files(entry, download=False)
        except (CollectionNotAvailable, ChecksumError):
            continue
        known = {document.docno for document in iter_documents(entry, files)}
        judged = [qrel.docno for qrel in iter_qrels(entry, files)]
        assert judged, collection_id
        is_absent = JUDGED_BUT_ABSENT.get(collection_id, lambda docno: False)
        expected = [docno for docno in dict.fromkeys(judged) if is_absent(docno)]
        assert check_judged_docnos(str(files), collection_id, judged, known) == expected, collection_id
        checked += 1
    if not checked:
        pytest.skip("no registry collection in a local mirror (../shared/collections or IRGRID_MIRROR)")
