"""`model.tool_calls`: which models get constrained calls, and the direct provider's form."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from countbot.constrained_calls.reply import (
    constrained_chunks,
    constrained_messages,
    response_format,
)
from countbot.llm.provider_path import is_local
from countbot.llm.types import ChatRequest, ToolSpec

ToolCallMode = Literal["native", "constrained", "auto"]


def uses_constrained(mode: ToolCallMode, model: str) -> bool:
    """Whether tool calls go through JSON output (`auto`: for local models only)."""
    return mode == "constrained" or (mode == "auto" and is_local(model))


class ConstrainedCalls:
    """The `ToolCallForm` of this mode: JSON output matching "one tool call or an answer"."""

    def request_fields(self, request: ChatRequest) -> dict[str, Any]:
        """The conversation rewritten for this mode and the `response_format` that enforces it."""
        return {
            "messages": constrained_messages(request.messages, request.tools),
            "response_format": response_format(request.tools),
        }

    def chunks(self, chunks: AsyncIterator[Any], tools: Sequence[ToolSpec]) -> AsyncIterator[Any]:
        """The JSON reply's chunks as an ordinary reply's."""
        return constrained_chunks(chunks, tools)


def tool_form(mode: ToolCallMode, model: str) -> ConstrainedCalls | None:
    """The form `model`'s tool calls take on the direct path: None for native calls."""
    return ConstrainedCalls() if uses_constrained(mode, model) else None
