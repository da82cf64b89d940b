"""Wires the scheduler into a daemon: the job book, the service, the heartbeat and the `cron` tool.

The daemon opens its runtime with a `JobsFeature` (the job book, bound when the runtime opens, and
the `cron` tool over it, registered with the rest when the turn machinery is built, before the
agent loop exists), calls `start_scheduler` once
its gateway exists and `Scheduler.stop` before it closes the runtime; its REST routes
(`web/api/cron.py`) are bound to `Scheduler.service`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from countbot.config.agent_view import agent_settings, may_reach
from countbot.config.settings import MAIN
from countbot.gateway.gateway import Gateway
from countbot.runtime.features import FeaturePorts, SharedPorts
from countbot.scheduler.book import JobBook
from countbot.scheduler.clock import Clock, utc_now
from countbot.scheduler.delivery import JobDelivery
from countbot.scheduler.heartbeat import Heartbeat
from countbot.scheduler.runs import JobExecutor
from countbot.scheduler.service import SchedulerService
from countbot.scheduler.triggers import load_triggers
from countbot.scheduler.turns import GatewayTurns
from countbot.store.channel_state import ChannelStateStore
from countbot.store.counters import DailyCounters
from countbot.store.jobs import JobStore

if TYPE_CHECKING:
    from countbot.tools.base import Tool


@dataclass(slots=True)
class Scheduler:
    """A daemon's running scheduler: `main`'s heartbeat, and every other agent's by name."""

    service: SchedulerService
    heartbeat: Heartbeat
    heartbeats: dict[str, Heartbeat] = field(default_factory=dict)

    async def stop(self) -> None:
        await self.service.stop()


class JobsFeature:
    """Implements `runtime.features.Feature`: the job book over the runtime's database (schedules
    read in the user's time zone) and the `cron` tool over it. `clock` may be replaced before
    the scheduler starts (tests drive time themselves)."""

    def __init__(self, clock: Clock = utc_now) -> None:
        self.clock = clock
        self._ports: SharedPorts | None = None
        self._book: JobBook | None = None

    def tools(self, ports: FeaturePorts) -> Sequence[Tool]:
        # Imported with the turn machinery (the daemon's first turn), like every tool.
        from countbot.scheduler.tool import CronTool
        from countbot.scheduler.tool_port import ToolJobs

        agent, settings = ports.agent, ports.settings
        jobs = ToolJobs(
            self.book,
            ports.deliveries.channels,
            agent=agent,
            may_reach=lambda channel, chat_id: may_reach(settings, agent, channel, chat_id),
        )
        return [CronTool(jobs)]

    def bind(self, ports: SharedPorts) -> JobBook:
        """The job book (also for a runtime opened without this feature, which then offers no
        `cron` tool)."""
        self._ports = ports
        self._book = JobBook(JobStore(ports.db), ports.settings.timezone, self.now)
        return self._book

    @property
    def ports(self) -> SharedPorts:
        if self._ports is None:
            raise RuntimeError("open the runtime with this feature (or bind it) first")
        return self._ports

    @property
    def book(self) -> JobBook:
        if self._book is None:
            raise RuntimeError("open the runtime with this feature (or bind it) first")
        return self._book

    def now(self) -> datetime:
        """The time of `clock`, read at each call."""
        return self.clock()


def build_scheduler(jobs: JobsFeature, gateway: Gateway) -> Scheduler:
    """The scheduler's parts, wired but not started (`countbot cron run` uses it so)."""
    ports, book = jobs.ports, jobs.book
    settings = ports.settings
    turns = GatewayTurns(gateway)
    delivery = JobDelivery(ports.deliveries, ports.sessions)
    executor = JobExecutor(book, turns, delivery, settings.scheduler)

    def heartbeat(agent: str) -> Heartbeat:
        house = agent_settings(settings, agent)
        return Heartbeat(
            house.heartbeat,
            house.workspace,
            turns,
            delivery,
            ChannelStateStore(ports.db),
            DailyCounters(ports.db),
            zone=lambda: book.default_zone,
            clock=jobs.now,
            time_limit=settings.scheduler.job_timeout,
            agent=agent,
            may_reach=lambda channel, chat_id: may_reach(settings, agent, channel, chat_id),
        )

    others = {
        name: heartbeat(name)
        for name, entry in settings.agents.others.items()
        if entry.enabled and entry.heartbeat is not None and entry.heartbeat.enabled
    }
    service = SchedulerService(book, executor, settings.scheduler)
    return Scheduler(service, heartbeat(MAIN), others)


async def start_scheduler(
    jobs: JobsFeature, gateway: Gateway, *, paused: bool = False
) -> Scheduler:
    """Load the jobs, catch up on missed runs, start the timer (and the heartbeat if enabled).

    `paused` loads everything without letting the timer ring (tests drive time themselves).
    """
    scheduler = build_scheduler(jobs, gateway)
    await scheduler.service.start(paused=paused)
    beating = [scheduler.heartbeat] if scheduler.heartbeat.settings.enabled else []
    for heartbeat in [*beating, *scheduler.heartbeats.values()]:
        await load_triggers()
        from apscheduler.triggers.interval import IntervalTrigger

        every = IntervalTrigger(minutes=heartbeat.settings.interval_minutes)
        await scheduler.service.add_timer(heartbeat.session, every, heartbeat.beat)
    return scheduler
