"""irgrid.jobs: where index builds run (never a rerun trigger), and the one-line failure summary.

- ``placement``: the config's ``dask`` section -> ``irgrid index`` options and what the job
  reserves (hand-computed walltimes); on a real ADI run, setting ``dask.scheduler`` or another
  thread count afterwards reruns nothing, while another analyzer does rebuild (the same check
  fails when the address is an ordinary param, as it was). Not ``--list-params-changes``: in
  Snakemake 9.27 it lists every output with recorded params, changed or not.
- ``failures``: the summary line read from a Snakemake log written here by hand, and from a real
  failed run (a mirror file whose checksum does not match) where the cause appears exactly once.
"""

from __future__ import annotations

import io
import shutil

import pytest
import yaml
from common import REPO, assert_ok, make_workdir, small_config, snakemake

from irgrid.errors import ConfigError
from irgrid.jobs.failures import first_failure, last_meaningful_line, report_first_failure
from irgrid.jobs.placement import DRIVER_MEM_MB, LOCAL_MEM_MB, index_placement, walltime_minutes

CLUSTER = {"jobqueue": "slurm", "cores": 2, "memory": "2GB", "walltime": "01:30:00", "workers": 2}


def test_local_placement_passes_nothing_and_keeps_the_threads():
    placement = index_placement({"scheduler": None})
    assert placement.arguments() == ""
    assert (placement.threads(2), placement.mem_mb()) == (2, LOCAL_MEM_MB)


def test_a_scheduler_or_a_jobqueue_cluster_leaves_the_job_one_core_and_one_gigabyte():
    scheduler = index_placement({"scheduler": "tcp://127.0.0.1:8786"})
    assert scheduler.arguments() == "--scheduler tcp://127.0.0.1:8786"
    cluster = index_placement({"scheduler": None, "cluster": CLUSTER})
    assert cluster.arguments().startswith("--dask-cluster '{") and '"workers": 2' in cluster.arguments()
    for placement in (scheduler, cluster):
        assert (placement.threads(2), placement.mem_mb()) == (1, DRIVER_MEM_MB) == (1, 1000)
    with pytest.raises(ConfigError, match="not both"):
        index_placement({"scheduler": "tcp://127.0.0.1:8786", "cluster": CLUSTER})


@pytest.mark.parametrize("walltime, minutes", [
    ("01:30:00", 90), ("1-02:00:00", 26 * 60), ("00:00:30", 1), ("45", 45), ("02:15", 135),
])
def test_walltime_minutes(walltime, minutes):
    assert walltime_minutes(walltime) == minutes


@pytest.mark.parametrize("walltime", ["1h", "01:xx:00", "1:2:3:4", ""])
def test_a_bad_walltime_is_a_config_error(walltime):
    with pytest.raises(ConfigError, match="walltime"):
        walltime_minutes(walltime)


def test_cluster_options_bind_to_the_given_host():
    from irgrid.jobs.dask_cluster import cluster_options

    options = cluster_options({**CLUSTER, "host": "127.0.0.1", "queue": "debug"})
    assert options["scheduler_options"] == {"host": "127.0.0.1"}
    assert options["worker_extra_args"] == ["--host", "127.0.0.1"]
    assert (options["cores"], options["memory"], options["queue"], options["processes"]) == (2, "2GB", "debug", 1)
    assert "scheduler_options" not in cluster_options(CLUSTER)


# --------------------------------------------------------------------------- never a rerun trigger

INDEX = "results/adi/index/porter"


@pytest.mark.slow
@pytest.mark.mirror
def test_scheduler_address_and_threads_rerun_nothing(tmp_path, mirror):  # noqa: F811
    config = small_config(mirror)
    workdir = make_workdir(tmp_path, config)
    assert_ok(snakemake(workdir, INDEX))

    def dry_run(*args):
        result = snakemake(workdir, "-n", INDEX, *args)
        assert_ok(result)
        return result.stdout

    for dask in ({"scheduler": "tcp://127.0.0.1:8786"}, {"cluster": CLUSTER}):
        (workdir / "config" / "config.yaml").write_text(yaml.safe_dump({**config, "dask": dask}), encoding="utf-8")
        assert "Nothing to be done" in dry_run(), dask
        assert "Nothing to be done" in dry_run("--set-threads", "build_index=1"), dask
    # the control: what the index does depend on still rebuilds it
    changed = {**config, "analyzers": {"porter": {**config["analyzers"]["porter"], "stemmer": "krovetz"}}}
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(changed), encoding="utf-8")
    assert "build_index" in dry_run()


