"""Running a job's prompt as a turn: through the daemon's gateway, exactly like a chat message.

Going through the gateway gives a job the same session lane (never two turns at once in one
session), the same AgentLoop (system prompt, persona, memory, skills) and the same live events:
whoever watches the job's session in the web UI sees it stream.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal, Protocol

from countbot.agent.events import TurnDone, TurnError, TurnNotice
from countbot.agent.notices import with_notices
from countbot.common.authorship import JOB, Author
from countbot.config.settings import MAIN
from countbot.gateway.events import GatewayEvent
from countbot.gateway.follow import TurnFollower
from countbot.gateway.gateway import Gateway, GatewayClosedError
from countbot.gateway.messages import InboundMessage
from countbot.gateway.watchers import Watcher
from countbot.runtime.approvals import ApprovalSettled

# How often a job waiting for a busy session looks again, in seconds.
IDLE_POLL = 0.2


@dataclass(frozen=True, slots=True)
class ScheduledTurn:
    """One unattended turn: the prompt, the session it runs in and the address it runs for."""

    prompt: str
    session_id: str
    channel: str
    chat_id: str | None = None
    # The prompt is the owner's standing request, kept apart from what they type live.
    author: Author = JOB
    # The agent whose house runs it.
    agent: str = MAIN


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    status: Literal["ok", "error", "timeout"]
    text: str = ""
    error: str = ""
    # What the run's record should mention, e.g. a command denied because nobody could approve.
    notes: tuple[str, ...] = ()


class ScheduledTurnRunner(Protocol):
    """What jobs and the heartbeat need to run a turn (GatewayTurns, or a test's stand-in)."""

    async def run(self, request: ScheduledTurn, time_limit: float) -> TurnOutcome: ...

    def busy(self, session_id: str) -> bool: ...


class GatewayTurns:
    """Submits a turn to the gateway and follows the session's events to its end."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def busy(self, session_id: str) -> bool:
        return self._gateway.busy(session_id)

    async def run(self, request: ScheduledTurn, time_limit: float) -> TurnOutcome:
        """The turn's final answer; a turn past `time_limit` seconds is cancelled."""
        watcher = Watcher()
        hub = self._gateway.hub
        hub.subscribe(request.session_id, watcher)
        notes: list[str] = []
        shown: list[TurnNotice] = []
        follower = TurnFollower(watcher, lambda event: _note(event, notes, shown))
        try:
            async with asyncio.timeout(time_limit):
                await self._until_idle(request.session_id, watcher)
                submission = await self._gateway.submit(_message(request), origin=watcher)
                terminal = await follower.terminal(submission.queued)
                return _terminal_outcome(terminal, tuple(notes), shown)
        except TimeoutError:
            if follower.ours_running:
                self._gateway.cancel(request.session_id)
            stopped = f"took longer than {time_limit:g} s and was stopped"
            return TurnOutcome("timeout", error=stopped, notes=tuple(notes))
        except GatewayClosedError as exc:
            return TurnOutcome("error", error=str(exc))
        finally:
            hub.unsubscribe(request.session_id, watcher)

    async def _until_idle(self, session_id: str, watcher: Watcher) -> None:
        """Wait for the session's running turns (a chat in a shared session) to finish.

        Their events are of no interest; the lane is checked after each one, and every
        IDLE_POLL seconds in case the last of them ended before we subscribed.
        """
        while self._gateway.busy(session_id):
            try:
                await asyncio.wait_for(watcher.queue.get(), IDLE_POLL)
            except TimeoutError:
                continue


def _terminal_outcome(
    event: object, notes: tuple[str, ...], shown: list[TurnNotice]
) -> TurnOutcome:
    if isinstance(event, TurnDone):
        # The delivery carries what a chat would show: the answer, then its lasting notices.
        return TurnOutcome("ok", text=with_notices(event.content, shown), notes=notes)
    if isinstance(event, TurnError):
        return TurnOutcome("error", error=event.error, notes=notes)
    return TurnOutcome("error", error="the turn was cancelled", notes=notes)


def _note(event: GatewayEvent, notes: list[str], shown: list[TurnNotice]) -> None:
    if isinstance(event, TurnNotice):
        shown.append(event)
    elif isinstance(event, ApprovalSettled) and event.outcome == "unattended":
        notes.append(_denial_note(event))


def _denial_note(event: ApprovalSettled) -> str:
    return (
        f"{event.tool} was denied without asking (nobody can approve in an unattended run): "
        f"{event.summary}"
    )


def _message(request: ScheduledTurn) -> InboundMessage:
    return InboundMessage(
        channel=request.channel,
        content=request.prompt,
        chat_id=request.chat_id,
        session_id=request.session_id,
        mode="followup",
        unattended=True,
        author=request.author,
        agent=request.agent,
    )
