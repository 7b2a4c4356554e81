"""Errors a user meets are one line naming the file, the key or line, and what was expected.

Issue 14, item 11: a misspelled config key, an empty grid list, a parameter out of range, a stop-list
typo, a repeated docno, a full disk or an unwritable directory, and qrels that judge nothing were
tracebacks or schema dumps, or named the wrong file.
"""

from __future__ import annotations

import copy
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from common import REGISTRY, REPO

from irgrid.cli import main
from irgrid.collections import CollectionSpec, write_document_shards, write_topics
from irgrid.config import load_config
from irgrid.errors import ConfigError, InputFormatError
from irgrid.evaluation.evaluator import RunEvaluator

ANALYZER = {"tokenizer": "lucene", "lowercase": True, "possessive": True, "stemmer": "porter", "stopwords": "none"}
EXPERIMENT = {
    "collections": ["adi"],
    "analyzer": "porter",
    "models": {"bm25": {"family": "bm25", "grid": {"k1": [0.9], "b": 0.75}},
               "ql": {"family": "ql_dirichlet", "grid": {"mu": [500]}}},
    "baseline": "ql",
}


def config_in(tmp_path: Path, experiment: dict | None = None, **changes) -> dict:
    """A config whose experiment is a file in ``tmp_path`` (errors must name that file)."""
    path = tmp_path / "experiments" / "small.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(experiment or copy.deepcopy(EXPERIMENT)), encoding="utf-8")
    config = {"registry": str(REGISTRY), "analyzers": {"porter": dict(ANALYZER)}, "measures": ["AP", "P@10"],
              "experiments": {"small": str(path)}}
    config.update(changes)
    return config


def one_line(error: Exception) -> str:
    message = str(error)
    assert "\n" not in message, message
    return message


# --------------------------------------------------------------------------- the configuration


def test_misspelled_top_level_key_is_one_line_with_the_closest_key(tmp_path):
    config = config_in(tmp_path)
    config["num_shard"] = 2
    with pytest.raises(ConfigError) as error:
        load_config(config, source="config/config.yaml")
    message = one_line(error.value)
    assert message.startswith("config/config.yaml: unknown top-level key 'num_shard' (did you mean 'num_shards'?")
    assert len(message) < 400  # the key list, not the schema


def test_misspelled_nested_key_names_its_place(tmp_path):
    config = config_in(tmp_path, analyzers={"porter": {**ANALYZER, "stemer": "porter"}})
    del config["analyzers"]["porter"]["stemmer"]
    with pytest.raises(ConfigError) as error:
        load_config(config, source="config/config.yaml")
    assert "'analyzers/porter'" in one_line(error.value)
    assert "did you mean 'stemmer'?" in str(error.value)


def test_a_key_like_no_other_gets_no_suggestion(tmp_path):
    config = config_in(tmp_path)
    config["zzzzzz"] = 1
    with pytest.raises(ConfigError) as error:
        load_config(config)
    assert "did you mean" not in one_line(error.value)
    assert "known keys: registry" in str(error.value)


def test_empty_grid_list_names_the_experiment_file_model_and_key(tmp_path):
    experiment = copy.deepcopy(EXPERIMENT)
    experiment["models"]["ql"]["grid"]["mu"] = []
    config = config_in(tmp_path, experiment)
    with pytest.raises(ConfigError) as error:
        load_config(config)
    message = one_line(error.value)
    assert message.startswith(f"{tmp_path / 'experiments' / 'small.yaml'}: ")
    assert "'models/ql/grid/mu'" in message
    assert "should be non-empty" in message
    assert "is not valid under any of the given schemas" not in message


@pytest.mark.parametrize("model, grid, parameter", [("ql", {"mu": [500, -5]}, "mu=-5"),
                                                    ("bm25", {"k1": [0.9], "b": [1.5]}, "b=1.5")])
def test_parameter_out_of_range_names_experiment_file_model_and_parameter(tmp_path, model, grid, parameter):
    experiment = copy.deepcopy(EXPERIMENT)
    experiment["models"][model]["grid"] = grid
    with pytest.raises(ConfigError) as error:
        load_config(config_in(tmp_path, experiment))
    message = one_line(error.value)
    assert message.startswith(f"{tmp_path / 'experiments' / 'small.yaml'}: models/{model}/grid: ")
    assert f"parameter {parameter} is outside" in message


@pytest.mark.parametrize("stopwords, hint", [("smrt", "did you mean 'smart'?"), ("no/such/file.txt", "")])
def test_stop_list_typo_fails_at_config_load(tmp_path, stopwords, hint):
    config = config_in(tmp_path, analyzers={"porter": {**ANALYZER, "stopwords": stopwords}})
    with pytest.raises(ConfigError) as error:
        load_config(config, source="config/config.yaml")
    message = one_line(error.value)
    assert message.startswith(f"config/config.yaml: analyzers/porter/stopwords: stop list {stopwords!r}")
    assert hint in message


