"""The `cron` tool: the agent creates, lists, removes and pauses scheduled jobs from conversation.

The tool knows nothing of the scheduler or the store: it talks to a small `CronJobs` port that
the scheduler implements. A new job delivers to the chat it was created from unless the model
names another target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from countbot.scheduler.book import JobDraft
from countbot.tools.base import Egress, Tool, ToolContext, ToolResult
from countbot.tools.schema import choice, params, text

ACTIONS = ("create", "list", "remove", "enable", "disable")
SCHEDULE_KEYS = ("cron", "every", "at")


@dataclass(frozen=True, slots=True)
class CronJobInfo:
    """A job as the model sees it in a listing."""

    id: str
    name: str
    schedule: str
    prompt: str
    deliver_to: str
    enabled: bool
    next_run: str | None

    def line(self) -> str:
        state = "" if self.enabled else " [disabled]"
        upcoming = f"next {self.next_run}" if self.next_run else "no upcoming run"
        return (
            f"- {self.id}: {self.name}{state} — {self.schedule}, {upcoming}, "
            f"delivers to {self.deliver_to} — prompt: {self.prompt}"
        )


class CronJobs(Protocol):
    """What the tool needs from the scheduler; invalid input raises ValueError with a reason."""

    async def create(
        self, draft: JobDraft, deliver_to: str | None, asked_in: ToolContext
    ) -> CronJobInfo:
        """`draft` stored; it delivers to `deliver_to` ("<channel>:<chat_id>", "web" or "none"),
        or when None to the chat it was `asked_in`."""

    async def list(self) -> list[CronJobInfo]: ...

    async def remove(self, job_id: str) -> bool: ...

    async def set_enabled(self, job_id: str, enabled: bool) -> CronJobInfo | None: ...


class CronTool(Tool):
    name = "cron"
    description = (
        "Manage scheduled jobs: reminders and recurring tasks that run a prompt later and send "
        "the answer to the user. action=create needs name, prompt and exactly one of cron "
        "(crontab 'minute hour day month weekday', e.g. '0 8 * * 1-5' = 8:00 Monday to Friday), "
        "every (e.g. '30m', '2h', '1d') or at (ISO date-time, e.g. '2026-05-01T09:00', local "
        "time). The prompt is what you will be told at each run, e.g. 'Remind the user to check "
        "the train'. action=list shows jobs with their ids; remove, enable and disable take "
        "job_id. A job delivers to this chat unless deliver_to says otherwise."
    )
    parameters = params(
        required={"action": choice(*ACTIONS)},
        optional={
            "name": text("short name of a new job"),
            "prompt": text("the instruction to run each time"),
            "cron": text("crontab expression (5 fields)"),
            "every": text("interval such as 30m, 2h, 1d"),
            "at": text("one-shot ISO date-time"),
            "timezone": text("IANA zone like Europe/Berlin; default: the user's"),
            "deliver_to": text("'<channel>:<chat_id>', 'web' or 'none'; default: this chat"),
            "job_id": text("the job for remove/enable/disable"),
        },
    )

    # A job's prompt is an instruction for later turns: marked when a stranger may have written it.
    remembers = ("prompt",)

    def __init__(self, jobs: CronJobs) -> None:
        self._jobs = jobs

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress | None:
        """A new job sending its answers to another chat: what it will send is not known yet."""
        target = str(args.get("deliver_to") or "")
        if args.get("action") != "create" or ":" not in target:
            return None
        return Egress("chat", target, str(args.get("prompt", "")), opaque=True)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        action = args["action"]
        try:
            if action == "create":
                return await self._create(args, ctx)
            if action == "list":
                return await self._list()
            return await self._change(action, args.get("job_id", ""))
        except ValueError as exc:
            return ToolResult.error(str(exc))

    async def _create(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        given = [key for key in SCHEDULE_KEYS if args.get(key)]
        if len(given) != 1:
            return ToolResult.error("give exactly one of cron, every or at")
        missing = [key for key in ("name", "prompt") if not str(args.get(key, "")).strip()]
        if missing:
            return ToolResult.error(f"a new job needs {' and '.join(missing)}")
        draft = JobDraft(
            name=args["name"],
            schedule_kind=given[0],
            schedule_value=str(args[given[0]]),
            prompt=args["prompt"],
            timezone=args.get("timezone") or None,
        )
        info = await self._jobs.create(draft, args.get("deliver_to") or None, ctx)
        return ToolResult(f"Created job:\n{info.line()}")

    async def _list(self) -> ToolResult:
        jobs = await self._jobs.list()
        if not jobs:
            return ToolResult("No scheduled jobs.")
        return ToolResult("Scheduled jobs:\n" + "\n".join(info.line() for info in jobs))

    async def _change(self, action: str, job_id: str) -> ToolResult:
        if not job_id:
            return ToolResult.error(f"{action} needs job_id (see action=list)")
        if action == "remove":
            found = await self._jobs.remove(job_id)
            return ToolResult(f"Removed job {job_id}.") if found else _unknown(job_id)
        info = await self._jobs.set_enabled(job_id, action == "enable")
        if info is None:
            return _unknown(job_id)
        return ToolResult(f"Job {action}d:\n{info.line()}")


def _unknown(job_id: str) -> ToolResult:
    return ToolResult.error(f"there is no job {job_id!r}; use action=list to see the ids")
