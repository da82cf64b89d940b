"""Prompt-cache breakpoints for models that cache only where a request says so (Anthropic's).

OpenAI, DeepSeek and most others cache a request's prefix on their own; Claude models cache
only up to a block marked `cache_control` (at most four marks per request), and a later request
reads the cache only if its prefix up to a mark is byte-identical. litellm passes the marks on
as they are placed in its OpenAI-format input: on a tool, on a message. The marks go on the tool
list, the system prompt, the newest point of the history that later requests send unchanged
(the message that opened the current exchange: the results of a finished exchange may be
shortened at the next one, `agent/context/fit.py`, but nothing before its opening changes) and
the request's last message (so the next request of the same turn reads all of this one).
Requests to every other model are left exactly as they were.
"""

from __future__ import annotations

from typing import Any

BREAKPOINT: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
# litellm's providers that reach Claude models through the Messages API's caching.
_CLAUDE_ROUTES = frozenset({"anthropic", "bedrock", "vertex_ai", "openrouter"})


def caches_by_breakpoints(model: str) -> bool:
    """Whether `model` (a litellm model string) caches only at marked breakpoints."""
    route, _, name = model.partition("/")
    if route == "anthropic":
        return True
    return (route in _CLAUDE_ROUTES and "claude" in name.lower()) or model.startswith("claude")


def mark_breakpoints(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """`messages` and `tools` (OpenAI format) with cache breakpoints; the inputs are unchanged."""
    marked_tools = [*tools[:-1], {**tools[-1], "cache_control": BREAKPOINT}] if tools else tools
    positions = _positions(messages)
    marked = [
        _marked(message) if index in positions else message
        for index, message in enumerate(messages)
    ]
    return marked, marked_tools


def _positions(messages: list[dict[str, Any]]) -> set[int]:
    """The system prompt, the current exchange's opening and the last message."""
    positions: list[int] = []
    if messages and messages[0].get("role") == "system":
        positions.append(0)
    opening = _exchange_opening(messages)
    if opening is not None:
        positions.append(opening)
    if messages:
        positions.append(len(messages) - 1)
    return set(positions[: MAX_BREAKPOINTS - 1])  # the tool list takes one


def _exchange_opening(messages: list[dict[str, Any]]) -> int | None:
    """The newest user message that opens an exchange (a user message right after tool results
    carries their images or steers the turn: it is part of the exchange, not its start)."""
    for index in range(len(messages) - 1, 0, -1):
        if messages[index].get("role") == "user" and messages[index - 1].get("role") != "tool":
            return index
    return None


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    """`message` with a breakpoint: on the message for text content (litellm moves it to the
    block), on its last part for a list of parts."""
    content = message.get("content")
    if isinstance(content, list) and content:
        return {**message, "content": [*content[:-1], {**content[-1], "cache_control": BREAKPOINT}]}
    return {**message, "cache_control": BREAKPOINT}
