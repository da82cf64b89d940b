"""Our provider-neutral messages and tool specs in the OpenAI chat format litellm accepts.

litellm translates this one format to every vendor's, so this is the only conversion we own.
"""

from __future__ import annotations

from typing import Any

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


def to_openai_messages(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    """The wire messages; images of a run of tool results follow that run as one user message
    (tool messages are text-only on the OpenAI format, and nothing may sit between them)."""
    wire: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for message in messages:
        if pending and not isinstance(message, ToolResultMessage):
            wire.append({"role": "user", "content": pending})
            pending = []
        wire.append(_message(message))
        if isinstance(message, ToolResultMessage) and message.images:
            pending.append({"type": "text", "text": f"[images returned by {message.name}]"})
            pending += [_image(image) for image in message.images]
    if pending:
        wire.append({"role": "user", "content": pending})
    return wire


def to_openai_tools(tools: tuple[ToolSpec, ...] | list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


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
