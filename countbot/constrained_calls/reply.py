"""Constrained tool calls: for models that cannot be trusted with native tool calling.

Small local models (and many Ollama models) rarely emit a well-formed native tool call, but any
llama.cpp-based server can force its output to match a JSON schema. In constrained mode the
request offers no native tools; it asks instead for one JSON object that is either a call of one
offered tool (`{"tool": NAME, "arguments": {...}}`, the name limited to the offered ones) or a
plain answer (`{"answer": "..."}`). The reply is parsed forgivingly (fenced or chatty JSON
too) and turned back into ordinary OpenAI-shaped chunks, so the accumulator, the retries and the
agent loop see the same tool calls and text deltas as from any other model. An answer's text is
streamed as it is generated, decoded out of the JSON string on the fly.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from types import SimpleNamespace
from typing import Any

from countbot.llm.openai_format import to_openai_messages
from countbot.llm.tool_args import parse_arguments, wire_arguments
from countbot.llm.types import AssistantMessage, Message, SystemMessage, ToolResultMessage, ToolSpec

_ANSWER_START = re.compile(r'\s*(?:```(?:json)?\s*)?\{\s*"answer"\s*:\s*"')
_CUT_CALL = re.compile(r'\s*(?:```(?:json)?\s*)?\{\s*"tool"\s*:')
CUT_OFF = (
    "(The model's tool call was cut off before it was complete: raise model.max_tokens, or ask "
    "for something smaller.)"
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
# Said after each tool result: small models otherwise repeat the call they just made.
_AFTER_RESULT = 'The tool is done. If that was all, tell the user the outcome as {"answer": "..."}.'
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


def reply_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The JSON schema of one reply: a call of exactly one offered tool, or an answer."""
    calls = [
        {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": [tool.name]},
                "arguments": tool.parameters or {"type": "object"},
            },
            "required": ["tool", "arguments"],
        }
        for tool in tools
    ]
    answer = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    return {"anyOf": [*calls, answer]}


def instructions(tools: Sequence[ToolSpec]) -> str:
    """The system prompt's addition that says what to reply and which tools exist."""
    lines = [
        "Reply with exactly one JSON object and nothing else: either a tool call",
        '{"tool": "<tool name>", "arguments": {<its arguments>}}',
        "when a tool can do what the user asks (its result comes back to you), or",
        '{"answer": "<your reply to the user>"}',
        "when you can reply directly. The tools:",
    ]
    for tool in tools:
        # Name, arguments and the first sentence: the grammar enforces the schema itself, and
        # a small model's context is too short for every description in full.
        names = ", ".join(tool.parameters.get("properties", {}))
        lines.append(f"- {tool.name}({names}): {_first_sentence(tool.description)}")
    return "\n".join(lines)


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def constrained_messages(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[Any]:
    """The conversation in OpenAI format with tool turns written as the JSON this mode uses.

    Earlier tool calls become the assistant's JSON and results become user messages: the chat
    templates of small models often know no `tool` role, and the model sees its own format back.
    """
    rewritten: list[Message] = []
    added = False
    for message in messages:
        if isinstance(message, SystemMessage) and not added:
            message = SystemMessage(message.content + "\n\n" + instructions(tools))
            added = True
        rewritten.append(message)
    if not added:
        rewritten.insert(0, SystemMessage(instructions(tools)))
    wire = to_openai_messages(rewritten)
    for index, message in enumerate(rewritten):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            calls = [
                {"tool": call.name, "arguments": json.loads(wire_arguments(call) or "{}")}
                for call in message.tool_calls
            ]
            text = json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)
            wire[index] = {"role": "assistant", "content": text}
        elif isinstance(message, ToolResultMessage):
            kind = "Error from" if message.is_error else "Result of"
            text = f"{kind} {message.name}:\n{message.content}\n\n{_AFTER_RESULT}"
            wire[index] = {"role": "user", "content": text}
    return wire


def response_format(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The `response_format` field that makes the server follow `reply_schema`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "reply", "strict": True, "schema": reply_schema(tools)},
    }


