"""The heartbeat: now and then the assistant looks at HEARTBEAT.md and may reach out on its own.

A beat is cheap unless there is work: outside quiet hours, under the daily cap, with the user's
session idle and a task listed, it runs one unattended turn in the `heartbeat` session; an
answer that only acknowledges (HEARTBEAT_OK) stays there, anything else goes to the target.
With nothing listed no model is called at all. Every agent with a heartbeat has its own (its
workspace's HEARTBEAT.md, its session `heartbeat:<agent>`, its daily cap, its house); a target
chat the agent may not `message` is refused before any model call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import Literal, Protocol

from countbot.common.authorship import Author
from countbot.config.settings import MAIN, HeartbeatSettings
from countbot.scheduler.clock import Clock
from countbot.scheduler.delivery import JobDelivery
from countbot.scheduler.heartbeat_tasks import HEARTBEAT_FILE, read_heartbeat_tasks
from countbot.scheduler.jobs import Delivery
from countbot.scheduler.turns import ScheduledTurn, ScheduledTurnRunner

log = logging.getLogger(__name__)

HEARTBEAT_SESSION = "heartbeat"
ACK = "HEARTBEAT_OK"
# Characters besides the token a reply may have and still only acknowledge ("HEARTBEAT_OK.").
ACK_SLACK = 40
PROMPT = (
    "Heartbeat check. These are the standing tasks from {file}:\n{tasks}\n\n"
    "Do whatever of them is due now. If nothing needs the user's attention, reply with exactly "
    f"{ACK} and nothing else; otherwise your reply is sent to the user as a message."
)

BeatOutcome = Literal[
    "disabled",
    "quiet",
    "capped",
    "busy",
    "nothing",
    "acknowledged",
    "delivered",
    "undelivered",
    "failed",
    "refused",
]


class BeatCounter(Protocol):
    """Beats per local day, kept in SQLite so a restart does not reset the daily cap."""

    async def get(self, name: str, day: date | None = None) -> int: ...

    async def add(self, name: str, day: date | None = None) -> int: ...


BEATS = "heartbeat-beats"


class ChatSessions(Protocol):
    """Which session a channel's chat talks in now (the store's ChannelStateStore)."""

    async def session_for(self, channel: str, chat_id: str) -> str | None: ...


@dataclass(frozen=True, slots=True)
class BeatResult:
    outcome: BeatOutcome
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """One beat at a time (`beat`); settings are read on every beat, so edits apply at once."""

    settings: HeartbeatSettings
    workspace: Path
    turns: ScheduledTurnRunner
    delivery: JobDelivery
    chat_sessions: ChatSessions
    beats: BeatCounter
    _: KW_ONLY
    # The IANA zone of quiet hours and the daily cap, asked at each beat (the book's default
    # zone: the system's is looked up only when something needs it).
    zone: Callable[[], str]
    clock: Clock
    time_limit: float
    # The agent whose heartbeat it is, and the chats it may send into.
    agent: str = MAIN
    may_reach: Callable[[str, str], bool] = lambda channel, chat_id: True

    @property
    def session(self) -> str:
        return HEARTBEAT_SESSION if self.agent == MAIN else f"{HEARTBEAT_SESSION}:{self.agent}"

    @property
    def _beats(self) -> str:
        return BEATS if self.agent == MAIN else f"{BEATS}:{self.agent}"

    async def beat(self) -> BeatResult:
        result = await self._beat()
        log.info("heartbeat: %s %s", result.outcome, result.detail)
        return result

    async def _beat(self) -> BeatResult:
        settings = self.settings
        if not settings.enabled:
            return BeatResult("disabled")
        from zoneinfo import ZoneInfo  # loaded with the first beat, not with the daemon

        local = self.clock().astimezone(ZoneInfo(self.zone()))
        if settings.quiet_hours and in_quiet_hours(local, settings.quiet_hours):
            return BeatResult("quiet", settings.quiet_hours)
        if await self.beats.get(self._beats, local.date()) >= settings.daily_cap:
            return BeatResult("capped", f"{settings.daily_cap} beats today")
        target = Delivery.parse(settings.target)
        if target.kind == "chat" and not self.may_reach(target.channel or "", target.chat_id or ""):
            return BeatResult("refused", f"{target} is bound to another agent")
        sessions = (await self._user_session(target), self.session)
        busy = [s for s in sessions if s and self.turns.busy(s)]
        if busy:
            return BeatResult("busy", busy[0])
        tasks = await read_heartbeat_tasks(self.workspace)
        if not tasks:
            return BeatResult("nothing")
        await self.beats.add(self._beats, local.date())
        return await self._run(tasks, target)

    async def _user_session(self, target: Delivery) -> str | None:
        """The session the target chat talks in: its current one, else the channel default."""
        if target.channel is None or target.chat_id is None or target.kind != "chat":
            return None
        current = await self.chat_sessions.session_for(target.channel, target.chat_id)
        session = current or f"{target.channel}:{target.chat_id}"
        return session if self.agent == MAIN else f"{self.agent}@{session}"

    async def _run(self, tasks: list[str], target: Delivery) -> BeatResult:
        prompt = PROMPT.format(file=HEARTBEAT_FILE, tasks="\n".join(tasks))
        author = Author("job", "heartbeat")
        session, agent = self.session, self.agent
        if target.kind == "chat":
            channel = target.channel or ""
            request = ScheduledTurn(prompt, session, channel, target.chat_id, author, agent)
        else:
            request = ScheduledTurn(prompt, session, HEARTBEAT_SESSION, author=author, agent=agent)
        outcome = await self.turns.run(request, self.time_limit)
        for note in outcome.notes:  # the heartbeat keeps no run history; the log has it
            log.warning("heartbeat: %s", note)
        if outcome.status != "ok":
            return BeatResult("failed", outcome.error)
        if only_acknowledges(outcome.text):
            return BeatResult("acknowledged")
        result = await self.delivery.answer(target, session, outcome.text)
        return BeatResult("delivered" if result.delivered else "undelivered", result.detail)


def only_acknowledges(text: str) -> bool:
    """True for "HEARTBEAT_OK" and short variants of it ("HEARTBEAT_OK — all quiet.")."""
    if ACK not in text:
        return False
    rest = text.replace(ACK, "").strip(" \t\r\n.,;:!-—*_`'\"")
    return len(rest) <= ACK_SLACK


def in_quiet_hours(local: datetime, quiet_hours: str) -> bool:
    """Whether `local` falls in "HH:MM-HH:MM" (wrapping past midnight if the end is earlier)."""
    start_text, _, end_text = quiet_hours.partition("-")
    start, end = _clock_time(start_text), _clock_time(end_text)
    now = local.time().replace(second=0, microsecond=0, tzinfo=None)
    if start == end:
        return False
    if start < end:
        return start <= now < end
    return now >= start or now < end


def _clock_time(text: str) -> time:
    hours, _, minutes = text.strip().partition(":")
    return time(int(hours), int(minutes))
