"""The gateway: every turn of every surface goes through here, one lane per session.

Surfaces hand in `InboundMessage`s and watch sessions through the `EventHub`; the gateway asks
`AgentLoops` for the loop of the session's agent, runs the turn on it under a watchdog and
publishes its events, always ending a turn with exactly one terminal event (done, error or
cancelled) even when it hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Protocol

from countbot.agent.events import TERMINAL_TYPES, AgentEvent, TurnCancelled, TurnError
from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import GatewaySettings
from countbot.gateway.events import GatewayEvent, MessageAccepted
from countbot.gateway.lanes import RunningTurn, SessionLane
from countbot.gateway.messages import InboundMessage, QueueMode
from countbot.gateway.watchdog import DEADLINE_REASON, supervise
from countbot.gateway.watchers import EventHub, Watcher
from countbot.runtime.approvals import ApprovalBroker, ApprovalEvent, TurnAddress
from countbot.tools.approval import Approver

log = logging.getLogger(__name__)

# Seconds between the watchdog's cancel-token step and its task-cancel step.
KILL_GRACE = 5.0
# A session whose surface names no agent, created before there were several.
MAIN_AGENT = "main"
# Sessions remembered as registered (least recent forgotten: its next message registers again).
REGISTERED_SESSIONS = 256


class TurnLoop(Protocol):
    """What runs one turn: an agent's `AgentLoop` (`agent/loop.py`)."""

    def process_message(self, request: TurnRequest) -> AsyncIterator[AgentEvent]: ...


class AgentLoops(Protocol):
    """Where the gateway finds the loop of a session's agent (`agents/houses.py`: built at that
    agent's first turn)."""

    async def loop(self, agent: str) -> TurnLoop:
        """Agent `agent`'s loop; LookupError, saying why, when that agent cannot answer."""
        ...


@dataclass(frozen=True, slots=True)
class OneLoop:
    """Every agent's turns on `turns`: a process with one agent (`countbot cron run`), or a
    stand-in for every agent's loop (`serve_daemon(turns=...)`, the daemon's benchmark)."""

    turns: TurnLoop

    async def loop(self, agent: str) -> TurnLoop:
        return self.turns


class SessionDirectory(Protocol):
    """Where sessions are registered (the store's SessionStore)."""

    async def ensure(
        self,
        session_id: str,
        *,
        channel: str | None = None,
        chat_id: str | None = None,
        agent: str = MAIN_AGENT,
    ) -> RegisteredSession: ...


class RegisteredSession(Protocol):
    """What the gateway reads of a registered session: whose it is."""

    @property
    def agent(self) -> str: ...


class GatewayClosedError(RuntimeError):
    """The daemon is shutting down and takes no new turns."""


class WrongAgentError(ValueError):
    """A message was routed to one agent and addressed to another agent's session: refused,
    never run (one agent's turn would read the other's conversation)."""


@dataclass(frozen=True, slots=True)
class Submission:
    """Where a message went: its session, and whether it waits behind a running turn."""

    session_id: str
    queued: bool
    mode: QueueMode


