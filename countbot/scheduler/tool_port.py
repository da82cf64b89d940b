"""The `cron` tool's port onto the job book: what the model asks for, as job definitions.

Changes go through the `JobBook`, so a running scheduler picks them up at once. Each agent's
tool sees and changes only that agent's jobs (another's are "no such job"), makes jobs that run
in its own house, and delivers only into chats it may reach (`config/agent_view.may_reach`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from zoneinfo import ZoneInfo

from countbot.config.settings import MAIN
from countbot.scheduler.book import JobBook, JobDraft
from countbot.scheduler.jobs import WEB, Delivery, Job
from countbot.scheduler.tool import CronJobInfo
from countbot.tools.base import ToolContext


class ToolJobs:
    """Implements the tool's `CronJobs` protocol over a `JobBook`, for agent `agent`;
    `may_reach(channel, chat_id)` says which chats its jobs may deliver into."""

    def __init__(
        self,
        book: JobBook,
        running_channels: Callable[[], list[str]],
        *,
        agent: str = MAIN,
        may_reach: Callable[[str, str], bool] = lambda channel, chat_id: True,
    ) -> None:
        self._book = book
        self._running_channels = running_channels
        self._agent = agent
        self._may_reach = may_reach

    async def create(
        self, draft: JobDraft, deliver_to: str | None, asked_in: ToolContext
    ) -> CronJobInfo:
        delivery = self._origin(asked_in) if deliver_to is None else Delivery.parse(deliver_to)
        if delivery.kind == "chat" and not self._may_reach(
            delivery.channel or "", delivery.chat_id or ""
        ):
            raise ValueError(f"{delivery} is bound to another agent; deliver there is refused")
        origin = ":".join(p for p in (asked_in.channel, asked_in.chat_id) if p)
        draft = replace(
            draft,
            delivery=delivery,
            created_from=f"cron tool in {origin}" if origin else "cron tool",
            session=self._web_session(asked_in, delivery),
            agent=self._agent,
        )
        return self._info(await self._book.create(draft))

    async def list(self) -> list[CronJobInfo]:
        return [self._info(job) for job in await self._book.jobs() if job.agent == self._agent]

    async def remove(self, job_id: str) -> bool:
        return await self._owns(job_id) and await self._book.remove(job_id)

    async def set_enabled(self, job_id: str, enabled: bool) -> CronJobInfo | None:
        if not await self._owns(job_id):
            return None
        job = await self._book.set_enabled(job_id, enabled)
        return self._info(job) if job is not None else None

    async def _owns(self, job_id: str) -> bool:
        """Whether `job_id` is this agent's job (another agent's is as good as none)."""
        job = await self._book.get(job_id)
        return job is not None and job.agent == self._agent

    def _origin(self, asked_in: ToolContext) -> Delivery:
        """The chat the job was asked for in, if a channel can reach it; else the web UI."""
        channel, chat_id = asked_in.channel, asked_in.chat_id
        if channel and chat_id and channel in self._running_channels():
            return Delivery(channel, chat_id)
        return Delivery(WEB)

    @staticmethod
    def _web_session(asked_in: ToolContext, delivery: Delivery) -> str | None:
        """A web chat's job runs in that chat, so its answers arrive where it was asked for."""
        if asked_in.channel == WEB and delivery.channel == WEB:
            return asked_in.session_id
        return None

    def _info(self, job: Job) -> CronJobInfo:
        upcoming = self._book.next_run(job)
        shown = None
        if upcoming is not None:
            local = upcoming.astimezone(ZoneInfo(job.schedule.timezone))
            shown = f"{local:%Y-%m-%d %H:%M} ({local:%a}) {job.schedule.timezone}"
        return CronJobInfo(
            id=job.id,
            name=job.name,
            schedule=job.schedule.describe(),
            prompt=job.prompt,
            deliver_to=str(job.delivery),
            enabled=job.enabled,
            next_run=shown,
        )
