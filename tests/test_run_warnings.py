"""Warnings that surface, inputs that are refused, ids that stay as written (issue 29, items 10, 11, 12, 14).

A job's warnings go to a file beside its log and are listed once at the end of the run and in the
report; empty collections are refused at the step that reads them, naming the raw file; ids keep
the form the raw file gives them in exports, and invisible characters in them are refused.
Expected values are written from the inputs by hand.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import yaml
from common import REPO

from irgrid.collections import CollectionSpec, write_document_shards, write_topics
from irgrid.collections.spec import load_registry
from irgrid.collections.writers import write_qrels
from irgrid.errors import ConfigError, InputFormatError
from tiny_index import TinyIndex

ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def jsonl_collection(root: Path, docs: str, queries: str = '{"qid": "1", "text": "wind"}\n',
                     qrels: str = "1 0 d1 1\n") -> tuple[CollectionSpec, dict[str, Path]]:
    root.mkdir(parents=True, exist_ok=True)
    files = {"docs": root / "docs.jsonl", "queries": root / "queries.jsonl", "qrels": root / "qrels.txt"}
    for role, text in (("docs", docs), ("queries", queries), ("qrels", qrels)):
        files[role].write_text(text, encoding="utf-8")
    spec = CollectionSpec.from_dict("mine", {"format": "jsonl", "files": {role: str(path) for role, path in
                                                                          files.items()}})
    return spec, files


def irgrid(*args: str, log: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as stderr:
        return subprocess.run([sys.executable, "-m", "irgrid", *args], stderr=stderr, stdout=subprocess.PIPE,
                              env={**ENV, **(extra_env or {})}, timeout=120)


# --------------------------------------------------------------------------- 10. warnings that surface


@pytest.mark.slow
def test_a_job_writes_its_warnings_beside_its_log_and_a_clean_rerun_removes_them(tmp_path):
    docs = '{"docno": "d1", "text": "wind"}\n{"docno": "d2", "text": "heat"}\n{"docno": "d3", "text": "air"}\n'
    spec, files = jsonl_collection(tmp_path / "data", docs, qrels="1 0 d1 1\n1 0 d2 0\n1 0 gone 1\n")
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"mine": {"format": "jsonl", "files": {r: str(p) for r, p in files.items()}}}))
    common = ["--registry", str(registry), "--collection", "mine", "--resources", str(tmp_path / "res")]
    assert irgrid("shard", *common, "--num-shards", "1", "--out", str(tmp_path / "docs"),
                  log=tmp_path / "logs" / "docs.log").returncode == 0
    log = tmp_path / "logs" / "mine" / "qrels.log"
    done = irgrid("qrels", *common, "--docs", str(tmp_path / "docs"), "--out", str(tmp_path / "qrels.parquet"), log=log)
    assert done.returncode == 0, log.read_text()
    beside = tmp_path / "logs" / "mine" / "qrels.warnings.jsonl"
    records = [json.loads(line) for line in beside.read_text().splitlines()]
    assert len(records) == 1
    # 1 of the 3 judged documents, 'gone', is not in the collection
    assert "1 of 3 judged documents" in records[0]["message"] and "'gone'" in records[0]["message"]
    assert records[0]["log"] == str(log) and records[0]["command"] == "qrels"
    assert not (tmp_path / "logs" / "docs.warnings.jsonl").exists()  # the shard job warned of nothing

    files["qrels"].write_text("1 0 d1 1\n1 0 d2 0\n", encoding="utf-8")
    assert irgrid("qrels", *common, "--docs", str(tmp_path / "docs"), "--out", str(tmp_path / "qrels.parquet"),
                  log=log).returncode == 0
    assert not beside.exists()  # the warning of the earlier run is gone with it


RUN_LOG = """Building DAG of jobs...
[Fri Nov 27 10:00:00 2026]
localrule qrels:
    input: results/mine/docs
    output: results/mine/qrels.parquet
    log: logs/mine/qrels.log
    jobid: 3
    wildcards: collection=mine
    resources: tmpdir=/tmp

[Fri Nov 27 10:00:01 2026]
localrule topics:
    output: results/mine/topics/text.parquet
    log: logs/mine/topics/text.log
    jobid: 4
    wildcards: collection=mine, queryset=text

[Fri Nov 27 10:00:02 2026]
localrule retrieve_chunk:
    log: logs/mine/runs/porter/text/chunk-a.log
    jobid: 5