def parse_reply(text: str, tools: Sequence[ToolSpec]) -> tuple[str, dict[str, Any] | None]:
    """(tool name, arguments) for a call of an offered tool, else (answer text, None).

    Forgiving: a fenced block, prose around the object and small JSON slips are accepted; a reply
    that is no JSON at all is the answer as it stands.
    """
    value = _loads(text)
    names = {tool.name for tool in tools}
    if isinstance(value, list) and value:
        value = value[0]  # several calls at once: one at a time is what this mode promises
    if isinstance(value, dict):
        name = value.get("tool") or value.get("name")
        if isinstance(name, str) and name in names:
            arguments = value.get("arguments")
            if isinstance(arguments, str):
                arguments, _ = parse_arguments(arguments)
            return name, arguments if isinstance(arguments, dict) else {}
        answer = value.get("answer")
        if isinstance(answer, str):
            return answer, None
    if value is None and _CUT_CALL.match(text):
        return CUT_OFF, None
    return text.strip(), None


def _loads(text: str) -> Any:
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    start, end = candidate.find("{"), candidate.rfind("}")
    if start < 0 or end <= start:
        return None
    value, error = parse_arguments(candidate[start : end + 1])
    return None if error else value


class AnswerStream:
    """Decodes the answer string out of `{"answer": "..."}` as its characters arrive."""

    def __init__(self) -> None:
        self._buffer = ""
        self._position: int | None = None
        self._closed = False
        self.emitted = ""

    def feed(self, text: str) -> str:
        """Add generated text; return the answer characters it completes (maybe none)."""
        self._buffer += text
        if self._position is None:
            match = _ANSWER_START.match(self._buffer)
            if match is None:
                return ""
            self._position = match.end()
        if self._closed:
            return ""
        out: list[str] = []
        buffer, i = self._buffer, self._position
        while i < len(buffer):
            char = buffer[i]
            if char == '"':
                self._closed = True
                break
            if char != "\\":
                out.append(char)
                i += 1
                continue
            if i + 1 >= len(buffer):
                break
            escape = buffer[i + 1]
            if escape == "u":
                if i + 6 > len(buffer):
                    break
                try:
                    out.append(chr(int(buffer[i + 2 : i + 6], 16)))
                except ValueError:
                    out.append(buffer[i : i + 6])
                i += 6
                continue
            out.append(_ESCAPES.get(escape, escape))
            i += 2
        self._position = i
        piece = "".join(out)
        self.emitted += piece
        return piece


async def constrained_chunks(
    chunks: AsyncIterator[Any], tools: Sequence[ToolSpec]
) -> AsyncIterator[Any]:
    """The server's chunks of one JSON reply as the chunks of an ordinary reply.

    Usage passes through; an answer streams as content deltas; a tool call arrives whole at the
    end, as one native tool-call fragment with finish reason `tool_calls`.
    """
    generated: list[str] = []
    answer = AnswerStream()
    finish = "stop"
    async with aclosing(chunks) as source:
        async for chunk in source:
            if getattr(chunk, "usage", None) is not None:
                yield SimpleNamespace(usage=chunk.usage, choices=[])
            for choice in getattr(chunk, "choices", None) or ():
                if getattr(choice, "finish_reason", None) == "length":
                    finish = "length"  # the answer was cut at the output limit: say so
                content = getattr(getattr(choice, "delta", None), "content", None)
                if content:
                    generated.append(content)
                    piece = answer.feed(content)
                    if piece:
                        yield _content_chunk(piece)
    text, arguments = parse_reply("".join(generated), tools)
    if arguments is not None:
        call = SimpleNamespace(
            index=0,
            id=f"call_{uuid.uuid4().hex[:24]}",
            function=SimpleNamespace(name=text, arguments=json.dumps(arguments)),
        )
        delta = SimpleNamespace(tool_calls=[call])
        yield SimpleNamespace(choices=[SimpleNamespace(delta=delta, finish_reason="tool_calls")])
        return
    rest = text[len(answer.emitted) :] if text.startswith(answer.emitted) else ""
    if not answer.emitted:
        rest = text
    if rest:
        yield _content_chunk(rest)
    yield SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(), finish_reason=finish)])


def _content_chunk(text: str) -> Any:
    delta = SimpleNamespace(content=text)
    return SimpleNamespace(choices=[SimpleNamespace(delta=delta, finish_reason=None)])
