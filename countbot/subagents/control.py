"""The port between the subagent tools and the manager: what the model hands over and sees.

Apart from the tools themselves, so the manager (made when the daemon starts) imports no tool
code: the tools come with the turn machinery, at the first turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class SpawnRequest:
    """A task the model hands over; `tools` None means every tool a subagent may have."""

    task: str
    label: str
    tools: tuple[str, ...] | None
    parent_session: str
    channel: str | None = None
    chat_id: str | None = None


@dataclass(frozen=True, slots=True)
class SubagentInfo:
    """A subagent as the model sees it."""

    id: str
    label: str
    status: str
    task: str
    result: str = ""

    def line(self) -> str:
        return f"- {self.id} [{self.status}] {self.label}: {self.task[:200]}"


class SubagentControl(Protocol):
    """What the tools need from the subagent manager; refusals raise ValueError with a reason."""

    async def spawn(self, request: SpawnRequest) -> SubagentInfo: ...

    async def children(self, parent_session: str) -> list[SubagentInfo]: ...

    async def info(self, subagent_id: str) -> SubagentInfo | None: ...

    async def cancel(self, subagent_id: str) -> bool: ...