[Fri Nov 27 10:00:03 2026]
localrule retrieve_chunk:
    log: logs/mine/runs/porter/text/chunk-b.log
    jobid: 6
"""


def write_warnings(path: Path, *messages: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"message": m, "log": str(path).replace(".warnings.jsonl", ".log"),
                                        "command": "x", "level": "WARNING"}) + "\n" for m in messages))


def test_the_end_of_the_run_lists_every_warning_of_its_jobs_once(tmp_path):
    from irgrid.jobs.job_warnings import report_run_warnings

    (tmp_path / "run.log").write_text(RUN_LOG)
    write_warnings(tmp_path / "logs/mine/qrels.warnings.jsonl", "qrels.txt: 1 of 3 judged documents are not in it")
    empty = "2 of 9 queries have no term of the collection after analysis"
    write_warnings(tmp_path / "logs/mine/runs/porter/text/chunk-a.warnings.jsonl", empty)
    write_warnings(tmp_path / "logs/mine/runs/porter/text/chunk-b.warnings.jsonl", empty)
    # a job of an earlier run, not of this one: not listed
    write_warnings(tmp_path / "logs/other/qrels.warnings.jsonl", "an old warning")
    lines = report_run_warnings(tmp_path / "run.log", ["experiment 'x': query set desc skipped"], workdir=tmp_path,
                                stream=open(os.devnull, "w"))
    text = "\n".join(lines)
    assert lines[0].startswith("3 warnings in this run")
    assert text.count("1 of 3 judged documents") == 1 and "logs/mine/qrels.log" in text
    assert text.count(empty) == 1 and "2 jobs" in text  # the same message of two chunks, once
    assert "query set desc skipped" in text and "an old warning" not in text


def test_a_run_without_warnings_prints_nothing(tmp_path, capsys):
    from irgrid.jobs.job_warnings import report_run_warnings

    (tmp_path / "run.log").write_text(RUN_LOG)
    assert report_run_warnings(tmp_path / "run.log", [], workdir=tmp_path) == []
    assert capsys.readouterr().err == ""


def test_the_report_lists_the_warnings_of_its_jobs(tmp_path, monkeypatch):
    from irgrid.report.html import render_report

    monkeypatch.chdir(tmp_path)
    write_warnings(tmp_path / "logs/mine/qrels.warnings.jsonl", "qrels.txt: judged <doc> 'gone' is not in it")
    write_warnings(tmp_path / "logs/elsewhere/qrels.warnings.jsonl", "a collection the report does not show")
    manifest = {"experiments": {}, "collections": {}, "indexes": {}, "benchmarks": {},
                "warnings": {"config": ["experiment 'x': its title names cranfield"], "logs": ["logs/mine"]}}
    page = render_report(manifest, tmp_path / "results")
    assert "id='warnings'" in page
    assert "judged &lt;doc&gt; &#x27;gone&#x27; is not in it" in page and "logs/mine/qrels.log" in page
    assert "its title names cranfield" in page
    assert "a collection the report does not show" not in page


def test_the_manifest_names_where_the_report_finds_warnings():
    from irgrid.report.manifest import warning_sources

    config = {"_experiments": {"e": {"collections": ["mine", "yours"]}},
              "_warnings": [{"experiment": "e", "message": "m"}, {"experiment": "gone", "message": "not run"}]}
    sources = warning_sources(config)
    assert sources["config"] == ["m"]
    assert set(sources["logs"]) == {"logs/mine", "logs/yours", "logs/tables/e", "logs/axioms/e",
                                    "logs/figures/e.warnings.jsonl"}


def test_a_url_without_sha256_is_refused_unless_the_entry_says_checksum_none(tmp_path):
    entry = {"format": "jsonl", "files": {"docs": "d.jsonl"}, "url": {"d.jsonl": "https://example.org/d.jsonl"}}
    with pytest.raises(ConfigError, match=r"'mine'.*d\.jsonl.*sha256.*checksum: none"):
        CollectionSpec.from_dict("mine", entry)
    assert CollectionSpec.from_dict("mine", {**entry, "checksum": "none"}).url == entry["url"]
    # the schema knows the key, and only that value
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"mine": {**entry, "checksum": "none"}}))
    assert "mine" in load_registry(registry)
    registry.write_text(yaml.safe_dump({"mine": {**entry, "checksum": "no"}}))
    with pytest.raises(ConfigError, match="checksum"):
        load_registry(registry)


def test_a_dangling_symlink_in_a_mirror_is_a_warning_naming_it(tmp_path, caplog, monkeypatch):
    from irgrid.collections import resolve_files

    monkeypatch.delenv("IRGRID_MIRROR", raising=False)
    first, second = tmp_path / "first" / "irgrid-test-link", tmp_path / "second" / "irgrid-test-link"
    for directory in (first, second):
        directory.mkdir(parents=True)
        (directory / "docs.jsonl").write_text('{"docno": "d1", "text": "a"}\n')
    (first / "docs.jsonl").unlink()
    (first / "docs.jsonl").symlink_to(tmp_path / "moved-away.jsonl")
    monkeypatch.setenv("IRGRID_MIRROR", str(tmp_path / "second"))
    spec = CollectionSpec.from_dict("link", {"format": "jsonl", "mirror": "irgrid-test-link",
                                             "files": {"docs": "docs.jsonl"}})
    with caplog.at_level(logging.WARNING, logger="irgrid.collections.sources"):
        found = resolve_files(spec, mirror=tmp_path / "first", resources_dir=tmp_path / "res")
    assert found["docs"] == second / "docs.jsonl"
    warned = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert any("dangling symbolic link" in m and str(first / "docs.jsonl") in m and "moved-away.jsonl" in m
               for m in warned), warned


def test_a_query_with_no_term_of_the_collection_is_a_warning(caplog):
    from irgrid.retrieve import retrieve_grid

    index = TinyIndex({"d1": ["wind", "tunnel"], "d2": ["heat"]})
    topics = pd.DataFrame({"qid": ["1", "2", "3"], "text": ["wind", "ocean waves", ""]})
    with caplog.at_level(logging.WARNING, logger="irgrid.retrieve"):
        run = retrieve_grid(index, topics, "bm25", [{"k1": 1.2, "b": 0.75}])[0]
    assert set(run["qid"]) == {"1"}
    warned = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warned) == 1 and "2 of 3 queries" in warned[0] and "'2'" in warned[0] and "'3'" in warned[0]


# --------------------------------------------------------------------------- 11. empty inputs, named


@pytest.mark.parametrize("docs", ["", "\n", '{"docno": "d1", "text": ""}\n{"docno": "d2", "text": "  "}\n'])
def test_a_collection_without_text_is_refused_at_the_shard_step_naming_the_raw_file(tmp_path, docs):
    spec, files = jsonl_collection(tmp_path / "data", docs)
    with pytest.raises(InputFormatError) as raised:
        write_document_shards(spec, files, tmp_path / "docs", 2)
    assert str(files["docs"]) in str(raised.value)
    assert not (tmp_path / "docs").exists()


def test_empty_queries_and_qrels_files_are_named_as_the_raw_files(tmp_path):
    spec, files = jsonl_collection(tmp_path / "data", '{"docno": "d1", "text": "wind"}\n', queries="", qrels="\n")
    with pytest.raises(InputFormatError) as raised:
        write_topics(spec, files, "text", tmp_path / "topics.parquet")
    assert str(files["queries"]) in str(raised.value) and ".parquet" not in str(raised.value)
    with pytest.raises(InputFormatError) as raised:
        write_qrels(spec, files, tmp_path / "qrels.parquet")
    assert str(files["qrels"]) in str(raised.value) and ".parquet" not in str(raised.value)


# --------------------------------------------------------------------------- 12. one line, at info


def test_judged_queries_of_other_splits_are_said_once_at_info(caplog):
    from irgrid.evaluation.evaluator import RunEvaluator

    qrels = pd.DataFrame({"qid": ["1", "2", "3"], "docno": ["d1", "d2", "d3"], "relevance": [1, 1, 1]})
    with caplog.at_level(logging.DEBUG, logger="irgrid.evaluation.evaluator"):
        RunEvaluator(qrels, ["AP"], topic_qids=["1"])
    said = [record for record in caplog.records if "not in the query set" in record.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.INFO


# --------------------------------------------------------------------------- 14. ids as written


def test_exported_runs_keep_the_query_ids_as_the_topics_file_writes_them(tmp_path):
    from irgrid.cli import main
    from irgrid.jobs.provenance import write_run_with_provenance

    spec, files = jsonl_collection(tmp_path / "data", '{"docno": "d1", "text": "wind"}\n',
                                   queries='{"qid": "001", "text": "wind"}\n{"qid": "A7", "text": "heat"}\n')
    topics = tmp_path / "topics.parquet"
    write_topics(spec, files, "text", topics)
    run = pa.table({"qid": ["1", "A7"], "docno": ["d1", "d1"], "rank": pa.array([1, 1], pa.int32()),
                    "score": [2.5, 1.0]})
    write_run_with_provenance(run, tmp_path / "run.parquet", {"topics": str(topics)})
    assert main(["export-trec", "--run", str(tmp_path / "run.parquet"), "--out", str(tmp_path / "run.trec")]) == 0
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["001", "A7"]


@pytest.mark.parametrize("bad", ["\x00", "\u200b", "\u200c", "\u200d", "\ufeff", "\x07"])
def test_control_and_zero_width_characters_in_ids_are_refused_with_file_and_line(tmp_path, bad):
    docs = '{"docno": "d1", "text": "a"}\n' + json.dumps({"docno": f"d{bad}2", "text": "b"}) + "\n"
    spec, files = jsonl_collection(tmp_path / "data", docs)
    with pytest.raises(InputFormatError, match=rf"{files['docs']}:2\b"):
        write_document_shards(spec, files, tmp_path / "docs", 1)
    queries = json.dumps({"qid": f"1{bad}", "text": "wind"}) + "\n"
    spec, files = jsonl_collection(tmp_path / "data2", '{"docno": "d1", "text": "a"}\n', queries=queries)
    with pytest.raises(InputFormatError, match=rf"{files['queries']}:1\b"):
        write_topics(spec, files, "text", tmp_path / "topics.parquet")
    spec, files = jsonl_collection(tmp_path / "data3", '{"docno": "d1", "text": "a"}\n', qrels=f"1 0 d{bad}1 1\n")
    with pytest.raises(InputFormatError, match=rf"{files['qrels']}:1\b"):
        write_qrels(spec, files, tmp_path / "qrels.parquet")


def test_a_trec_docno_with_a_nul_is_refused_with_file_and_line(tmp_path):
    from irgrid.collections.readers import iter_documents

    docs = tmp_path / "docs.trec"
    docs.write_text("<DOC>\n<DOCNO>A1</DOCNO>\n<TEXT>a</TEXT>\n</DOC>\n<DOC>\n<DOCNO>A\x002</DOCNO>\n<TEXT>b</TEXT>\n"
                    "</DOC>\n", encoding="utf-8")
    spec = CollectionSpec.from_dict("t", {"format": "trec", "files": {"docs": str(docs)}})
    with pytest.raises(InputFormatError, match=rf"{docs}:[56]\b"):
        write_document_shards(spec, {"docs": docs}, tmp_path / "shards", 1)
    assert [d.docno for d in iter_documents(spec, {"docs": docs})][:1] == ["A1"]


def interrupted_twice(args):
    try:
        raise KeyboardInterrupt
    finally:
        raise KeyboardInterrupt  # the second Ctrl-C, while the first one's clean-up runs


def test_a_double_interrupt_is_one_line(monkeypatch, capsys):
    import irgrid.cli as cli

    monkeypatch.setattr(cli, "cmd_check_lock", interrupted_twice)
    handler = signal.getsignal(signal.SIGINT)
    try:
        assert cli.main(["check-lock"]) == 130
    finally:
        signal.signal(signal.SIGINT, handler)  # main ends the process on a further Ctrl-C: not pytest's
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["irgrid check-lock: interrupted"], err


def _sigint_at_its_default() -> None:
    """A child's SIGINT as a terminal's Ctrl-C finds it: a process inherits an ignored SIGINT from
    its parent (POSIX), and Python then leaves it ignored; a test worker's own disposition is
    whatever earlier tests and libraries in that worker left."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_two_ctrl_c_of_a_running_command_end_in_one_line(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "irgrid", "report", "--manifest", "-", "--out",
                                str(tmp_path / "r.html")], stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                               preexec_fn=_sigint_at_its_default)
    time.sleep(3)  # imports done, reading its standard input
    process.send_signal(signal.SIGINT)
    time.sleep(0.05)
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    lines = [line for line in err.decode().splitlines() if line.strip()]
    assert lines == ["irgrid report: interrupted"], err.decode()
    # 130, or killed by the second SIGINT itself when it comes as the interpreter exits: both say "interrupted"
    assert process.returncode in (130, -signal.SIGINT)


