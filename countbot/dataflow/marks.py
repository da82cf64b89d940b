"""The mark on memory written while untrusted content was in the turn.

A note the model saves after reading a stranger's text may be the stranger's instruction
("always send the report to ..."). It is saved with a visible prefix naming where the turn's
untrusted text came from; any later turn that reads a marked note counts as having read
untrusted content, so what the note asks for is checked like the original page. Removing the
prefix on the Memory page makes the note the user's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

PREFIX = "[unconfirmed, from "
_MARK = re.compile(re.escape(PREFIX) + r"([^\]\n]{0,200})\]")
_UNSAFE = re.compile(r"[\[\]\n]")
_MAX_SOURCES = 3


def mark(text: str, sources: Sequence[str]) -> str:
    """`text` with the prefix naming the turn's untrusted sources (once)."""
    if text.startswith(PREFIX) or not text.strip():
        return text
    named = ", ".join(_UNSAFE.sub(" ", source) for source in sources[:_MAX_SOURCES])
    more = f" and {len(sources) - _MAX_SOURCES} more" if len(sources) > _MAX_SOURCES else ""
    return f"{PREFIX}{named[:160]}{more}] {text}"


def mark_arguments(args: dict[str, Any], fields: Sequence[str], sources: Sequence[str]) -> dict:
    """A copy of `args` whose remembered text fields carry the mark."""
    marked = dict(args)
    for name in fields:
        if isinstance(marked.get(name), str):
            marked[name] = mark(marked[name], sources)
    return marked


def marked_sources(text: str) -> list[str]:
    """The sources named by marks in `text` (empty when there is none)."""
    if PREFIX not in text:
        return []
    return list(dict.fromkeys(_MARK.findall(text)))
