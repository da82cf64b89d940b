"""Subagents: background turns that report back into the session that spawned them.

A subagent runs its own AgentLoop (focused prompt, its tools, its limits) in its own session
`subagent:<id>` (`turn.py`), at most `subagents.max_concurrent` at once (the rest queue). When it
ends, done, error, timeout or cancelled, its report enters the parent session (`reports.py`).
Records live in SQLite: after a restart the subagents the daemon left running are marked
interrupted and their parents are told. A subagent belongs to its parent session's agent: its
session is that agent's, and its loop is made from that agent's house (its tools, workspace and
sandbox: `use_loops` per agent).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from countbot.agent.cancel import CancelToken
from countbot.agent.history import NoteEntry, to_record
from countbot.config.settings import MAIN, SubagentSettings
from countbot.gateway.events import SubagentUpdate
from countbot.gateway.gateway import Gateway
from countbot.gateway.steering import SteeringBox
from countbot.runtime.features import SharedPorts
from countbot.subagents.control import SpawnRequest, SubagentInfo
from countbot.subagents.reports import Reports
from countbot.subagents.store import (
    CHANNEL,
    SESSION_PREFIX,
    SubagentRecord,
    SubagentStatus,
    SubagentStore,
)
from countbot.subagents.turn import NO_ANSWER, Outcome, run_subagent

if TYPE_CHECKING:  # the turn machinery: built at the daemon's first turn
    from countbot.subagents.loops import SubagentLoops

log = logging.getLogger(__name__)

STOPPED_BY_USER = "stopped by the user"
SHUTDOWN = "the daemon stopped while it was running"


@dataclass(slots=True)
class _Run:
    record: SubagentRecord
    # The agent whose house it runs in (its parent session's).
    agent: str = MAIN
    token: CancelToken = field(default_factory=CancelToken)
    # Reports of its own subagents, read before its next model call.
    steering: SteeringBox = field(default_factory=SteeringBox)
    task: asyncio.Task[None] | None = None
    # Stopped together with its parent's turn (/stop): the parent gets a note, not a new turn.
    quiet: bool = False


class SubagentManager:
    """Spawns, queues, starts and stops subagents, and hands each ending to `Reports` (see
    the module docstring)."""

    def __init__(
        self, ports: SharedPorts, store: SubagentStore, settings: SubagentSettings
    ) -> None:
        """Made when the runtime opens; `start` with the daemon's gateway runs it, and its
        tools run subagents once `use_loops` gave it the turn machinery's loop maker."""
        self._sessions = ports.sessions
        self._store = store
        self._settings = settings
        self._loops_by_agent: dict[str, SubagentLoops] = {}
        self._gateway_or_none: Gateway | None = None
        self._runs: dict[str, _Run] = {}
        self._waiting: deque[str] = deque()
        self._closing = False
        self._reports = Reports(store, ports.deliveries, lambda: self._gateway, self._inbox)

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def _gateway(self) -> Gateway:
        if self._gateway_or_none is None:
            raise ValueError("subagents run in the daemon (`countbot run`), which has not started")
        return self._gateway_or_none

    def use_loops(self, loops: SubagentLoops, agent: str = MAIN) -> None:
        """Make agent `agent`'s subagents' loops with `loops` (given when its house's turn
        machinery is built)."""
        self._loops_by_agent[agent] = loops

    def _loops(self, agent: str) -> SubagentLoops:
        loops = self._loops_by_agent.get(agent)
        if loops is None:  # only the spawn tool spawns: it comes with the loops
            raise ValueError("subagents need the turn machinery, which is not built yet")
        return loops

    async def agent_of(self, session_id: str) -> str:
        """The agent a session (a parent's, a subagent's) belongs to."""
        info = await self._sessions.get(session_id)
        return info.agent if info is not None else MAIN

    async def start(self, gateway: Gateway) -> None:
        """Close what a stopped daemon left running and deliver every report still owed."""
        self._gateway_or_none = gateway
        await self._store.interrupt_active(SHUTDOWN)
        for record in await self._store.unreported():
            await self._reports.report(record)
        self._gateway.add_cancel_listener(self.stop_children)

    async def close(self, grace: float) -> None:
        """Stop every subagent; the next start reports them as interrupted."""
        self._closing = True
        self._waiting.clear()
        tasks = [run.task for run in self._runs.values() if run.task is not None]
        for run in self._runs.values():
            run.token.cancel(SHUTDOWN)
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        self._reports.close()

    # --- the SubagentControl port of the tools ------------------------------------------------

    async def spawn(self, request: SpawnRequest) -> SubagentInfo:
        if self._closing:
            raise ValueError("the daemon is shutting down; no new subagents")
        depth = await self._store.depth_of(request.parent_session) + 1
        if depth > self._settings.max_depth:
            raise ValueError(
                f"subagents may not spawn more subagents (subagents.max_depth is "
                f"{self._settings.max_depth}); do the work yourself"
            )
        agent = await self.agent_of(request.parent_session)
        if request.tools is not None:
            self._loops(agent).check_tools(request.tools, depth)
        subagent_id = secrets.token_hex(4)
        record = SubagentRecord(
            id=subagent_id,
            parent_session=request.parent_session,
            session_id=f"{SESSION_PREFIX}{subagent_id}",
            label=request.label,
            task=request.task,
            tools=request.tools,
            depth=depth,
            channel=request.channel,
            chat_id=request.chat_id,
            status="queued",
            created_at=time.time(),
        )
        await self._sessions.create(
            record.session_id, title=f"Subagent: {record.label}", channel=CHANNEL, agent=agent
        )
        await self._store.add(record)
        self._runs[subagent_id] = _Run(record, agent)
        self._waiting.append(subagent_id)
        self._announce(record)
        await self._pump()
        return _info(self._runs[subagent_id].record)

    async def children(self, parent_session: str) -> list[SubagentInfo]:
        return [_info(r) for r in await self.list(parent_session=parent_session)]

    async def info(self, subagent_id: str) -> SubagentInfo | None:
        record = await self.get(subagent_id)
        return _info(record) if record is not None else None

    async def cancel(self, subagent_id: str) -> bool:
        """Stop a queued or running subagent; False if none by that id is queued or running."""
        run = self._runs.get(subagent_id)
        if run is None or not self._stop(run, quiet=False):
            return False
        if run.task is not None and run.record.status == "queued":
            await asyncio.wait({run.task})  # its record says cancelled before we answer
        return True

    # --- for the surfaces ---------------------------------------------------------------------

    async def list(
        self, *, parent_session: str | None = None, active_only: bool = False
    ) -> list[SubagentRecord]:
        """Newest first, with live states for the ones this daemon runs."""
        records = await self._store.list(parent_session=parent_session, active_only=active_only)
        return [self._live(r) for r in records]

    async def get(self, subagent_id: str) -> SubagentRecord | None:
        record = await self._store.get(subagent_id)
        return self._live(record) if record is not None else None

    async def parents(self, session_ids: list[str]) -> dict[str, str]:
        """The parent session of each subagent session among `session_ids`."""
        wanted = [s for s in session_ids if s.startswith(SESSION_PREFIX)]
        return await self._store.parents(wanted)

    def stop_children(self, session_id: str) -> bool:
        """Stop the subagents `session_id` spawned, and theirs (a gateway cancel listener).

        The user stopped the chat: each parent gets a note, not a report turn.
        """
        parents, stopped = {session_id}, False
        for run in sorted(self._runs.values(), key=lambda r: r.record.depth):
            if run.record.parent_session in parents:
                parents.add(run.record.session_id)
                stopped = self._stop(run, quiet=True) or stopped
        return stopped

    def _stop(self, run: _Run, *, quiet: bool) -> bool:
        if run.token.cancelled:
            return False
        run.quiet = quiet
        run.token.cancel(STOPPED_BY_USER)
        if run.record.id in self._waiting:
            self._waiting.remove(run.record.id)
            ending = self._finish(run, "cancelled", "it was stopped before it started")
            run.task = asyncio.create_task(ending, name=f"subagent:{run.record.id}")
        return True

    # --- running ------------------------------------------------------------------------------

    async def _pump(self) -> None:
        """Start waiting subagents while there are free slots."""
        running = sum(1 for run in self._runs.values() if run.task is not None)
        while self._waiting and running < self._settings.max_concurrent and not self._closing:
            run = self._runs[self._waiting.popleft()]
            run.record = replace(run.record, status="running", started_at=time.time())
            await self._store.started(run.record.id)
            self._announce(run.record)
            run.task = asyncio.create_task(self._run(run), name=f"subagent:{run.record.id}")
            running += 1

    async def _run(self, run: _Run) -> None:
        record = run.record
        outcome: Outcome = NO_ANSWER
        try:
            loop = self._loops(run.agent).build(
                task=record.task,
                label=record.label,
                tools=record.tools,
                depth=record.depth,
                parent=record.parent_session,
                spends_for=await self._store.root_of(record.parent_session),
            )
            hub, limit = self._gateway.hub, self._settings.timeout
            outcome = await run_subagent(loop, record, run.token, run.steering, hub, limit)
        except Exception as exc:  # a broken subagent must still report
            log.exception("subagent %s failed", record.id)
            outcome = ("error", f"internal error: {exc}")
        if run.token.reason == SHUTDOWN:
            outcome = ("interrupted", SHUTDOWN)
        await self._finish(run, *outcome)

    async def _finish(self, run: _Run, status: SubagentStatus, result: str) -> None:
        record = replace(run.record, status=status, result=result, ended_at=time.time())
        run.record = record
        await self._store.ended(record.id, status, result)
        self._runs.pop(record.id, None)
        self._announce(record)
        for unread in run.steering.take_back():  # its subagents' reports go up to its parent
            await self._reports.deliver(unread)
        if status == "interrupted":
            return  # reported after the restart, when the gateway takes turns again
        if run.quiet:
            note = NoteEntry(f"Subagent {record.id} ({record.label}) was stopped.")
            await self._sessions.append(record.parent_session, to_record(note))
            await self._store.mark_reported(record.id)
        else:
            await self._reports.report(record)
        if not self._closing:
            await self._pump()

    def _inbox(self, subagent_id: str) -> SteeringBox | None:
        """The inbox of a subagent still running: a report to it is read before its next model
        call (None: it is not running, and the report goes on to its parent)."""
        run = self._runs.get(subagent_id)
        if run is not None and run.record.status == "running" and not run.token.cancelled:
            return run.steering
        return None

    def _live(self, record: SubagentRecord) -> SubagentRecord:
        run = self._runs.get(record.id)
        return run.record if run is not None else record

    def _announce(self, record: SubagentRecord) -> None:
        update = SubagentUpdate(record.id, record.label, record.status, record.session_id)
        self._gateway.hub.publish(record.parent_session, update)


def _info(record: SubagentRecord) -> SubagentInfo:
    return SubagentInfo(record.id, record.label, record.status, record.task, record.result)
