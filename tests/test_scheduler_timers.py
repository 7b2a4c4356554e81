"""irgrid.jobs.scheduler_timers: Snakemake's scheduler keeps one pending re-evaluation timer.

A stand-in scheduler with the same method as Snakemake 9's JobScheduler (a Timer that releases
the loop's semaphore) shows the difference: unpatched, N requests wake the loop N times;
patched, once. The installed Snakemake must still have the method the patch replaces.
"""

from __future__ import annotations

import copy
import inspect
import threading

from common import REPO

from irgrid.config import load_yaml, validate
from irgrid.jobs.scheduler_timers import PATCHED_FLAG, coalesce_reevaluation_timers


def stand_in_scheduler_class():
    class Scheduler:
        def __init__(self):
            self._open_jobs = threading.Semaphore(0)

        def _schedule_reevalutation(self, delay):  # Snakemake's body, verbatim
            threading.Timer(delay, lambda: self._open_jobs.release()).start()

    return Scheduler


def wakes(scheduler, settle: float = 0.5) -> int:
    """How many times the loop would wake: releases counted until none comes for ``settle`` s."""
    count = 0
    while scheduler._open_jobs.acquire(timeout=settle):
        count += 1
    return count


def test_unpatched_every_request_wakes_the_loop_once_more():
    scheduler = stand_in_scheduler_class()()
    for _ in range(20):
        scheduler._schedule_reevalutation(0.05)
    assert wakes(scheduler) == 20


def test_patched_requests_while_a_timer_is_pending_wake_the_loop_once():
    cls = stand_in_scheduler_class()
    assert coalesce_reevaluation_timers(cls)
    scheduler = cls()
    for _ in range(20):
        scheduler._schedule_reevalutation(0.05)
    assert wakes(scheduler) == 1
    # once it has fired, a new request starts a new timer
    scheduler._schedule_reevalutation(0.05)
    assert wakes(scheduler) == 1


def test_an_earlier_request_than_the_pending_timer_is_not_delayed():
    cls = stand_in_scheduler_class()
    coalesce_reevaluation_timers(cls)
    scheduler = cls()
    scheduler._schedule_reevalutation(3)  # pending, far off
    scheduler._schedule_reevalutation(0.05)
    assert scheduler._open_jobs.acquire(timeout=2), "the 0.05 s request waited for the 3 s timer"


def test_patching_twice_wraps_once():
    cls = stand_in_scheduler_class()
    coalesce_reevaluation_timers(cls)
    patched = cls._schedule_reevalutation
    coalesce_reevaluation_timers(cls)
    assert cls._schedule_reevalutation is patched


def test_a_scheduler_without_the_method_is_left_alone():
    class Other:
        pass

    assert not coalesce_reevaluation_timers(Other)
    assert not hasattr(Other, "_schedule_reevalutation")


# Snakemake 9's JobScheduler._schedule_reevalutation, which the patch replaces, and the call in its
# loop that makes the timer chains (snakemake/scheduling/job_scheduler.py), whitespace removed.
SNAKEMAKE_METHOD = (
    "def_schedule_reevalutation(self,delay:int)->None:"
    "threading.Timer(delay,lambda:self._open_jobs.release(),).start()"
)
SNAKEMAKE_LOOP_CALL = "self._schedule_reevalutation(self.job_rate_limiter.timespan)"
CHANGED = (
    "Snakemake {version} changed JobScheduler.{what}, which irgrid.jobs.scheduler_timers replaces or relies on: "
    "check that the patch still fits the new code and update this test, or remove the patch "
    "(workflow/rules/common.smk; snakemake_scheduler.coalesce_timers: false turns it off meanwhile)"
)


def without_whitespace(text: str) -> str:
    return "".join(text.split())


def test_the_installed_snakemake_has_the_method_the_patch_replaces():
    import snakemake
    from snakemake.scheduling.job_scheduler import JobScheduler

    assert coalesce_reevaluation_timers()
    patched = JobScheduler._schedule_reevalutation
    assert getattr(patched, PATCHED_FLAG, False)
    original = inspect.getsource(patched.__wrapped__)
    assert without_whitespace(original) == SNAKEMAKE_METHOD, (
        CHANGED.format(version=snakemake.__version__, what="_schedule_reevalutation") + f"; now:\n{original}"
    )


def test_the_installed_snakemakes_loop_starts_a_timer_per_pass_with_the_rate_limiter():
    """The cost the patch removes: the loop asks for a re-evaluation at every pass while jobs wait."""
    import snakemake
    from snakemake.scheduling.job_scheduler import JobScheduler

    loop = without_whitespace(inspect.getsource(JobScheduler.schedule))
    assert SNAKEMAKE_LOOP_CALL in loop, CHANGED.format(version=snakemake.__version__, what="schedule")


def test_the_config_turns_the_patch_on_by_default_and_off_on_request():
    config = load_yaml(REPO / "config" / "config.yaml")
    assert validate(copy.deepcopy(config), "config.schema.yaml", "config.yaml")["snakemake_scheduler"] == {
        "coalesce_timers": True
    }
    config["snakemake_scheduler"] = {"coalesce_timers": False}
    assert not validate(config, "config.schema.yaml", "config.yaml")["snakemake_scheduler"]["coalesce_timers"]
    common = (REPO / "workflow" / "rules" / "common.smk").read_text(encoding="utf-8")
    assert 'if config["snakemake_scheduler"]["coalesce_timers"]:\n    coalesce_reevaluation_timers()' in common
