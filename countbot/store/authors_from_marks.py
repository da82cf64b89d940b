"""Migration 9: who wrote each stored user message, derived once from the marks it was stored
with.

Before authors were stored (`countbot/common/authorship.py`), a surface said who wrote a message
with marks in its text: a context line saying it was not typed by the user, `<external>` around a
document's text in the message, `<untrusted>` around a workspace skill or a trigger's payload, and
the recalled memory block inside the same context line. This is the one place those marks are still
read: each user record gets its `author` and its `parts` (the document, the skill, the recalled
block, each with its author), and the marks leave the text they were searched in. A recalled block
stored before recall kept authors may hold anyone's words, so it counts as someone else's."""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

_NOT_TYPED = "not something the user typed"
_RECALL = re.compile(
    r"\n?\[Recalled from memory:[^\n]*\]\n(?P<body>.*?)\n\[End of recalled memory\]", re.DOTALL
)
_BLOCK = re.compile(
    r'\n?<untrusted source="(?P<source>[^"\n]{0,200})">\n(?P<body>.*?)\n</untrusted>', re.DOTALL
)
_DOCUMENT = re.compile(
    r"(?P<head>\[The user sent '(?P<name>[^'\n]*)'[^\n]*\]\n)?"
    r'<external source="document:(?P<source>[^"\n]*)">\n(?P<body>.*?)\n</external>',
    re.DOTALL,
)
_SUBAGENT = re.compile(r"report of subagent (\S+)")
_WRITTEN_BY = re.compile(r"\[Written by (.*?), " + _NOT_TYPED)
_EARLIER_RECALL = {"kind": "other", "who": "memory recalled before authors were recorded"}


def derive_authors(conn: sqlite3.Connection) -> None:
    """Give every stored user record its `author` and `parts` (see the module docstring)."""
    rows = conn.execute("SELECT id, record FROM messages WHERE type = 'user'").fetchall()
    for message_id, raw in rows:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and "author" not in record:
            conn.execute(
                "UPDATE messages SET record = ? WHERE id = ?",
                (json.dumps(_derived(record), ensure_ascii=False), message_id),
            )


def _derived(record: dict[str, Any]) -> dict[str, Any]:
    context = str(record.get("context") or "")
    content = str(record.get("content") or "")
    parts: list[dict[str, Any]] = []
    for match in _DOCUMENT.finditer(content):
        name = match.group("name") or match.group("source")
        note = (match.group("head") or "").strip()
        document = {"kind": "document", "who": name}
        parts.append({"kind": "document", "text": match.group("body"), "author": document})
        parts[-1].update({"note": note, "name": name} if note else {"name": name})
    content = _DOCUMENT.sub("", content).strip() if parts else content
    for match in _BLOCK.finditer(context):
        source = match.group("source")
        if source.startswith("skill "):
            author, kind = {"kind": "skill", "who": source.removeprefix("skill ")}, "skill"
        else:  # a trigger's payload (webhook, watched folder or mailbox)
            author, kind = {"kind": "trigger", "who": source}, "payload"
        parts.append({"kind": kind, "text": match.group("body"), "author": author})
    context = _BLOCK.sub("", context)
    for match in _RECALL.finditer(context):
        parts.append({"kind": "recall", "text": match.group(0).strip(), "author": _EARLIER_RECALL})
    context = _RECALL.sub("", context)
    record.update(content=content, context=context, author=_author(context))
    if parts:
        record["parts"] = parts
    return record


def _author(context: str) -> dict[str, str]:
    """Who wrote the message, from what its context line said (with the recall block and any
    skill already taken out of it)."""
    if _NOT_TYPED not in context and "<external" not in context:
        return {"kind": "owner"}
    subagent = _SUBAGENT.search(context)
    if subagent is not None:
        return {"kind": "subagent", "who": subagent.group(1)}
    written = _WRITTEN_BY.search(context)
    who = written.group(1) if written is not None else ""
    if "forwarded" in who:
        return {"kind": "forward"}
    if "claiming to be" in who:
        return {"kind": "mail", "who": who.removeprefix("whoever sent a mail ")}
    return {"kind": "member", "who": who} if who else {"kind": "other"}
