"""The scheduler service: APScheduler is the alarm clock, our store is the source of truth.

Each enabled job is an APScheduler job (in-memory job store, `coalesce=True`) built from its
stored definition at start and re-synced on every change. When it rings, the service asks which
fire times since the job's `checked_through` are due (`plan_due`): the latest one within
`misfire_grace_seconds` runs once, older ones are recorded as missed. The same path runs at
start, so downtime and a late wake-up (a sleeping laptop) follow one rule; that is why
APScheduler's own `misfire_grace_time` is unlimited here, its grace would drop runs silently.
Changes made by another process (the CLI) are noticed through SQLite's `data_version`, looked
at by a task of the service's own. APScheduler is imported (in a worker thread) and started with
the first timer it is given: a daemon without jobs or heartbeat never loads it (docs/cold_start.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from countbot.config.settings import SchedulerSettings
from countbot.scheduler.book import JobBook
from countbot.scheduler.clock import moment
from countbot.scheduler.jobs import Job, JobError, JobRun
from countbot.scheduler.runs import JobExecutor
from countbot.scheduler.triggers import build_trigger, load_triggers, next_fire, plan_due

if TYPE_CHECKING:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler
    from apscheduler.triggers.base import BaseTrigger

log = logging.getLogger(__name__)

JOB_PREFIX = "job:"
TIMER_PREFIX = "timer:"
# Seconds between looks at whether another process changed the jobs.
WATCH_SECONDS = 10.0


class SchedulerService:
    """Runs stored jobs on time (see the module docstring); `book` manages their definitions."""

    def __init__(
        self,
        book: JobBook,
        executor: JobExecutor,
        settings: SchedulerSettings,
        *,
        watch_seconds: float = WATCH_SECONDS,
    ) -> None:
        self.book = book
        self._executor = executor
        self._grace = timedelta(seconds=settings.misfire_grace_seconds)
        self._watch_seconds = watch_seconds
        self._aps: AsyncIOScheduler | None = None  # made with the first timer (`_timer`)
        self._paused = False
        self._watching: asyncio.Task[None] | None = None
        self._planning = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._data_version: int | None = None

    async def start(self, *, paused: bool = False) -> None:
        """Load the jobs, catch up on what came due while stopped, and start the timer.

        `paused` loads and syncs without letting the timer ring nor the store be watched (tests
        drive `run_due` and `watch_store`).
        """
        now = self.book.clock().timestamp()
        stale = await self.book.store.interrupt_running(now, "CountBot stopped during this run")
        if stale:
            log.warning("%d job run(s) were interrupted by the last shutdown", stale)
        self._paused = paused
        self.book.subscribe(self._sync)
        await self.reload()
        self._data_version = await self.book.store.data_version()
        if not paused:
            self._watching = asyncio.create_task(self._watch(), name="scheduler-store-watch")
        self._spawn(self.run_due())

    async def stop(self) -> None:
        """Stop the timer and cancel the runs in progress (their records say so next start)."""
        self.book.unsubscribe(self._sync)
        if self._watching is not None:
            self._watching.cancel()
            await asyncio.gather(self._watching, return_exceptions=True)
        if self._aps is not None and self._aps.running:
            self._aps.shutdown(wait=False)
        for task in list(self._tasks):
            task.cancel()
        await self.idle()

    async def idle(self) -> None:
        """Wait until no run or catch-up started by the service is in progress."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def add_timer(
        self, name: str, trigger: BaseTrigger, func: Callable[[], Awaitable[Any]]
    ) -> None:
        """Ring `func` on `trigger` (the heartbeat uses this); the same name replaces it."""
        timer = await self._timer()
        timer.add_job(func, trigger, id=TIMER_PREFIX + name, replace_existing=True)

    def next_ring(self, job_id: str) -> float | None:
        """When the timer will next ring for a job (Unix time), None if it will not."""
        aps_job = self._aps.get_job(JOB_PREFIX + job_id) if self._aps is not None else None
        when = aps_job.next_run_time if aps_job is not None else None
        return when.timestamp() if when is not None else None

    async def run_due(self) -> list[JobRun]:
        """Handle every enabled job's fire times up to the clock's now; the records made."""
        now = self.book.clock()
        jobs = [job for job in await self.book.jobs() if job.enabled]
        batches = await asyncio.gather(*(self._handle(job.id, now) for job in jobs))
        return [run for batch in batches for run in batch]

    async def run_now(self, job_id: str) -> JobRun | None:
        """Run a job at once, outside its schedule; None if there is no such job."""
        job = await self.book.get(job_id)
        if job is None:
            return None
        return await self._executor.run(job, "manual", None)

    def start_now(self, job_id: str) -> None:
        """`run_now` in the background."""
        self._spawn(self.run_now(job_id))

    async def reload(self) -> None:
        """Make the timer's jobs match the store's."""
        jobs = await self.book.jobs()
        for job in jobs:
            await self._schedule(job)
        known = {JOB_PREFIX + job.id for job in jobs}
        for aps_job in self._aps.get_jobs() if self._aps is not None else []:
            if aps_job.id.startswith(JOB_PREFIX) and aps_job.id not in known:
                aps_job.remove()

    # --- internals ---------------------------------------------------------------------------

    async def _timer(self) -> AsyncIOScheduler:
        """APScheduler's scheduler, imported in a worker thread and started at the first call."""
        if self._aps is None:
            kind = await asyncio.to_thread(_import_scheduler)
            if self._aps is None:  # a concurrent first call may have made it meanwhile
                self._aps = kind(
                    timezone=UTC,
                    job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
                )
                self._aps.start(paused=self._paused)
        return self._aps

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._watch_seconds)
            try:
                await self.watch_store()
            except Exception:  # the next look tries again
                log.exception("looking for job changes made by another process failed")

    async def _sync(self, job_id: str) -> None:
        job = await self.book.get(job_id)
        if job is None:
            self._unschedule(job_id)
        else:
            await self._schedule(job)

    async def _schedule(self, job: Job) -> None:
        await load_triggers()
        try:
            trigger = build_trigger(job.schedule, job.schedule_since)
        except JobError as exc:  # a zone this system no longer knows, say
            log.error("job %s (%s) cannot be scheduled: %s", job.id, job.name, exc)
            self._unschedule(job.id)
            return
        if not job.enabled or next_fire(trigger, moment(job.checked_through)) is None:
            self._unschedule(job.id)
            return
        timer = await self._timer()
        timer.add_job(
            self._ring,
            trigger,
            args=[job.id],
            id=JOB_PREFIX + job.id,
            name=job.name,
            replace_existing=True,
        )

    def _unschedule(self, job_id: str) -> None:
        if self._aps is not None and self._aps.get_job(JOB_PREFIX + job_id) is not None:
            self._aps.remove_job(JOB_PREFIX + job_id)

    async def _ring(self, job_id: str) -> None:
        # Return at once: a long turn must not hold the timer's own bookkeeping.
        self._spawn(self._handle(job_id, self.book.clock()))

    async def _handle(self, job_id: str, now: datetime) -> list[JobRun]:
        async with self._planning:
            job = await self.book.get(job_id)
            if job is None or not job.enabled:
                return []
            await load_triggers()
            try:
                trigger = build_trigger(job.schedule, job.schedule_since)
            except JobError:
                return []
            plan = plan_due(trigger, moment(job.checked_through), now, self._grace)
            if plan.due is None and plan.missed == 0:
                return []
            changes: dict[str, Any] = {"checked_through": now.timestamp()}
            if plan.due is None and job.schedule.kind == "at":
                changes["enabled"] = False  # its one time was missed
            await self.book.record_progress(job.id, changes)
        runs = []
        if plan.missed:
            runs.append(await self._executor.record_missed(job, plan))
        if plan.due is not None:
            run = await self._executor.run(job, "schedule", plan.due)
            runs.extend([run] if run is not None else [])
        return runs

    async def watch_store(self) -> None:
        """Reload when another process (the CLI) has written to the database since last look."""
        version = await self.book.store.data_version()
        if version != self._data_version:
            self._data_version = version
            await self.reload()

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("scheduled work failed", exc_info=task.exception())


def _import_scheduler() -> type[AsyncIOScheduler]:
    """APScheduler's asyncio scheduler (blocking: imports; a worker thread)."""
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    return AsyncIOScheduler