def test_a_stop_list_file_that_exists_is_accepted(tmp_path):
    words = tmp_path / "stop.txt"
    words.write_text("the\na\n", encoding="utf-8")
    load_config(config_in(tmp_path, analyzers={"porter": {**ANALYZER, "stopwords": str(words)}}))


@pytest.mark.slow
def test_stop_list_typo_stops_snakemake_before_the_old_index_is_touched(tmp_path):
    shutil.copytree(REPO / "config", tmp_path / "config")
    config = {"registry": "config/collections.yaml", "measures": ["AP", "P@10"],
              "analyzers": {"porter": {**ANALYZER, "stopwords": "smrt"}},
              "experiments": {"small": "config/experiments/small.yaml"}}
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (tmp_path / "config" / "experiments" / "small.yaml").write_text(yaml.safe_dump(EXPERIMENT), encoding="utf-8")
    index = tmp_path / "results" / "adi" / "index" / "porter"
    index.mkdir(parents=True)
    (index / "stats.json").write_text("{}", encoding="utf-8")  # the previous good index
    for extra in (["-n"], ["--cores", "1", "--forcerun", "build_index"]):
        result = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
                                 "--directory", str(tmp_path), *extra], cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=300)
        assert result.returncode != 0, result.stdout
        assert "analyzers/porter/stopwords: stop list 'smrt'" in result.stdout, result.stdout
        assert (index / "stats.json").read_text(encoding="utf-8") == "{}"


# --------------------------------------------------------------------------- repeated ids


def smart_collection(tmp_path: Path, docs: str) -> tuple[CollectionSpec, dict[str, Path]]:
    (tmp_path / "docs.all").write_text(docs, encoding="utf-8")
    (tmp_path / "queries.qry").write_text(".I 1\n.W\nfirst\n.I 2\n.W\nsecond\n.I 1\n.W\nthird\n", encoding="utf-8")
    spec = CollectionSpec.from_dict("mini", {"format": "smart", "files": {"docs": "docs.all", "queries": "queries.qry"}})
    return spec, {"docs": tmp_path / "docs.all", "queries": tmp_path / "queries.qry"}


def test_repeated_docno_is_reported_at_the_source_file_and_line(tmp_path):
    spec, files = smart_collection(tmp_path, ".I 1\n.W\none\n.I 2\n.W\ntwo\n\n.I 01\n.W\nthree\n")
    with pytest.raises(InputFormatError) as error:
        write_document_shards(spec, files, tmp_path / "results" / "docs", 2)
    assert (error.value.path, error.value.line) == (str(files["docs"]), 8)
    assert "document '1' is also on line 1" in str(error.value)
    assert "results" not in str(error.value)
    assert not (tmp_path / "results" / "docs").exists()


def test_repeated_query_id_is_reported_at_the_source_file_and_line(tmp_path):
    spec, files = smart_collection(tmp_path, ".I 1\n.W\none\n")
    with pytest.raises(InputFormatError) as error:
        write_topics(spec, files, "text", tmp_path / "topics.parquet")
    assert (error.value.path, error.value.line) == (str(files["queries"]), 7)
    assert "query '1' is also on line 1" in str(error.value)


