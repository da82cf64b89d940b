"""Conversations kept out of memory: neither indexed nor recalled into.

A session is kept out by its own switch (the web UI's, stored with it: `memory_off`), by its
channel's setting or by its job's (config.yaml `memory.private_channels`, `memory.private_jobs`),
and from every agent's index but its own agent's (`agents:` in config.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from countbot.store.sessions import SessionStore

# A job's own session (`countbot/scheduler/book.py`): `cron:<job id>`.
JOB_SESSION_PREFIX = "cron:"


@dataclass(frozen=True, slots=True)
class KeptOut:
    """The channels and jobs whose conversations memory leaves alone."""

    channels: frozenset[str] = frozenset()
    jobs: frozenset[str] = frozenset()
    # The agent whose index this is: another agent's conversations are never in it.
    agent: str = "main"

    def covers(
        self, session_id: str, channel: str | None, switched_off: bool, agent: str = "main"
    ) -> bool:
        """Whether the session is kept out: another agent's, its switch, its channel's or its
        job's setting."""
        if (
            agent != self.agent
            or switched_off
            or (channel is not None and channel in self.channels)
        ):
            return True
        job = session_id.removeprefix(JOB_SESSION_PREFIX)
        return job != session_id and job in self.jobs


# Sessions whose being kept out of memory is remembered (`SessionScopes`) before the answers are
# read again.
SCOPES_REMEMBERED = 256


class SessionScopes:
    """Whether each session recalled into lately is kept out, read from the store once and
    remembered until the session changes (or another process writes to the store)."""

    def __init__(self, sessions: SessionStore, kept_out: KeptOut) -> None:
        self._sessions = sessions
        self._kept_out = kept_out
        self._known: dict[str, bool] = {}
        self._seen = -1  # the store's count of other processes' writes when they were read

    async def kept_out(self, session_id: str) -> bool:
        """Whether the session is kept out of memory, so nothing is recalled into it."""
        outside = self._sessions.outside_writes
        if outside != self._seen or len(self._known) > SCOPES_REMEMBERED:
            self._known.clear()
            self._seen = outside
        known = self._known.get(session_id)
        if known is None:
            info = await self._sessions.get(session_id)
            if info is None:  # not remembered: it may be made with a channel kept out
                return self._kept_out.covers(session_id, None, False, self._kept_out.agent)
            known = self._kept_out.covers(
                session_id, info.channel, bool(info.memory_off), info.agent
            )
            self._known[session_id] = known
        return known

    def changed(self, session_id: str, change: str) -> None:
        """The session changed: read its answer again, unless the change was a message (the
        store's "updated": its channel, agent and switch stay), on every turn's path."""
        if change != "updated":
            self._known.pop(session_id, None)
