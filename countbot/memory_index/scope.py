"""Conversations kept out of memory: neither indexed nor recalled into.

A session is kept out by its own switch (the web UI's, stored with it: `memory_off`), by its
channel's setting or by its job's (config.yaml `memory.private_channels`, `memory.private_jobs`),
and from every agent's index but its own agent's (`agents:` in config.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass

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
