"""Wires the scheduler into a daemon: the job book, the service, the heartbeat and the `cron` tool.

The daemon calls `start_scheduler` once its gateway exists and `Scheduler.stop` before it closes
the runtime; its REST routes (`web/api/cron.py`) are bound to `Scheduler.service`.
"""

from __future__ import annotations

from dataclasses import dataclass

from apscheduler.triggers.interval import IntervalTrigger

from countbot.gateway.gateway import Gateway
from countbot.runtime.assembly import Runtime
from countbot.scheduler.book import JobBook
from countbot.scheduler.clock import Clock, utc_now
from countbot.scheduler.delivery import JobDelivery
from countbot.scheduler.heartbeat import Heartbeat
from countbot.scheduler.runs import JobExecutor
from countbot.scheduler.service import SchedulerService
from countbot.scheduler.tool import CronTool
from countbot.scheduler.tool_port import ToolJobs
from countbot.scheduler.triggers import zone_name
from countbot.scheduler.turns import GatewayTurns
from countbot.store.channel_state import ChannelStateStore
from countbot.store.counters import DailyCounters
from countbot.store.jobs import JobStore


@dataclass(slots=True)
class Scheduler:
    """A daemon's running scheduler."""

    service: SchedulerService
    heartbeat: Heartbeat

    async def stop(self) -> None:
        await self.service.stop()


def job_book(runtime: Runtime, clock: Clock = utc_now) -> JobBook:
    """The job book over the runtime's database, reading schedules in the user's time zone."""
    return JobBook(JobStore(runtime.db), zone_name(runtime.settings.timezone), clock)


def register_cron_tool(runtime: Runtime, book: JobBook) -> None:
    """Offer the agent the `cron` tool (once per runtime)."""
    if runtime.tools.get(CronTool.name) is None:
        runtime.tools.register(CronTool(ToolJobs(book, runtime.outbound.channels)))


def build_scheduler(runtime: Runtime, gateway: Gateway, *, clock: Clock = utc_now) -> Scheduler:
    """The scheduler's parts, wired but not started (`countbot cron run` uses it so)."""
    settings = runtime.settings
    book = job_book(runtime, clock)
    register_cron_tool(runtime, book)
    turns = GatewayTurns(gateway)
    delivery = JobDelivery(runtime.outbound, runtime.sessions)
    executor = JobExecutor(book, turns, delivery, settings.scheduler)
    heartbeat = Heartbeat(
        settings.heartbeat,
        settings.workspace,
        turns,
        delivery,
        ChannelStateStore(runtime.db),
        DailyCounters(runtime.db),
        zone=book.default_zone,
        clock=clock,
        time_limit=settings.scheduler.job_timeout,
    )
    return Scheduler(SchedulerService(book, executor, settings.scheduler), heartbeat)


async def start_scheduler(
    runtime: Runtime, gateway: Gateway, *, clock: Clock = utc_now, paused: bool = False
) -> Scheduler:
    """Load the jobs, catch up on missed runs, start the timer (and the heartbeat if enabled).

    `paused` loads everything without letting the timer ring (tests drive time themselves).
    """
    scheduler = build_scheduler(runtime, gateway, clock=clock)
    await scheduler.service.start(paused=paused)
    beat = runtime.settings.heartbeat
    if beat.enabled:
        every = IntervalTrigger(minutes=beat.interval_minutes)
        scheduler.service.add_timer("heartbeat", every, scheduler.heartbeat.beat)
    return scheduler
