"""What a tool is: a small class with a name, a description, a JSON-schema and `execute`.

Tools return errors as results the model can read and act on; they raise only `ToolTransientError`
for failures worth retrying (and only idempotent tools are retried).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from countbot.common.authorship import Said
from countbot.llm.types import ImagePart

if TYPE_CHECKING:
    from countbot.tools.approval import Approver

ToolStatus = Literal["ok", "error", "timeout", "cancelled", "skipped"]
# What a tool's result brings into the model's context, for the data-flow policy
# (`countbot/dataflow/`): text strangers wrote, or the user's own data.
Brings = frozenset[Literal["untrusted", "private"]]
EgressKind = Literal["url", "search", "chat", "mcp", "exec", "standing"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool answers; `images` (from MCP servers) reach vision models after the text."""

    content: str
    status: ToolStatus = "ok"
    duration_ms: float = 0.0
    images: tuple[ImagePart, ...] = ()
    # Who wrote text in it that is not the owner's, when the tool knows it from where the text
    # was stored (memory_search's hits of a forward): the ledger counts each as untrusted.
    untrusted: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.status != "ok"

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(content=f"Error: {message}", status="error")


@dataclass(frozen=True, slots=True)
class Egress:
    """What one call would send out of the machine (or into the instructions later turns
    follow, `standing`): where to, and the text that would go.

    `destination` is a host name (url), `search`, `<channel>:<chat_id>` (chat), `mcp:<server>`,
    `network` (exec) or a workspace file (standing); `payload` is the text the other side would
    see (URL, query, message, arguments, command, new text). `opaque`: part of it cannot be read
    in advance (files sent, whatever a command does on the network, what later turns will do).
    """

    kind: EgressKind
    destination: str
    payload: str
    opaque: bool = False
    # The tool itself will refuse this call (why): nothing leaves, the refusal is only recorded.
    refused: str | None = None


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
    # The registry's gate keeps its per-turn state here (the data-flow ledger of the turn).
    gate_state: Any = None
    # Messages steered into the running turn, in order, for the gate to read.
    steered: list[Said] = field(default_factory=list)


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

    # What the result brings into the model's context (see `Brings`); empty: neither.
    brings: Brings = frozenset()
    # Argument fields whose text becomes memory later turns read (marked when untrusted).
    remembers: ClassVar[tuple[str, ...]] = ()

    async def brought(self, args: dict[str, Any]) -> Brings:
        """What this call's result brings (`brings`, unless it depends on the arguments)."""
        return self.brings

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress | None:
        """What this call would send out of the machine; None: nothing leaves it."""
        return None

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError
