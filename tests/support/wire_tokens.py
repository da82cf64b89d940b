"""Counting what a chat-completions request really holds, from the JSON a server received."""

from __future__ import annotations

import json
from typing import Any

from countbot.llm.token_counter import count_text


def wire_tokens(body: dict[str, Any]) -> int:
    """What a request really holds, counted from the JSON the server received."""

    def n(text: str) -> int:
        return count_text(text, body["model"])

    total = 3 + (n(json.dumps(body["tools"], ensure_ascii=False)) if body.get("tools") else 0)
    for message in body["messages"]:
        total += 3 + n(message["role"])
        content = message.get("content")
        if isinstance(content, str):
            total += n(content)
        elif isinstance(content, list):
            total += sum(n(part.get("text", "")) for part in content)
        total += n(message.get("tool_call_id", "")) + n(message.get("name", ""))
        for call in message.get("tool_calls") or ():
            total += n(call["function"]["name"] + call["function"]["arguments"])
    return total
