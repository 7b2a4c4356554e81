"""Leftovers of killed jobs: temporaries named by host and pid, removed once their process is dead; stale locks.

Issue 14, item 12: ``index/...tmp-*`` directories and ``.*.parquet.*.tmp`` files of killed jobs were
never cleaned, and after a kill ``make run`` stopped on Snakemake's stale lock with a hint to
``--unlock`` even while another run was really active. The processes here are real and are really
killed with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from irgrid.cli import main
from irgrid.housekeeping import check_lock, clean_leftovers, find_leftovers, snakemake_processes
from irgrid.io import atomic_path, parse_leftover, temporary_dir_for, temporary_name, this_host, write_text

# A child that starts an atomic write of TARGET, writes half of it, says so, and waits to be killed.
WRITER = textwrap.dedent("""
    import sys, time
    from irgrid.io import atomic_path, temporary_dir_for
    target, kind = sys.argv[1], sys.argv[2]
    if kind == "file":
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"PAR1 half a parquet file")
            print(tmp, flush=True)
            time.sleep(120)
    else:
        tmp = temporary_dir_for(target)
        (tmp / "part-0000.parquet").write_bytes(b"half")
        print(tmp, flush=True)
        time.sleep(120)
""")


def start_writer(target: Path, kind: str = "file") -> tuple[subprocess.Popen, Path]:
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(target), kind], stdout=subprocess.PIPE, text=True)
    line = child.stdout.readline().strip()
    assert line, "the writer did not start"
    return child, Path(line)


def kill_9(child: subprocess.Popen) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL


def test_temporary_names_say_host_and_pid(tmp_path):
    target = tmp_path / "k1~0.9_b~0.4.parquet"
    leftover = parse_leftover(temporary_name(target))
    assert leftover is not None
    assert (leftover.target, leftover.host, leftover.pid, leftover.kind) == (target, this_host(), os.getpid(), "tmp")
    assert temporary_name(target).name.startswith(".k1~0.9_b~0.4.parquet.")
    assert parse_leftover(target) is None
    assert parse_leftover(tmp_path / ".x.parquet.abcd1234.tmp") is None  # an older, unowned name


def test_a_killed_writer_leaves_a_temporary_the_next_write_of_that_output_removes(tmp_path):
    target = tmp_path / "runs" / "bm25" / "k1~0.9.parquet"
    child, tmp = start_writer(target)
    assert tmp.exists() and parse_leftover(tmp).pid == child.pid
    kill_9(child)
    assert tmp.exists() and not target.exists()  # nothing taken for a result

    neighbour = target.with_name("k1~1.2.parquet")
    write_text("other", neighbour)  # another output's write leaves it alone
    assert tmp.exists()

    write_text("complete", target)
    assert not tmp.exists()
    assert target.read_text() == "complete"
    assert sorted(p.name for p in target.parent.iterdir()) == ["k1~0.9.parquet", "k1~1.2.parquet"]


def test_a_killed_directory_build_is_removed_by_the_next_build_of_it(tmp_path):
    target = tmp_path / "index" / "porter"
    child, tmp = start_writer(target, "dir")
    kill_9(child)
    assert tmp.is_dir()
    fresh = temporary_dir_for(target)
    assert not tmp.exists() and fresh.is_dir()


def test_a_live_writer_keeps_its_temporary(tmp_path):
    target = tmp_path / "eval.parquet"
    child, tmp = start_writer(target)
    try:
        write_text("mine", tmp_path / "other.parquet")
        with atomic_path(target) as mine:
            mine.write_text("x")
        assert tmp.exists()  # its process still runs: it is not a leftover
        report = clean_leftovers(tmp_path)
        assert [item.path for item in report.in_use] == [tmp] and report.removed == []
    finally:
        kill_9(child)
    report = clean_leftovers(tmp_path)
    assert report.removed == [tmp] and not tmp.exists()


def test_clean_leftovers_command_removes_dead_ones_and_reports_others(tmp_path, capsys):
    results = tmp_path / "results"
    killed = []
    for target, kind in [(results / "adi" / "docs", "dir"), (results / "adi" / "qrels.parquet", "file")]:
        child, tmp = start_writer(target, kind)
        kill_9(child)
        killed.append(tmp)
    elsewhere = results / "adi" / f".topics.parquet.node7~{os.getpid()}~00ff00ff.tmp"
    elsewhere.write_text("a node's temporary")
    older = results / "adi" / ".text.parquet.k2j4x_9a.tmp"
    older.write_text("an unowned temporary")
    keep = results / "adi" / "topics" / "text.parquet"
    keep.parent.mkdir(parents=True)
    keep.write_text("a result")

    assert main(["clean-leftovers", str(results), "--dry-run"]) == 0
    assert all(path.exists() for path in killed)
    assert main(["clean-leftovers", str(results)]) == 0
    out = capsys.readouterr().out
    assert not any(path.exists() for path in killed)
    assert elsewhere.exists() and older.exists() and keep.exists()
    assert f"kept {elsewhere}: made on host node7" in out
    assert f"unowned {older}" in out
    assert "2 leftovers removed" in out

    assert main(["clean-leftovers", str(results), "--unowned"]) == 0
    assert not older.exists() and elsewhere.exists() and keep.exists()


def test_find_leftovers_does_not_look_inside_a_temporary_directory(tmp_path):
    outer = temporary_name(tmp_path / "index")
    outer.mkdir()
    (temporary_name(outer / "docs.parquet")).write_text("inside")
    ours, unowned = find_leftovers(tmp_path)
    assert [item.path for item in ours] == [outer] and unowned == []


# --------------------------------------------------------------------------- Snakemake's lock


def test_no_lock_nothing_to_do(tmp_path, capsys):
    assert main(["check-lock", "--directory", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""


def test_a_lock_no_process_holds_is_removed(tmp_path, capsys):
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("results/x")
    (locks / "0.output.lock").write_text("results/y")
    assert main(["check-lock", "--directory", str(tmp_path)]) == 0
    assert list(locks.iterdir()) == []
    assert "removed a stale Snakemake lock" in capsys.readouterr().err


def test_a_lock_held_by_a_running_snakemake_stays_and_names_its_pid(tmp_path, capsys):
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("results/x")
    # a process whose argv[0] is "snakemake", working in tmp_path, as a real run would be
    holder = subprocess.Popen(["bash", "-c", "exec -a snakemake sleep 60"], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 10
        while not snakemake_processes(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert main(["check-lock", "--directory", str(tmp_path)]) == 2
        assert f"(pid {holder.pid}" in capsys.readouterr().err
        assert (locks / "0.input.lock").exists()
        # a snakemake in another directory does not hold this one's lock
        other = tmp_path / "other"
        (other / ".snakemake" / "locks").mkdir(parents=True)
        (other / ".snakemake" / "locks" / "0.input.lock").write_text("results/x")
        assert check_lock(other, remove_stale=False).stale
    finally:
        kill_9(holder)
    assert main(["check-lock", "--directory", str(tmp_path)]) == 0
    assert not (locks / "0.input.lock").exists()


@pytest.mark.slow
def test_real_snakemake_killed_leaves_a_lock_check_lock_tells_live_from_stale(tmp_path):
    (tmp_path / "Snakefile").write_text(textwrap.dedent("""
        rule all:
            input: "done.txt"
        rule slow:
            output: "done.txt"
            shell: "sleep 60 && touch {output}"
    """))
    command = [sys.executable, "-m", "snakemake", "--cores", "1"]
    run = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list((tmp_path / ".snakemake" / "locks").glob("*.lock")) and time.monotonic() < deadline:
            time.sleep(0.2)
        state = check_lock(tmp_path)
        assert state.locks and [p.pid for p in state.holders] == [run.pid] and not state.removed
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
    assert list((tmp_path / ".snakemake" / "locks").glob("*.lock"))  # what the kill left
    (tmp_path / "Snakefile").write_text((tmp_path / "Snakefile").read_text().replace("sleep 60", "true"))
    locked = subprocess.run([*command, "--rerun-incomplete"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert locked.returncode != 0 and "cannot be locked" in locked.stdout + locked.stderr
    state = check_lock(tmp_path)
    assert state.removed and not list((tmp_path / ".snakemake" / "locks").glob("*.lock"))
    rerun = subprocess.run([*command, "--rerun-incomplete"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert (tmp_path / "done.txt").exists()
