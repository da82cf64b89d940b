"""The job book: creating, changing and removing job definitions, with validation.

Every surface (the REST API, the `cron` tool, the CLI) changes jobs through here, so a job is
always valid when stored; listeners (the running scheduler) hear about each change at once.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from countbot.config.settings import MAIN
from countbot.scheduler.clock import Clock, moment, utc_now
from countbot.scheduler.jobs import Delivery, Job, JobError, JobRun, Schedule
from countbot.scheduler.triggers import (
    build_trigger,
    load_triggers,
    next_fire,
    parse_schedule,
    zone_name,
)
from countbot.store.jobs import JobStore

log = logging.getLogger(__name__)

JobChangeListener = Callable[[str], Awaitable[None]]
MAX_NAME = 200
MAX_PROMPT = 20_000


@dataclass(frozen=True, slots=True)
class JobDraft:
    """A new job as a person or the model describes it; `JobBook.create` validates it."""

    name: str
    schedule_kind: str
    schedule_value: str
    prompt: str
    delivery: Delivery = field(default_factory=Delivery)
    # IANA zone; None means the configured (or the system's) zone.
    timezone: str | None = None
    # A named session to run in; None means the job's own `cron:<id>` session.
    session: str | None = None
    enabled: bool = True
    created_from: str = ""
    # The agent the job belongs to.
    agent: str = MAIN


@dataclass(frozen=True, slots=True)
class JobPatch:
    """Changes to a job; None leaves a field as it is."""

    name: str | None = None
    schedule_kind: str | None = None
    schedule_value: str | None = None
    timezone: str | None = None
    prompt: str | None = None
    delivery: Delivery | None = None
    session: str | None = None
    enabled: bool | None = None


@dataclass(frozen=True, slots=True)
class JobView:
    """A job as listings show it: with its next fire time and its newest run's status."""

    job: Job
    next_run: datetime | None
    last_status: str | None
    last_run_at: float | None


class JobBook:
    """Validated job definitions over the `JobStore` (see the module docstring)."""

    def __init__(self, store: JobStore, default_zone: str | None, clock: Clock = utc_now) -> None:
        """`default_zone`: the configured zone; None (or empty) for the system's, looked up when
        first needed (tzlocal and zoneinfo load then: a daemon without jobs never needs them)."""
        self.store = store
        self._default_zone = default_zone
        self.clock = clock
        self._listeners: list[JobChangeListener] = []

    @property
    def default_zone(self) -> str:
        """The IANA zone a schedule without its own is read in."""
        if not self._default_zone:
            self._default_zone = zone_name(None)
        return self._default_zone

    def subscribe(self, listener: JobChangeListener) -> None:
        """Await `listener(job_id)` after every change to a job (created, changed, removed)."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: JobChangeListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    async def create(self, draft: JobDraft) -> Job:
        """Store a new job; JobError says what is wrong with the draft."""
        await load_triggers()
        now = self.clock()
        job_id = uuid.uuid4().hex[:8]
        schedule = parse_schedule(
            draft.schedule_kind, draft.schedule_value, draft.timezone or self.default_zone, now
        )
        ts = now.timestamp()
        job = Job(
            id=job_id,
            name=_text(draft.name, "name", MAX_NAME),
            schedule=schedule,
            prompt=_text(draft.prompt, "prompt", MAX_PROMPT),
            session=_session(draft.session) or f"cron:{job_id}",
            delivery=draft.delivery,
            enabled=draft.enabled,
            created_from=draft.created_from,
            created_at=ts,
            updated_at=ts,
            schedule_since=ts,
            checked_through=ts,
            agent=draft.agent,
        )
        await self.store.insert(job.to_row())
        await self._changed(job.id)
        return job

    async def update(self, job_id: str, patch: JobPatch) -> Job | None:
        """Apply `patch`; None if there is no such job, JobError if the result is invalid."""
        await load_triggers()
        job = await self.get(job_id)
        if job is None:
            return None
        now = self.clock()
        ts = now.timestamp()
        changes: dict[str, Any] = {}
        if patch.name is not None:
            changes["name"] = _text(patch.name, "name", MAX_NAME)
        if patch.prompt is not None:
            changes["prompt"] = _text(patch.prompt, "prompt", MAX_PROMPT)
        if patch.session is not None:
            changes["session"] = _session(patch.session) or f"cron:{job.id}"
        if patch.delivery is not None:
            changes["delivery"] = patch.delivery
        schedule = self._patched_schedule(job.schedule, patch, now)
        if schedule != job.schedule:
            # A new schedule starts now: no misses are owed for the old one.
            changes.update(schedule=schedule, schedule_since=ts, checked_through=ts)
        if patch.enabled is not None and patch.enabled != job.enabled:
            changes["enabled"] = patch.enabled
            if patch.enabled:
                changes["checked_through"] = ts  # runs skipped while disabled are not misses
        updated = replace(job, **changes, updated_at=ts)
        # Only the columns that changed: the scheduler's bookkeeping may move meanwhile.
        before = job.to_row()
        row = {k: v for k, v in updated.to_row().items() if before[k] != v}
        if await self.store.update(job.id, row):
            await self._changed(job.id)
        return updated

    async def set_enabled(self, job_id: str, enabled: bool) -> Job | None:
        return await self.update(job_id, JobPatch(enabled=enabled))

    async def remove(self, job_id: str) -> bool:
        removed = await self.store.delete(job_id)
        if removed:
            await self._changed(job_id)
        return removed

    async def get(self, job_id: str) -> Job | None:
        row = await self.store.get(job_id)
        return Job.from_row(row) if row else None

    async def jobs(self) -> list[Job]:
        """Every job; APScheduler's triggers are loaded once there is one (its `next_run`)."""
        rows = await self.store.list()
        if rows:
            await load_triggers()
        return [Job.from_row(row) for row in rows]

    async def views(self) -> list[JobView]:
        """Every job with its next run, oldest first."""
        await load_triggers()
        return [self._view(row) for row in await self.store.list()]

    async def view(self, job_id: str) -> JobView | None:
        await load_triggers()
        row = await self.store.get(job_id)
        return self._view(row) if row else None

    async def runs(self, job_id: str, limit: int = 20) -> list[JobRun]:
        return [JobRun.from_row(row) for row in await self.store.runs(job_id, limit)]

    def next_run(self, job: Job) -> datetime | None:
        """When an enabled job runs next (the triggers loaded: the methods above load them)."""
        if not job.enabled:
            return None
        try:
            trigger = build_trigger(job.schedule, job.schedule_since)
        except JobError:  # a zone this system no longer knows: the job cannot run
            return None
        return next_fire(trigger, max(self.clock(), moment(job.checked_through)))

    async def record_progress(self, job_id: str, changes: dict[str, Any]) -> None:
        """The scheduler's bookkeeping columns (checked_through, consecutive_failures, enabled).

        Listeners hear only about a change of `enabled`; the rest does not move the schedule.
        """
        if await self.store.update(job_id, changes) and "enabled" in changes:
            await self._changed(job_id)

    def _patched_schedule(self, schedule: Schedule, patch: JobPatch, now: datetime) -> Schedule:
        if patch.schedule_kind is None and patch.schedule_value is None and patch.timezone is None:
            return schedule
        if patch.schedule_kind is not None and patch.schedule_value is None:
            raise JobError("a new schedule kind needs its value too")
        return parse_schedule(
            patch.schedule_kind or schedule.kind,
            patch.schedule_value if patch.schedule_value is not None else schedule.value,
            patch.timezone or schedule.timezone,
            now,
        )

    def _view(self, row: dict[str, Any]) -> JobView:
        job = Job.from_row(row)
        return JobView(job, self.next_run(job), row["last_status"], row["last_run_at"])

    async def _changed(self, job_id: str) -> None:
        for listener in list(self._listeners):
            try:
                await listener(job_id)
            except Exception:  # one broken listener must not undo a stored change
                log.exception("job change listener failed for %s", job_id)


def _text(value: str, what: str, limit: int) -> str:
    value = value.strip()
    if not 1 <= len(value) <= limit:
        raise JobError(f"the job's {what} must be 1 to {limit} characters")
    return value


def _session(value: str | None) -> str | None:
    value = (value or "").strip()
    if len(value) > MAX_NAME:
        raise JobError(f"a session name is at most {MAX_NAME} characters")
    return value or None
