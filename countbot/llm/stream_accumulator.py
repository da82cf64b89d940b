"""Collects one streamed litellm response: text and reasoning as deltas, tool calls by index.

Providers send a tool call's id and name once and its arguments in many fragments, keyed by an
index; some reuse index 0 with a new id for each parallel call. This puts them back together so
the provider loop only deals with timing and failures.

It also decides whether a stream that ended is a complete answer (`ending_failure`): a stream
cut off before the provider's finish, an empty one and a body that is no stream at all must
never be stored as an answer. Every provider shares this, so the rules hold on every path. Text
is repaired as it arrives (`StreamTextRepair`): an emoji whose UTF-16 halves land in two chunks
is joined, a lone surrogate becomes U+FFFD.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from countbot.llm.errors import ModelFailure
from countbot.llm.tool_args import parse_tool_call
from countbot.llm.types import ReasoningDelta, StopReason, TextDelta, ToolCall, Usage
from countbot.llm.unicode_repair import StreamTextRepair, repair_text

_JSON_TYPES = ("application/json",)


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
        self._text_repair = StreamTextRepair()
        self._reasoning_repair = StreamTextRepair()
        self.usage: Usage | None = None

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    def add(self, chunk: Any) -> list[TextDelta | ReasoningDelta]:
        """Take one chunk; return the text and reasoning deltas it carried, to show right away."""
        return self._take(chunk, "delta")

    def add_completion(self, response: Any) -> list[TextDelta | ReasoningDelta]:
        """Take a whole non-streamed completion, as if it had been streamed in one chunk."""
        return self._take(response, "message")

    def _take(self, payload: Any, part: str) -> list[TextDelta | ReasoningDelta]:
        """A chunk's `delta`s or a completion's `message`s: the same fields either way."""
        deltas: list[TextDelta | ReasoningDelta] = []
        usage = getattr(payload, "usage", None)
        if usage is not None:
            self.usage = _usage(usage)
        for choice in getattr(payload, "choices", None) or ():
            self._finish_reason = getattr(choice, "finish_reason", None) or self._finish_reason
            content = getattr(choice, part, None)
            if content is None:
                continue
            self._add_text(
                getattr(content, "reasoning_content", None),
                getattr(content, "content", None),
                deltas,
            )
            # A completion's calls carry no index but each its own id, which `_position` uses.
            for fragment in getattr(content, "tool_calls", None) or ():
                self._add_fragment(fragment)
        return deltas

    def close(self) -> list[TextDelta | ReasoningDelta]:
        """The text still held back at the end (half of a character pair), repaired."""
        deltas: list[TextDelta | ReasoningDelta] = []
        self._add_text(self._reasoning_repair.flush(), self._text_repair.flush(), deltas)
        return deltas

    @property
    def finished(self) -> bool:
        """Whether a chunk (or the completion) carried the provider's finish reason."""
        return self._finish_reason is not None

    @property
    def received(self) -> bool:
        """Whether any text, reasoning or tool call has arrived."""
        return bool(self._text or self._reasoning or self._calls)

    def ending_failure(self, *, finished: bool, content_type: str) -> ModelFailure | None:
        """Why the ended stream is not a complete answer, or None when it is.

        A whole JSON answer (`is_whole_answer`) must have been taken in before this is asked.
        `finished`: the provider itself sent a finish reason (litellm invents "stop" for a stream
        that just stopped, so the provider tells us what really arrived). `content_type`: the
        response's media type.
        """
        media_type = _media_type(content_type)
        received = self.received
        if media_type and media_type != "text/event-stream" and not received:
            return ModelFailure(
                f"The model server answered with {media_type} instead of a stream of "
                "events; check model.api_base",
                retryable=False,
                kind="not_a_stream",
            )
        if not finished and not received:
            return ModelFailure("The model sent an empty answer", retryable=True, kind="cut_off")
        if not finished:
            return ModelFailure(
                "The model's answer was cut off before it finished (the connection ended "
                "mid-answer)",
                retryable=True,
                kind="cut_off",
            )
        return None

    def arguments_chars(self) -> int:
        """How much argument text the calls carry: what parsing them will cost."""
        return sum(len(part) for call in self._calls for part in call.arguments)

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The reassembled calls, arguments parsed or repaired; nameless fragments are dropped."""
        return tuple(
            parse_tool_call(
                call.id or f"call_{uuid.uuid4().hex[:12]}",
                call.name,
                repair_text("".join(call.arguments)),
            )
            for call in self._calls
            if call.name
        )

    def stop_reason(self, has_tool_calls: bool) -> StopReason:
        # Some providers finish a tool-calling response with "stop".
        if has_tool_calls or self._finish_reason in ("tool_calls", "function_call"):
            return "tool_calls"
        if self._finish_reason in ("length", "content_filter"):
            return self._finish_reason
        return "stop"

    def _add_text(
        self,
        reasoning: str | None,
        content: str | None,
        deltas: list[TextDelta | ReasoningDelta],
    ) -> None:
        if reasoning and (reasoning := self._reasoning_repair.feed(reasoning)):
            self._reasoning.append(reasoning)
            deltas.append(ReasoningDelta(reasoning))
        if content and (content := self._text_repair.feed(content)):
            self._text.append(content)
            deltas.append(TextDelta(content))

    def _add_fragment(self, fragment: Any) -> None:
        call = self._calls[self._position(fragment)]
        function = getattr(fragment, "function", None)
        name = getattr(function, "name", None)
        if name and not call.name:
            call.name = repair_text(name)
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


def is_whole_answer(content_type: str) -> bool:
    """The server sent one JSON completion although a stream was asked for (some proxies do).

    That is a valid answer: a provider reads it (or fetches it again without streaming, where its
    stream parser drops it) and hands it over as a `WholeCompletion`.
    """
    return _media_type(content_type) in _JSON_TYPES


def _media_type(content_type: str) -> str:
    return content_type.partition(";")[0].strip().lower()


def _usage(raw: Any) -> Usage:
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(raw, "cache_read_input_tokens", 0)
    # Anthropic's cache writes (litellm counts them in `prompt_tokens`, as it does the reads).
    written = getattr(raw, "cache_creation_input_tokens", None) or 0
    return Usage(
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cached_tokens=int(cached or 0),
        cache_write_tokens=int(written),
    )