# --------------------------------------------------------------------------- failure summary

RUN_LOG = """\
Select jobs to execute...
[Wed Nov 25 19:28:23 2026]
rule qrels:
    output: results/adi/qrels.parquet
    log: logs/adi/qrels.log
    jobid: 7
    reason: Missing output files: results/adi/qrels.parquet
    wildcards: collection=adi
    resources: tmpdir=/tmp
[Wed Nov 25 19:28:23 2026]
rule topics:
    jobid: 3
    wildcards: collection=adi, queryset=text
[Wed Nov 25 19:28:24 2026]
Error in rule qrels:
    message: None
    jobid: 7
    output: results/adi/qrels.parquet
    log: logs/adi/qrels.log (check log file(s) for error details)
    shell:
        irgrid qrels --out results/adi/qrels.parquet 2> logs/adi/qrels.log
        (command exited with non-zero exit code)
Error in rule topics:
    jobid: 3
    log: logs/adi/topics/text.log (check log file(s) for error details)
"""
QRELS_LOG = """\
2026-11-25 19:28:24,001 INFO irgrid.cli: reading ADI.REL
[########                                ] | 20% Completed | 0.1s
irgrid qrels: error: mirror/adi/ADI.REL:5: expected 'qid docno' columns, found '2 71'
"""


def test_first_failure_names_the_first_failed_job_its_wildcards_cause_and_log(tmp_path):
    (tmp_path / "logs" / "adi").mkdir(parents=True)
    (tmp_path / "logs" / "adi" / "qrels.log").write_text(QRELS_LOG, encoding="utf-8")
    failure = first_failure(RUN_LOG, tmp_path)
    assert failure.summary() == (
        "First failed job qrels (collection=adi): irgrid qrels: error: mirror/adi/ADI.REL:5: "
        "expected 'qid docno' columns, found '2 71' [log: logs/adi/qrels.log]"
    )
    (tmp_path / "run.log").write_text(RUN_LOG, encoding="utf-8")
    out = io.StringIO()
    assert report_first_failure([str(tmp_path / "run.log")], tmp_path, stream=out) == failure.summary()
    assert out.getvalue() == failure.summary() + "\n"
    # no log to read: said so, still one line
    shutil.rmtree(tmp_path / "logs")
    assert first_failure(RUN_LOG, tmp_path).cause.startswith("no cause in its log")


def test_last_meaningful_line_skips_traceback_frames_and_progress_bars():
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 3, in <module>\n'
        "    main()\n"
        "    ^^^^^^\n"
        "ValueError: ADI.ALL: sha256 is ebbaaa, the registry expects 7154f3\n"
        "\r[####    ] | 50% Completed | 1.0s\r[########] | 100% Completed | 2.0s\n"
    )
    assert last_meaningful_line(traceback) == "ValueError: ADI.ALL: sha256 is ebbaaa, the registry expects 7154f3"
    assert last_meaningful_line("indexed 82 documents\nwrote 4 files\n") == "wrote 4 files"
    assert last_meaningful_line("\n\n") is None


@pytest.mark.slow
@pytest.mark.mirror
def test_a_failed_run_ends_with_its_cause_once(tmp_path, mirror):  # noqa: F811
    """A mirror file changed behind the registry's back: the run's last line says which, once."""
    broken = tmp_path / "mirror" / "adi"
    shutil.copytree(mirror / "adi", broken)
    with open(broken / "ADI.ALL", "ab") as handle:
        handle.write(b"\n")
    workdir = make_workdir(tmp_path / "workflow", small_config(tmp_path / "mirror"))
    # the local profile, as `make run` uses it
    result = snakemake(workdir, "--profile", str(REPO / "config" / "profiles" / "local"), "results/adi/docs")
    assert result.returncode != 0
    lines = result.stdout.splitlines()
    summary = [line for line in lines if line.startswith("First failed job ")]
    assert len(summary) == 1, result.stdout
    assert summary[0].startswith("First failed job shard_documents (collection=adi): "), summary
    assert "ADI.ALL" in summary[0] and "sha256" in summary[0], summary
    assert summary[0].endswith("[log: logs/adi/docs.log]"), summary
    # the cause is printed once: not the whole log again
    assert sum("the registry expects" in line or "sha256" in line for line in lines) == 1, result.stdout
