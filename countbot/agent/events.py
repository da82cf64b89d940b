"""The typed events one agent turn produces; surfaces render these for their medium."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from countbot.llm.types import Usage


@dataclass(frozen=True, slots=True)
class TextChunk:
    content: str
    type: Literal["stream"] = "stream"


@dataclass(frozen=True, slots=True)
class ReasoningChunk:
    content: str
    type: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class ToolStart:
    tool_call_id: str
    name: str
    arguments: dict[str, Any] | str
    type: Literal["tool_start"] = "tool_start"


@dataclass(frozen=True, slots=True)
class ToolEnd:
    tool_call_id: str
    name: str
    result: str
    status: str
    duration_ms: float
    type: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class TurnDone:
    content: str
    usage: Usage = field(default_factory=Usage)
    type: Literal["done"] = "done"


@dataclass(frozen=True, slots=True)
class TurnNotice:
    """Something the user should know about this turn that is not the answer.

    `code` lets a surface show its own wording (and links); `text` is the plain English version.
    """

    code: str
    text: str
    type: Literal["notice"] = "notice"


@dataclass(frozen=True, slots=True)
class TurnError:
    error: str
    retryable: bool = False
    # A known cause a surface can explain in its own words ("no_model"); "" for anything else.
    code: str = ""
    type: Literal["error"] = "error"


@dataclass(frozen=True, slots=True)
class TurnCancelled:
    type: Literal["cancelled"] = "cancelled"


AgentEvent = (
    TextChunk
    | ReasoningChunk
    | ToolStart
    | ToolEnd
    | TurnNotice
    | TurnDone
    | TurnError
    | TurnCancelled
)

TERMINAL_TYPES = frozenset({"done", "error", "cancelled"})
# How a cancelled turn reads where only its final text is shown.
CANCELLED = "(cancelled)"


def final_text(event: AgentEvent) -> str | None:
    """What a turn ending with `event` amounts to as one text (an error or a cancel as a line
    saying so), for callers that print only the end; None for an event that ends nothing."""
    if isinstance(event, TurnDone):
        return event.content
    if isinstance(event, TurnError):
        return f"Error: {event.error}"
    if isinstance(event, TurnCancelled):
        return CANCELLED
    return None


def event_to_dict(event: AgentEvent) -> dict[str, Any]:
    """A JSON-ready dict; usage is flattened with its total."""
    data = asdict(event)
    if isinstance(event, TurnDone):
        data["usage"] = {**data["usage"], "total_tokens": event.usage.total_tokens}
    return data
