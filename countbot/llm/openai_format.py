"""Our provider-neutral messages and tool specs in the OpenAI chat format litellm accepts.

litellm translates this one format to every vendor's, so this is the only conversion we own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import msgspec

from countbot.llm.tool_args import wire_arguments
from countbot.llm.types import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)

W = TypeVar("W")


def to_openai_messages(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """The wire messages; images of a run of tool results follow that run as one user message
    (tool messages are text-only on the OpenAI format, and nothing may sit between them)."""
    return list(_wire(messages, _message, _images_message))


def to_openai_tools(tools: tuple[ToolSpec, ...] | list[ToolSpec]) -> list[dict[str, Any]]:
    return [_tool(t) for t in tools]


class EncodedWire:
    """The messages and tools of a request as wire JSON, each made once while it is sent again.

    A turn's requests, and the next turn's, send the history's messages and the offered tools as
    the same objects (the context keeper keeps each entry's message, the registry its specs), so
    a request converts and encodes only what is new: converting a warm request whole
    cost more than a lookup per item does now (docs/llm_call.md). Only the last request's
    items are kept (memory bounded by one request). Both kinds are frozen; a spec's schema is
    never changed in place (the registry makes new specs when its tools change).
    """

    def __init__(self) -> None:
        self._last: dict[int, tuple[object, bytes]] = {}
        self._now: dict[int, tuple[object, bytes]] = {}

    def encode(
        self, messages: Iterable[Message], tools: Iterable[ToolSpec]
    ) -> tuple[msgspec.Raw, msgspec.Raw]:
        """The JSON arrays of `messages` and `tools`, for a body encoded by msgspec."""
        self._now = {}
        wire = _wire(messages, self._encoded(_message), _encode(_images_message))
        encoded = _array(wire), _array(map(self._encoded(_tool), tools))
        self._last = self._now
        return encoded

    def _encoded(self, convert: Callable[[Any], dict[str, Any]]) -> Callable[[Any], bytes]:
        def encoded(item: object) -> bytes:
            kept = self._last.get(id(item))
            if kept is None or kept[0] is not item:
                kept = (item, _ENCODER.encode(convert(item)))
            self._now[id(item)] = kept
            return kept[1]

        return encoded


_ENCODER = msgspec.json.Encoder()


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body (its `EncodedWire` parts within) as compact UTF-8 JSON, as httpx's `json=`
    would send it, in a tenth of `json.dumps`'s time (docs/llm_call.md)."""
    return _ENCODER.encode(body)


def _encode(convert: Callable[[Any], dict[str, Any]]) -> Callable[[Any], bytes]:
    return lambda item: _ENCODER.encode(convert(item))


def _array(items: Iterable[bytes]) -> msgspec.Raw:
    return msgspec.Raw(b"[" + b",".join(items) + b"]")


def _wire(
    messages: Iterable[Message],
    one: Callable[[Message], W],
    images: Callable[[list[dict[str, Any]]], W],
) -> Iterator[W]:
    """Each message's wire form, with the images of a run of tool results after that run."""
    pending: list[dict[str, Any]] = []
    for message in messages:
        if pending and not isinstance(message, ToolResultMessage):
            yield images(pending)
            pending = []
        yield one(message)
        if isinstance(message, ToolResultMessage) and message.images:
            pending.append({"type": "text", "text": f"[images returned by {message.name}]"})
            pending += [_image(image) for image in message.images]
    if pending:
        yield images(pending)


def _images_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "content": parts}


def _tool(tool: ToolSpec) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def image_url(image: ImagePart) -> str:
    """A URL the provider can fetch, or the inline image as a data URL."""
    if image.url:
        return image.url
    if image.data.startswith("data:"):
        return image.data
    return f"data:{image.media_type};base64,{image.data}"


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        return {"role": "user", "content": _user_content(message)}
    if isinstance(message, AssistantMessage):
        return _assistant(message)
    if isinstance(message, ToolResultMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "name": message.name,
            "content": message.content,
        }
    raise TypeError(f"not a message: {message!r}")


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    """Plain text stays a string (every OpenAI-compatible server takes that); images need parts."""
    if all(isinstance(p, TextPart) for p in message.content):
        return "\n\n".join(p.text for p in message.content if isinstance(p, TextPart))
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        else:
            parts.append(_image(part))
    return parts


def _image(image: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": image_url(image)}}


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    # Reasoning is not sent back: most providers reject or ignore it in history.
    content = message.text or (None if message.tool_calls else "")
    result: dict[str, Any] = {"role": "assistant", "content": content}
    if message.tool_calls:
        result["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": wire_arguments(call)},
            }
            for call in message.tool_calls
        ]
    return result
