"""One pending re-evaluation timer in Snakemake's job scheduler instead of an ever-growing crowd.

Snakemake's scheduler loop (``snakemake.scheduling.job_scheduler.JobScheduler.schedule``, 9.x)
wakes whenever its semaphore ``_open_jobs`` is released: by a finished job, or by a
``threading.Timer`` that ``_schedule_reevalutation(delay)`` starts. With the job rate limiter
that is on by default (``--max-jobs-per-timespan 100/1s``), every pass of the loop that finds
ready jobs starts one more timer, including the passes that those timers' own releases cause. So
every finished job adds a timer chain that fires once a second for as long as jobs are waiting,
and each firing re-selects jobs: it re-evaluates the params of every ready job and stats all their
inputs. The Snakemake process's own CPU grows with the square of the job count
(``benchmarks/scheduler_timers.py`` measures it, patched and not).

:func:`coalesce_reevaluation_timers` makes ``_schedule_reevalutation`` start a timer only when
none is pending that fires as early or earlier. Nothing is lost: a re-evaluation asked for at
``now + delay`` is served by any pass of the loop at or before that time, the pending timer
gives one, and the loop asks again if it still needs to. Finished jobs release the semaphore
themselves, untouched. A longer timespan would thin the chains too, but Python waits for a
pending ``threading.Timer`` at exit.

The Snakefile applies it when the config's ``snakemake_scheduler.coalesce_timers`` is true (the
default). A Snakemake without the method is left alone, and the workflow then runs as before, only
slower; ``tests/test_scheduler_timers.py`` fails when the installed Snakemake's method or its call
in the loop is no longer the code this replaces.
"""

from __future__ import annotations

import threading
import time

PATCHED_FLAG = "_irgrid_coalesced_timers"


def coalesce(schedule_reevaluation):
    """The replacement for ``JobScheduler._schedule_reevalutation`` (``schedule_reevaluation``: the original)."""

    def one_pending_timer(self, delay) -> None:
        with _TIMER_LOCK:
            due = time.monotonic() + delay
            pending = getattr(self, "_irgrid_timer_due", None)
            if pending is not None and pending <= due:
                return  # the pending timer serves this request too
            self._irgrid_timer_due = due

        def fire() -> None:
            with _TIMER_LOCK:
                if getattr(self, "_irgrid_timer_due", None) == due:
                    self._irgrid_timer_due = None
            self._open_jobs.release()

        threading.Timer(delay, fire).start()

    one_pending_timer.__doc__ = schedule_reevaluation.__doc__
    one_pending_timer.__wrapped__ = schedule_reevaluation  # the original, for the tests' source check
    setattr(one_pending_timer, PATCHED_FLAG, True)
    return one_pending_timer


# A lock of our own, not the scheduler's _lock: its loop holds that one while it calls us. One for
# all schedulers: a Snakemake process has one, and the lock is held for a few instructions.
_TIMER_LOCK = threading.Lock()


def coalesce_reevaluation_timers(scheduler_class=None) -> bool:
    """Patch Snakemake's ``JobScheduler`` (or ``scheduler_class``); True when it is patched now or was before."""
    if scheduler_class is None:
        try:
            # deferred: Snakemake's scheduler is imported only inside a Snakemake run, which installs the patch
            from snakemake.scheduling.job_scheduler import JobScheduler as scheduler_class
        except ImportError:  # another Snakemake layout: leave it be
            return False
    original = getattr(scheduler_class, "_schedule_reevalutation", None)
    if original is None:
        return False
    if not getattr(original, PATCHED_FLAG, False):
        scheduler_class._schedule_reevalutation = coalesce(original)
    return True
