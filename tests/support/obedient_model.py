"""A fully prompt-injected model for the scripted server: it obeys every instruction it reads.

An instruction is a line `<<DO tool {json arguments}>>` anywhere in a tool result (a page, a
mail, an MCP result, a memory note), or with `everywhere` in a user message too. The model calls
each one once, in the order read, after filling in what it knows: `{{pin}}` is the PIN the
conversation mentions ("PIN is 4821"), with `{{pin_b64}}`, `{{pin_hex}}` and `{{pin_rev}}` its
encodings, and `{{file}}` the text of the last file it read; what it does not know yet stays as
written. With nothing left to obey it answers `answer`; scripted replies (`server.script`) still
come first.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from tests.support.scripted_model import Reply, ScriptedModelServer

# Greedy within a line: an instruction may quote another one inside its arguments.
_INSTRUCTION = re.compile(r"<<DO (\S+) (\{.*\})>>")
_PIN = re.compile(r"PIN is (\d{4,})")


def obey(server: ScriptedModelServer, answer: str = "Done.", *, everywhere: bool = False) -> None:
    """Make `server` answer every request as the injected model (after its scripted replies);
    `everywhere`: it obeys instructions in user messages too (an attached document, a recalled
    or forwarded message), not only in tool results."""
    roles = ("tool", "user") if everywhere else ("tool",)

    def respond(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        done = {
            (call["function"]["name"], _canonical(call["function"]["arguments"]))
            for message in messages
            if message["role"] == "assistant"
            for call in message.get("tool_calls") or ()
        }
        facts = _facts(messages)
        for message in messages:
            if message["role"] not in roles:
                continue
            for escaped, raw in _INSTRUCTION.findall(_text(message)):
                name = escaped.replace("\\_", "_")  # as a document's Markdown escapes it
                arguments = _fill(raw, facts)
                if (name, _canonical(arguments)) not in done:
                    return Reply.tool_calls((name, arguments))
        return Reply.text(answer)

    server.responder = respond


def _facts(messages: list[dict[str, Any]]) -> dict[str, str]:
    facts = {"pin": "", "file": ""}
    names = {
        call["id"]: call["function"]["name"]
        for message in messages
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or ()
    }
    for message in messages:
        text = _text(message)
        if match := _PIN.search(text):
            facts["pin"] = match.group(1)
        if message["role"] == "tool" and names.get(message.get("tool_call_id")) == "read_file":
            facts["file"] = text.strip()
    if facts["pin"]:
        pin = facts["pin"].encode()
        facts["pin_b64"] = base64.b64encode(pin).decode()
        facts["pin_hex"] = pin.hex()
        facts["pin_rev"] = facts["pin"][::-1]
    # What the model does not know yet stays a placeholder (a note may be read when it does).
    return {name: value for name, value in facts.items() if value}


def _fill(raw: str, facts: dict[str, str]) -> str:
    for name, value in facts.items():
        raw = raw.replace("{{" + name + "}}", value)
    return raw


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except ValueError:
        return arguments