def test_repeated_trec_docno_across_files_names_both_files(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.sgml").write_text("<DOC>\n<DOCNO> X-1 </DOCNO>\n<TEXT>a</TEXT>\n</DOC>\n", encoding="utf-8")
    (tmp_path / "docs" / "b.sgml").write_text("\n<DOC>\n<DOCNO> X-1 </DOCNO>\n</DOC>\n", encoding="utf-8")
    spec = CollectionSpec.from_dict("t", {"format": "trec", "files": {"docs": "docs"}})
    with pytest.raises(InputFormatError) as error:
        write_document_shards(spec, {"docs": tmp_path / "docs"}, tmp_path / "out", 1)
    assert (error.value.path, error.value.line) == (str(tmp_path / "docs" / "b.sgml"), 2)
    assert f"is also on {tmp_path / 'docs' / 'a.sgml'}:1" in str(error.value)


# --------------------------------------------------------------------------- the command line and the OS


def test_unwritable_output_is_one_line_naming_the_path(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    out = blocker / "sub"
    code = main(["synthesize", "--docs", "1000", "--vocabulary", "2000", "--queries", "5", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err == [f"irgrid synthesize: error: {out / 'docs'}: Not a directory"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere: no EACCES to provoke")
def test_permission_denied_is_one_line_naming_the_path(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code = main(["synthesize", "--docs", "1000", "--vocabulary", "2000", "--queries", "5",
                     "--out", str(locked / "out")])
    finally:
        locked.chmod(0o700)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1
    assert str(locked) in err[0] and "Permission denied" in err[0]


def test_a_write_cut_short_by_the_os_is_one_line_naming_the_output(tmp_path):
    """A real failed write inside pyarrow (file size limit, EFBIG): no traceback, the output named."""
    out = tmp_path / "synthetic"

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    result = subprocess.run([sys.executable, "-m", "irgrid", "synthesize", "--docs", "20000", "--vocabulary", "5000",
                             "--queries", "5", "--out", str(out)], preexec_fn=limit_file_size,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if "irgrid synthesize: error:" in line]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert str(out) in lines[0]
    assert "file size limit" in lines[0]
    # nothing half-written under the final names
    assert not (out / "topics.parquet").exists()


def mounted_tmpfs(tmp_path: Path, options: str):
    """A real tmpfs mounted with ``options`` (needs root and mount permission: skipped elsewhere)."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


@pytest.fixture
def small_file_system(tmp_path):
    yield from mounted_tmpfs(tmp_path, "size=256k")


@pytest.fixture
def read_only_file_system(tmp_path):
    yield from mounted_tmpfs(tmp_path, "ro,size=64k")


def test_an_unwritable_directory_is_one_line_naming_it_even_for_root(read_only_file_system, capsys):
    out = read_only_file_system / "synthetic"
    code = main(["synthesize", "--docs", "100", "--vocabulary", "500", "--queries", "2", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"irgrid synthesize: error: {out}") and "Read-only file system" in err[0], err[0]


@pytest.mark.slow
def test_a_full_disk_is_one_line_naming_the_output(small_file_system):
    out = small_file_system / "synthetic"
    result = subprocess.run([sys.executable, "-m", "irgrid", "synthesize", "--docs", "20000", "--vocabulary", "5000",
                             "--queries", "5", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if "irgrid synthesize: error:" in line]
    assert len(lines) == 1, result.stderr
    assert str(out) in lines[0] and "No space left on device" in lines[0], lines[0]
    assert not (out / "topics.parquet").exists()


def test_disk_full_inside_pyarrow_names_the_outputs(tmp_path, capsys, monkeypatch):
    # pyarrow's own wording of ENOSPC: no filename attribute, the errno only in the text
    def full(*args, **kwargs):
        raise OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")

    import irgrid.collections.synthetic

    monkeypatch.setattr(irgrid.collections.synthetic.pq, "write_table", full)
    out = tmp_path / "out"
    code = main(["synthesize", "--docs", "100", "--vocabulary", "500", "--queries", "2", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"irgrid synthesize: error: writing {out}: ")
    assert "No space left on device" in err[0] and "free space" in err[0]


# --------------------------------------------------------------------------- qrels that judge nothing


def write_table(columns: dict, path: Path) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


def evaluation_inputs(tmp_path: Path, qrels_qids: list[str], topic_qids: list[str]) -> list[str]:
    qrels = write_table({"qid": pa.array(qrels_qids, pa.string()), "docno": pa.array(["d1"] * len(qrels_qids),
                                                                                      pa.string()),
                         "relevance": pa.array([1] * len(qrels_qids), pa.int32())}, tmp_path / "qrels.parquet")
    topics = write_table({"qid": pa.array(topic_qids, pa.string()), "text": pa.array(["x"] * len(topic_qids),
                                                                                      pa.string())},
                         tmp_path / "topics.parquet")
    run = write_table({"qid": ["1"], "docno": ["d1"], "rank": pa.array([1], pa.int32()), "score": [1.0]},
                      tmp_path / "run.parquet")
    return ["evaluate", "--run", str(run), "--qrels", str(qrels), "--topics", str(topics),
            "--measures", '["AP"]', "--out", str(tmp_path / "eval.parquet")]


@pytest.mark.parametrize("qrels_qids, topic_qids, expected", [
    ([], ["1"], "expected at least one judgement"),
    (["7", "8"], ["1", "2"], "expected judgements for at least one query of the query set"),
    (["1"], [], "expected judgements for at least one query of the query set"),
])
def test_qrels_judging_nothing_run_is_an_input_error_naming_the_qrels(tmp_path, capsys, qrels_qids, topic_qids,
                                                                         expected):
    code = main(evaluation_inputs(tmp_path, qrels_qids, topic_qids))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"irgrid evaluate: error: {tmp_path / 'qrels.parquet'}: {expected}")
    assert not (tmp_path / "eval.parquet").exists()


def test_evaluator_without_topics_refuses_empty_qrels():
    empty = pd.DataFrame({"qid": pd.Series([], dtype=str), "docno": pd.Series([], dtype=str),
                          "relevance": pd.Series([], dtype=int)})
    with pytest.raises(InputFormatError, match="qrels.parquet: expected at least one judgement"):
        RunEvaluator(empty, ["AP"], qrels_source="qrels.parquet")


def test_misspelled_registry_key_gets_the_closest_key(tmp_path):
    from irgrid.collections import load_registry

    registry = yaml.safe_load(REGISTRY.read_text(encoding="utf-8"))
    registry["adi"]["doc_field"] = registry["adi"].pop("doc_fields")
    path = tmp_path / "collections.yaml"
    path.write_text(yaml.safe_dump(registry), encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_registry(path)
    assert one_line(error.value).startswith(f"{path}: unknown key at 'adi': 'doc_field' (did you mean 'doc_fields'?")
