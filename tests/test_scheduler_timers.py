"""irgrid.jobs.scheduler_timers: Snakemake's scheduler keeps one pending re-evaluation timer.

A stand-in scheduler with the same method as Snakemake 9's JobScheduler (a Timer that releases
the loop's semaphore) shows the difference: unpatched, N requests wake the loop N times;
patched, once. The installed Snakemake must still have the method the patch replaces.
"""

from __future__ import annotations

import threading

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


def test_the_installed_snakemake_has_the_method_the_patch_replaces():
    from snakemake.scheduling.job_scheduler import JobScheduler

    assert coalesce_reevaluation_timers()
    assert getattr(JobScheduler._schedule_reevalutation, PATCHED_FLAG, False)
