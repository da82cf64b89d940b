"""What a tool is: a small class with a name, a description, a JSON-schema and `execute`.

Tools return errors as results the model can read and act on; they raise only `ToolTransientError`
for failures worth retrying (and only idempotent tools are retried).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from countbot.llm.types import ImagePart

if TYPE_CHECKING:
    from countbot.tools.approval import Approver

ToolStatus = Literal["ok", "error", "timeout", "cancelled", "skipped"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool answers; `images` (from MCP servers) reach vision models after the text."""

    content: str
    status: ToolStatus = "ok"
    duration_ms: float = 0.0
    images: tuple[ImagePart, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.status != "ok"

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(content=f"Error: {message}", status="error")


class ToolTransientError(Exception):
    """A failure that may succeed if tried again (network blip, busy resource)."""


@dataclass(slots=True)
class ToolContext:
    """Per-call facts a tool may need; built by the agent for each call.

    `cancelled` is set when the turn is cancelled, so long-running tools (a subprocess) can stop.
    `approver` asks the user where the turn came from; None (unattended turns) means deny.
    """

    session_id: str
    workspace: Path
    channel: str | None = None
    chat_id: str | None = None
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    approver: Approver | None = None


class Tool:
    """Base class for tools. Subclasses set the class attributes and implement `execute`."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    # Safe to run again after a transient failure (reads, fetches): the registry may retry it.
    idempotent: ClassVar[bool] = False
    # Seconds; None means the registry's default.
    timeout: float | None = None
    # "" for a core tool, offered with every request; else its group (an MCP server), whose
    # tools are offered when a request is about them (`agent/toolset.py`).
    group: str = ""

    def available(self) -> bool:
        """Whether the tool can work at all now; one that cannot is not offered to the model."""
        return True

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError
