"""Running one job: its turn under the concurrency limit and timeout, delivery, and its record.

Each run is written to the history as it starts and again when it ends, so the UI shows a job
running and a crash leaves a trace. Two failures in a row send one notice to the job's target;
a one-shot job that succeeded on its schedule is removed.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

from countbot.common.authorship import Author
from countbot.config.settings import SchedulerSettings
from countbot.scheduler.book import JobBook
from countbot.scheduler.delivery import JobDelivery
from countbot.scheduler.jobs import Job, JobRun, RunTrigger
from countbot.scheduler.triggers import DuePlan
from countbot.scheduler.turns import ScheduledTurn, ScheduledTurnRunner, TurnOutcome

log = logging.getLogger(__name__)

# The channel a job's turn reports when its answer goes to no chat.
JOB_CHANNEL = "cron"
# Consecutive failures that trigger the (single) notice.
NOTIFY_AFTER = 2


class JobExecutor:
    """Runs jobs one at a time per job and at most `max_concurrent_jobs` at once."""

    def __init__(
        self,
        book: JobBook,
        turns: ScheduledTurnRunner,
        delivery: JobDelivery,
        settings: SchedulerSettings,
    ) -> None:
        self._book = book
        self._turns = turns
        self._delivery = delivery
        self._settings = settings
        self._slots = asyncio.Semaphore(settings.max_concurrent_jobs)
        self._locks: dict[str, asyncio.Lock] = {}

    async def run(
        self, job: Job, trigger: RunTrigger, scheduled_for: datetime | None
    ) -> JobRun | None:
        """Run `job` now and return its finished record; None if it was removed meanwhile."""
        lock = self._locks.setdefault(job.id, asyncio.Lock())
        async with lock, self._slots:
            current = await self._book.get(job.id)
            if current is None:
                return None
            job = current
            started = self._now()
            base = {
                "job_id": job.id,
                "trigger": trigger,
                "scheduled_for": scheduled_for.timestamp() if scheduled_for else None,
                "started_at": started,
            }
            run_id = await self._book.store.start_run({**base, "status": "running"})
            outcome = await self._turns.run(self._request(job), self._settings.job_timeout)
            finished = await self._finish(job, run_id, outcome)
            await self._after(job, trigger, outcome)
            return JobRun(run_id, job.id, trigger, base["scheduled_for"], started, **finished)

    async def record_missed(self, job: Job, plan: DuePlan) -> JobRun:
        """One history record for fire times that were too old to run (never replayed)."""
        assert plan.first_missed is not None and plan.last_missed is not None
        count = f"{plan.missed}+" if plan.capped else str(plan.missed)
        runs = "run was" if plan.missed == 1 and not plan.capped else "runs were"
        error = (
            f"{count} {runs} missed while CountBot was not running "
            f"(from {plan.first_missed.isoformat()} to {plan.last_missed.isoformat()})"
        )
        now = self._now()
        row = {
            "job_id": job.id,
            "trigger": "schedule",
            "scheduled_for": plan.last_missed.timestamp(),
            "started_at": now,
            "ended_at": now,
            "status": "missed",
            "error": error,
        }
        run_id = await self._book.store.start_run(row)
        log.warning("job %s (%s): %s", job.id, job.name, error)
        return JobRun(run_id, job.id, "schedule", row["scheduled_for"], now, now, "missed", error)

    def _request(self, job: Job) -> ScheduledTurn:
        # A turn for a chat runs as that chat (so tools such as `message` default to it).
        author = Author("job", job.name or job.id)
        if job.delivery.kind == "chat":
            channel = job.delivery.channel or ""
            return ScheduledTurn(
                job.prompt, job.session, channel, job.delivery.chat_id, author, job.agent
            )
        return ScheduledTurn(job.prompt, job.session, JOB_CHANNEL, job.id, author, job.agent)

    async def _finish(self, job: Job, run_id: int, outcome: TurnOutcome) -> dict[str, Any]:
        delivered, detail = False, ""
        if outcome.status == "ok":
            result = await self._delivery.answer(job.delivery, job.session, outcome.text)
            delivered, detail = result.delivered, result.detail
        finished = {
            "ended_at": self._now(),
            "status": outcome.status,
            "error": outcome.error,
            "output": outcome.text,
            "delivered": delivered,
            "delivery_detail": detail,
            "notes": "\n".join(outcome.notes),
        }
        for note in outcome.notes:
            log.warning("job %s (%s): %s", job.id, job.name, note)
        await self._book.store.finish_run(run_id, finished)
        return finished

    async def _after(self, job: Job, trigger: RunTrigger, outcome: TurnOutcome) -> None:
        """Failure count and notice, and the end of a one-shot job."""
        succeeded = outcome.status == "ok"
        if succeeded and trigger == "schedule" and job.schedule.kind == "at":
            await self._book.remove(job.id)
            return
        failures = 0 if succeeded else job.consecutive_failures + 1
        changes: dict[str, Any] = {"consecutive_failures": failures}
        if trigger == "schedule" and job.schedule.kind == "at":
            changes["enabled"] = False  # its one time has passed
        await self._book.record_progress(job.id, changes)
        if failures == NOTIFY_AFTER:
            text = (
                f"Scheduled job “{job.name}” failed {NOTIFY_AFTER} times in a row; the last "
                f"error: {outcome.error}. It stays scheduled; fix or disable it in CountBot."
            )
            result = await self._delivery.notice(job.delivery, job.session, text)
            if not result.delivered:
                log.warning("job %s failure notice not delivered: %s", job.id, result.detail)

    def _now(self) -> float:
        return self._book.clock().timestamp()
