"""The typed events one agent turn produces; surfaces render these for their medium."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from countbot.llm.types import ImagePart, Usage


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
    # Images the result carries (a browser screenshot): shown on the tool's card.
    images: tuple[ImagePart, ...] = ()
    type: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class TurnDone:
    content: str
    usage: Usage = field(default_factory=Usage)
    # The model that wrote the answer (a fallback's name when one took over); "" if none did.
    model: str = ""
    type: Literal["done"] = "done"


@dataclass(frozen=True, slots=True)
class TurnNotice:
    """Something the user should know about this turn that is not the answer.

    `code` lets a surface show its own wording (and links), with `details` for its arguments;
    `text` is the plain English version. A `transient` notice reports progress (a retry, a
    summary running); the others belong with the answer (`agent/notices.py`).
    """

    code: str
    text: str
    details: dict[str, Any] = field(default_factory=dict)
    transient: bool = False
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


def event_from_dict(data: dict[str, Any]) -> AgentEvent | None:
    """The event an `event_to_dict` frame came from (a daemon's or a replay buffer's); None for
    frames of other kinds."""
    kind = data.get("type")

    def text(key: str) -> str:
        return str(data.get(key, ""))

    if kind == "stream":
        return TextChunk(text("content"))
    if kind == "reasoning":
        return ReasoningChunk(text("content"))
    if kind == "tool_start":
        return ToolStart(text("tool_call_id"), text("name"), data.get("arguments", {}))
    if kind == "tool_result":
        duration = float(data.get("duration_ms", 0.0))
        images = tuple(
            ImagePart(str(i.get("media_type", "")), str(i.get("data", "")))
            for i in data.get("images") or ()
            if isinstance(i, dict)
        )
        return ToolEnd(
            text("tool_call_id"), text("name"), text("result"), text("status"), duration, images
        )
    if kind == "done":
        return TurnDone(text("content"), model=text("model"))
    if kind == "notice":
        details = data.get("details")
        details = details if isinstance(details, dict) else {}
        return TurnNotice(text("code"), text("text"), details, bool(data.get("transient")))
    if kind == "error":
        return TurnError(text("error"), bool(data.get("retryable")), text("code"))
    return TurnCancelled() if kind == "cancelled" else None


def event_to_dict(event: AgentEvent) -> dict[str, Any]:
    """A JSON-ready dict; usage is flattened with its total."""
    if type(event) is TextChunk or type(event) is ReasoningChunk:
        # Every streamed piece comes this way, for every watcher: asdict's copy is slower.
        return {"content": event.content, "type": event.type}
    data = asdict(event)
    if isinstance(event, TurnDone):
        data["usage"] = {**data["usage"], "total_tokens": event.usage.total_tokens}
    return data