class Gateway:
    """Session lanes, queue modes, cancel, watchdog and event fan-out (see the module docstring)."""

    def __init__(
        self,
        loops: AgentLoops,
        sessions: SessionDirectory,
        settings: GatewaySettings,
        *,
        hub: EventHub | None = None,
        kill_grace: float = KILL_GRACE,
        approvals: ApprovalBroker | None = None,
    ) -> None:
        self.hub = hub or EventHub()
        # Asks the user on a turn's behalf; without it every approval is denied.
        self.approvals = approvals
        self._loops = loops
        self._sessions = sessions
        # Read on every use, so a settings change applies to the next message.
        self._settings = settings
        self._kill_grace = kill_grace
        self._lanes: dict[str, SessionLane] = {}
        # Registered sessions (least recent first) and the agent each belongs to.
        self._registered: OrderedDict[str, str] = OrderedDict()
        self._accepting = True
        self._cancel_listeners: list[Callable[[str], bool]] = []
        # How many turns have ended since start (the daemon trims its heap after a busy spell).
        self.turns_ended = 0

    @property
    def accepting(self) -> bool:
        return self._accepting

    def busy(self, session_id: str) -> bool:
        lane = self._lanes.get(session_id)
        return lane is not None and lane.busy

    @property
    def running_turns(self) -> int:
        """How many turns are running now (for the shutdown message)."""
        return sum(1 for lane in self._lanes.values() if lane.running is not None)

    async def submit(
        self,
        message: InboundMessage,
        *,
        origin: Watcher | None = None,
        client_id: str | None = None,
    ) -> Submission:
        """Start or queue a turn for `message`.

        `origin` (the sender's watcher) is subscribed to the session and gets an acknowledgement
        carrying `client_id` where every other watcher sees the message itself.
        """
        if not self._accepting:
            raise GatewayClosedError("the daemon is shutting down")
        session_id = message.session_id or uuid.uuid4().hex[:12]
        agent = await self._register(session_id, message)
        if message.agent is not None and message.agent != agent:
            log.warning(
                "message for agent %s refused: session %s belongs to agent %s",
                message.agent,
                session_id,
                agent,
            )
            raise WrongAgentError(f"session {session_id!r} belongs to another agent")
        if agent != message.agent:
            message = replace(message, agent=agent)
        mode = message.mode or self._settings.queue_mode
        lane = self._lanes.get(session_id)
        if lane is None:
            lane = self._lanes[session_id] = SessionLane(session_id, self._run_turn, self._idle)
        queued = lane.submit(message, mode)
        if origin is not None:
            self.hub.follow_sent(session_id, origin)
        accepted = MessageAccepted(
            message.content,
            message.channel,
            queued,
            mode,
            message.media,
            origin,
            client_id,
            message.parts,
            message.author,
        )
        lane.accepted(message, self.hub.publish(session_id, accepted).seq)
        return Submission(session_id, queued, mode)

    async def _register(self, session_id: str, message: InboundMessage) -> str:
        """The session's agent, registering the session (as the message's agent's) first."""
        agent = self._registered.get(session_id)
        if agent is not None:
            self._registered.move_to_end(session_id)
            return agent
        info = await self._sessions.ensure(
            session_id,
            channel=message.channel,
            chat_id=message.chat_id,
            agent=message.agent or MAIN_AGENT,
        )
        # Once is enough: storing a message recreates a session deleted in the meantime.
        self._registered[session_id] = info.agent
        if len(self._registered) > REGISTERED_SESSIONS:
            self._registered.popitem(last=False)
        if not self._accepting:
            raise GatewayClosedError("the daemon is shutting down")
        return info.agent

    def replay_turn(self, session_id: str, watcher: Watcher) -> None:
        """Send `watcher` the running turn so far, after the messages not yet stored (waiting,
        or running with their user entry maybe not written): a page opened now shows them."""
        lane = self._lanes.get(session_id)
        self.hub.replay_turn(session_id, watcher, lane.unstored_seqs() if lane else ())

    def cancel(self, session_id: str) -> bool:
        """Cancel the session's running turn and what listeners stop with it; False if nothing was
        running."""
        lane = self._lanes.get(session_id)
        stopped = lane is not None and lane.cancel()
        for listener in self._cancel_listeners:
            stopped = listener(session_id) or stopped
        return stopped

    def add_cancel_listener(self, listener: Callable[[str], bool]) -> None:
        """Also call `listener(session_id)` on every cancel; it returns whether it stopped work
        (the subagents a chat started stop with it)."""
        self._cancel_listeners.append(listener)

    async def close(self, grace: float) -> None:
        """Take no more turns; let the running ones finish within `grace` s, then cancel them.

        Messages waiting behind a running turn are dropped (they are stored; the user sends them
        again). A turn still running after the grace gets its cancel token, so it ends with
        `cancelled` and keeps its partial text; one that ignores that too is cancelled hard.
        """
        self._accepting = False
        lanes = list(self._lanes.values())
        for lane in lanes:
            lane.close()
        workers = [w for lane in lanes if (w := lane.worker) is not None]
        if not workers:
            return
        _, late = await asyncio.wait(workers, timeout=grace)
        if not late:
            return
        for lane in lanes:
            lane.cancel("the daemon is shutting down")
        _, late = await asyncio.wait(late, timeout=self._kill_grace)
        if not late:
            return
        for lane in lanes:
            if lane.running is not None and lane.running.task is not None:
                lane.running.task.cancel()
        await asyncio.wait(late, timeout=self._kill_grace)

    # --- running one turn -----------------------------------------------------------------

    async def _run_turn(self, session_id: str, turn: RunningTurn) -> None:
        turn.task = asyncio.create_task(self._stream(session_id, turn), name=f"turn:{session_id}")
        deadline = self._settings.turn_deadline
        outcome = await supervise(turn.task, turn.token, deadline, self._kill_grace)
        if outcome != "finished":
            log.warning(
                "turn in session %s passed its %gs deadline: %s", session_id, deadline, outcome
            )
        if not turn.ended:
            reason = _deadline_text(deadline) if outcome != "finished" else "the turn ended early"
            # Not retryable: the same request would most likely run as long again.
            self._publish(session_id, turn, TurnError(reason, retryable=False))
            turn.silenced = True
        self.turns_ended += 1

    async def _stream(self, session_id: str, turn: RunningTurn) -> None:
        request = self._request(session_id, turn)
        try:
            loop = await self._loops.loop(request.agent)
        except LookupError as exc:
            log.warning("turn in session %s refused: %s", session_id, exc)
            self._publish(session_id, turn, TurnError(str(exc), retryable=False))
            return
        events = loop.process_message(request)
        async with contextlib.aclosing(events):  # type: ignore[type-var]
            async for event in events:
                if turn.silenced:
                    return
                if isinstance(event, TurnCancelled) and turn.token.reason == DEADLINE_REASON:
                    event = TurnError(_deadline_text(self._settings.turn_deadline), False)
                self._publish(session_id, turn, event)

    def _request(self, session_id: str, turn: RunningTurn) -> TurnRequest:
        """The turn's request to the loop: the message, and what reaches the running turn."""
        message = turn.message
        return TurnRequest(
            message.content,
            session_id,
            context=message.context,
            media=tuple(message.media),
            channel=message.channel,
            chat_id=message.chat_id,
            cancel_token=turn.token,
            unattended=message.unattended,
            steering=turn.steering,
            approver=self._approver(session_id, turn),
            model=message.model,
            allowed_tools=message.allowed_tools,
            author=message.author,
            parts=message.parts,
            agent=message.agent or MAIN_AGENT,
        )

    def _approver(self, session_id: str, turn: RunningTurn) -> Approver | None:
        """The turn's questions go into its session's event stream, where its surfaces watch."""
        if self.approvals is None:
            return None
        message = turn.message
        address = TurnAddress(
            session_id,
            message.channel,
            message.chat_id,
            message.unattended,
            message.agent or MAIN_AGENT,
        )

        def show(event: ApprovalEvent) -> None:
            if not turn.silenced:
                self.hub.publish(session_id, event)

        return self.approvals.approver(address, cancelled=turn.token.event, show=show)

    def _publish(self, session_id: str, turn: RunningTurn, event: GatewayEvent) -> None:
        if turn.silenced or turn.ended:
            return
        self.hub.publish(session_id, event)
        turn.ended = event.type in TERMINAL_TYPES

    def _idle(self, lane: SessionLane) -> None:
        if not lane.busy and self._lanes.get(lane.session_id) is lane:
            del self._lanes[lane.session_id]


def _deadline_text(deadline: float) -> str:
    return f"the turn took longer than {deadline:g} s and was stopped"
