"""Collects one streamed litellm response: text and reasoning as deltas, tool calls by index.

Providers send a tool call's id and name once and its arguments in many fragments, keyed by an
index; some reuse index 0 with a new id for each parallel call. This puts them back together so
the provider loop only deals with timing and failures.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from countbot.llm.tool_args import parse_tool_call
from countbot.llm.types import ReasoningDelta, StopReason, TextDelta, ToolCall, Usage


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAccumulator:
    """Feed it chunks with `add`; read the assembled message once the stream has ended."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_PartialCall] = []
        self._by_index: dict[int, int] = {}
        self._finish_reason: str | None = None
        self.usage: Usage | None = None

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    def add(self, chunk: Any) -> list[TextDelta | ReasoningDelta]:
        """Take one chunk; return the text and reasoning deltas it carried, to show right away."""
        deltas: list[TextDelta | ReasoningDelta] = []
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = _usage(usage)
        for choice in getattr(chunk, "choices", None) or ():
            self._finish_reason = getattr(choice, "finish_reason", None) or self._finish_reason
            delta = getattr(choice, "delta", None)
            if delta is None:
                continue
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning:
                self._reasoning.append(reasoning)
                deltas.append(ReasoningDelta(reasoning))
            content = getattr(delta, "content", None)
            if content:
                self._text.append(content)
                deltas.append(TextDelta(content))
            for fragment in getattr(delta, "tool_calls", None) or ():
                self._add_fragment(fragment)
        return deltas

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The reassembled calls, arguments parsed or repaired; nameless fragments are dropped."""
        return tuple(
            parse_tool_call(
                call.id or f"call_{uuid.uuid4().hex[:12]}", call.name, "".join(call.arguments)
            )
            for call in self._calls
            if call.name
        )

    def stop_reason(self, has_tool_calls: bool) -> StopReason:
        # Some providers finish a tool-calling response with "stop".
        if has_tool_calls or self._finish_reason in ("tool_calls", "function_call"):
            return "tool_calls"
        return "length" if self._finish_reason == "length" else "stop"

    def _add_fragment(self, fragment: Any) -> None:
        call = self._calls[self._position(fragment)]
        function = getattr(fragment, "function", None)
        name = getattr(function, "name", None)
        if name and not call.name:
            call.name = name
        arguments = getattr(function, "arguments", None)
        if arguments:
            call.arguments.append(arguments)

    def _position(self, fragment: Any) -> int:
        """Which call a fragment belongs to: by index, unless a new id says it is another call."""
        index = getattr(fragment, "index", None) or 0
        call_id = getattr(fragment, "id", None) or ""
        position = self._by_index.get(index)
        # Some providers send every parallel call at index 0, each with its own id.
        if position is None or (call_id and self._calls[position].id not in ("", call_id)):
            position = len(self._calls)
            self._calls.append(_PartialCall(id=call_id))
            self._by_index[index] = position
        call = self._calls[position]
        call.id = call.id or call_id
        return position


def _usage(raw: Any) -> Usage:
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(raw, "cache_read_input_tokens", 0)
    return Usage(
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cached_tokens=int(cached or 0),
    )