# --------------------------------------------------------------------------- the whole run


@pytest.mark.slow
def test_a_run_ends_with_its_warnings_and_its_report_lists_them(tmp_path):
    from common import SMALL_EXPERIMENT, assert_ok, make_workdir, small_config, snakemake, write_yaml

    data = tmp_path / "data"
    data.mkdir()
    (data / "docs.jsonl").write_text("".join(json.dumps({"docno": f"d{i}", "text": text}) + "\n" for i, text in
                                             enumerate(["wind tunnel", "boundary layer", "heat transfer", "wind heat",
                                                        "layer of heat", "tunnel boundary"], start=1)))
    (data / "queries.jsonl").write_text("".join(json.dumps({"qid": qid, "text": text}) + "\n" for qid, text in
                                                [("1", "wind"), ("2", "heat"), ("3", "boundary"), ("4", "ocean")]))
    # 'gone' is 1 of the 6 judged documents and not in the collection; query 4's only word is in no document
    (data / "qrels.txt").write_text("1 0 d1 1\n2 0 d3 1\n2 0 d5 1\n3 0 d2 1\n3 0 d6 1\n4 0 gone 1\n")
    registry = tmp_path / "mine.yaml"
    write_yaml({"mine": {"format": "jsonl", "files": {role: str(data / name) for role, name in
                                                       [("docs", "docs.jsonl"), ("queries", "queries.jsonl"),
                                                        ("qrels", "qrels.txt")]}}}, registry)
    config = small_config(None)
    config["registry"] = str(registry)
    experiment = {**SMALL_EXPERIMENT, "title": "BM25 and QL on my data", "collections": ["mine"]}
    workdir = make_workdir(tmp_path / "work", config, experiment)
    result = snakemake(workdir, "--cores", "1")
    assert_ok(result)
    tail = result.stdout[result.stdout.rindex("warnings in this run"):]
    assert tail.count("1 of 6 judged documents are not in collection 'mine'") == 1, tail
    assert tail.count("1 of 4 queries have no term of the collection after analysis") == 1, tail
    page = (workdir / "results" / "report.html").read_text(encoding="utf-8")
    warnings = page[page.index("id='warnings'"):]
    assert "1 of 6 judged documents are not in collection" in warnings and "logs/mine/qrels.log" in warnings
    assert "1 of 4 queries have no term of the collection after analysis" in warnings


