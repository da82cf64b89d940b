"""Provider-neutral message, request and stream-event types.

Everything above `llm/` speaks these types; only a provider implementation converts them to a
vendor's wire format, so a session can switch model or provider mid-conversation and replay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from countbot.common.charge import Charge

StopReason = Literal["stop", "tool_calls", "length", "content_filter", "error", "cancelled"]


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image given inline (base64 `data`) or by `url`; `media_type` like `image/png`."""

    media_type: str
    data: str = ""
    url: str = ""
    type: Literal["image"] = "image"


ContentPart = TextPart | ImagePart


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as the model produced it.

    `arguments_raw` is kept verbatim so history replays exactly; `arguments` is the parsed (and
    where possible repaired) object, or None with `parse_error` saying what was wrong.
    """

    id: str
    name: str
    arguments_raw: str
    arguments: dict[str, Any] | None = None
    parse_error: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """One or more calls' tokens and price. `cached_tokens` (read from the provider's prompt
    cache), `cache_write_tokens` (written to it) and `recall_tokens` (the auto-recall block) are
    shares of `prompt_tokens`, billed or shown apart."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    cache_write_tokens: int = 0
    recall_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def charged_to(self, session_id: str, model: str) -> Charge:
        """These tokens and this price, by `model`, counted against session `session_id`."""
        return Charge(
            session_id,
            model,
            self.prompt_tokens,
            self.completion_tokens,
            self.cost_usd,
            self.cached_tokens,
            self.cache_write_tokens,
            self.recall_tokens,
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cost_usd + other.cost_usd,
            self.cache_write_tokens + other.cache_write_tokens,
            self.recall_tokens + other.recall_tokens,
        )


# --- messages a request is built from -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SystemMessage:
    content: str
    role: Literal["system"] = "system"


@dataclass(frozen=True, slots=True)
class UserMessage:
    content: tuple[ContentPart, ...]
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """What the model said; `model`/`provider` record who said it."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    model: str = ""
    provider: str = ""
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """A tool's answer. Tool messages carry only text on most wire formats, so a provider sends
    `images` in a user message right after the tool results (`llm/openai_format.py`)."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    role: Literal["tool"] = "tool"
    images: tuple[ImagePart, ...] = ()


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may call: name, description and a JSON-schema `parameters` object."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ChatRequest:
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None


# --- stream events a provider yields ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A tool call fully reassembled from its streamed fragments."""

    tool_call: ToolCall
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class UsageReport:
    usage: Usage
    type: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True)
class StreamRetry:
    """A failed attempt will be tried again after `delay` seconds (nothing was shown of it)."""

    model: str
    attempt: int
    cause: str
    delay: float
    type: Literal["retry"] = "retry"


@dataclass(frozen=True, slots=True)
class StreamFallback:
    """`model`, a fallback, is tried next because the one before it failed with `cause`."""

    model: str
    cause: str
    type: Literal["fallback"] = "fallback"


@dataclass(frozen=True, slots=True)
class StreamDone:
    """The final event of a successful stream: the complete assistant message."""

    message: AssistantMessage
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)
    type: Literal["done"] = "done"


@dataclass(frozen=True, slots=True)
class StreamError:
    """The final event of a failed stream. Providers never raise; they end with this."""

    message: str
    retryable: bool
    status_code: int | None = None
    model: str = ""
    partial_text: str = ""
    type: Literal["error"] = "error"


StreamEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallReady
    | UsageReport
    | StreamRetry
    | StreamFallback
    | StreamDone
    | StreamError
)