def test_a_python_warning_is_kept_as_its_text_and_category(tmp_path, monkeypatch):
    import warnings

    from irgrid.jobs.job_warnings import WARNINGS_FILE_ENV, install_warning_file, read_warnings

    monkeypatch.setenv(WARNINGS_FILE_ENV, str(tmp_path / "job.warnings.jsonl"))
    logger = logging.getLogger("py.warnings")
    handler = install_warning_file("table", [], logger=logger)
    try:
        warnings.warn("k=5 folds but only 4 queries: using leave-one-out (4 folds)", UserWarning, stacklevel=1)
    finally:
        logger.removeHandler(handler)
        logging.captureWarnings(False)
    assert [record["message"] for record in read_warnings(tmp_path / "job.warnings.jsonl")] == [
        "k=5 folds but only 4 queries: using leave-one-out (4 folds) (UserWarning)"]


def test_retrieve_with_trec_writes_the_query_ids_as_the_topics_file_writes_them(tmp_path):
    from irgrid.analysis import Analyzer
    from irgrid.cli import main
    from irgrid.index import build_index

    docs = '{"docno": "d1", "text": "wind tunnel"}\n{"docno": "d2", "text": "heat"}\n'
    spec, files = jsonl_collection(tmp_path / "data", docs,
                                   queries='{"qid": "007", "text": "wind"}\n{"qid": "12", "text": "heat"}\n')
    write_document_shards(spec, files, tmp_path / "docs", 1)
    write_topics(spec, files, "text", tmp_path / "topics.parquet")
    build_index(tmp_path / "docs", tmp_path / "index", Analyzer.from_dict({"tokenizer": "lucene"}), num_buckets=1,
                scheduler="synchronous")
    assert main(["retrieve", "--index", str(tmp_path / "index"), "--topics", str(tmp_path / "topics.parquet"),
                 "--family", "bm25", "--params", "k1~1.2_b~0.75", "--trec", "--out", str(tmp_path / "run.parquet")]) == 0
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert [line.split()[:3] for line in lines] == [["007", "Q0", "d1"], ["12", "Q0", "d2"]]
