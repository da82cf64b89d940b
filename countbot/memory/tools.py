"""The model's hands on MEMORY.md: read it, search it, add a dated note or correct a passage."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any, ClassVar

from countbot.memory.memory_file import MemoryEditError, MemoryFile
from countbot.memory.notes import add_note, date_heading
from countbot.tools.base import Tool, ToolContext, ToolResult

DEFAULT_READ_LINES = 400
MAX_NOTE_CHARS = 4000


class MemoryReadTool(Tool):
    """Reads MEMORY.md, a window of lines at a time so a long file does not flood the context."""

    name: ClassVar[str] = "memory_read"
    description: ClassVar[str] = (
        "Read MEMORY.md, your long-term memory: notes you saved and summaries of older "
        "conversations. For something specific in a long file, prefer memory_search."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "start_line": {
                "type": "integer",
                "minimum": 1,
                "description": "First line to return (1-based). Default 1.",
            },
            "max_lines": {
                "type": "integer",
                "minimum": 1,
                "maximum": 2000,
                "description": f"How many lines to return. Default {DEFAULT_READ_LINES}.",
            },
        },
    }
    idempotent: ClassVar[bool] = True
    brings = frozenset({"private"})

    def __init__(self, memory: MemoryFile) -> None:
        self._memory = memory

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        lines = (await self._memory.read()).splitlines()
        if not lines:
            return ToolResult("MEMORY.md is empty.")
        start = int(args.get("start_line", 1))
        count = int(args.get("max_lines", DEFAULT_READ_LINES))
        if start > len(lines):
            return ToolResult.error(f"MEMORY.md has only {len(lines)} lines")
        shown = lines[start - 1 : start - 1 + count]
        end = start + len(shown) - 1
        text = "\n".join(shown)
        if start == 1 and end == len(lines):
            return ToolResult(text)
        header = f"[MEMORY.md lines {start}-{end} of {len(lines)}"
        if end < len(lines):
            header += f"; continue with start_line={end + 1}"
        return ToolResult(f"{header}]\n{text}")


class MemoryWriteTool(Tool):
    """Adds a dated note or corrects exact text; never rewrites the whole file."""

    name: ClassVar[str] = "memory_write"
    description: ClassVar[str] = (
        "Save to MEMORY.md. Give `note` to add a short fact under today's date heading, or "
        "`old_text` and `new_text` to correct existing text (old_text must match exactly once; "
        "an empty new_text deletes it). Save stable preferences, decisions and facts the user "
        "asks you to remember; never secrets."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "note": {
                "type": "string",
                "maxLength": MAX_NOTE_CHARS,
                "description": "A short fact to add, e.g. 'Prefers metric units.'",
            },
            "old_text": {"type": "string", "description": "Exact text to replace."},
            "new_text": {"type": "string", "description": "Replacement for old_text."},
        },
    }

    remembers: ClassVar[tuple[str, ...]] = ("note", "new_text")

    def __init__(self, memory: MemoryFile, *, today: Callable[[], date] = date.today) -> None:
        self._memory = memory
        self._today = today

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        note = args.get("note")
        old_text = args.get("old_text")
        if (note is None) == (old_text is None):
            return ToolResult.error("give either `note`, or `old_text` with `new_text`")
        if note is not None:
            if not note.strip():
                return ToolResult.error("the note is empty")
            day = self._today()
            await self._memory.update(lambda content: add_note(content, day, note))
            return ToolResult(f"Saved to MEMORY.md under {date_heading(day)}.")
        if "new_text" not in args:
            return ToolResult.error("`new_text` is required with `old_text` (empty to delete)")
        try:
            await self._memory.replace(old_text, args["new_text"])
        except MemoryEditError as exc:
            return ToolResult.error(str(exc))
        return ToolResult("Updated MEMORY.md.")


class MemorySearchTool(Tool):
    """Keyword search over MEMORY.md entries, with line numbers to read around a hit."""

    name: ClassVar[str] = "memory_search"
    description: ClassVar[str] = (
        "Search MEMORY.md for entries containing all the given keywords (case-insensitive). "
        "Use a few distinctive words (a name, a topic, a date like 2026-05-01); results show "
        "line numbers you can pass to memory_read."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Keywords; every one must match."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        },
        "required": ["query"],
    }
    idempotent: ClassVar[bool] = True
    brings = frozenset({"private"})

    def __init__(self, memory: MemoryFile) -> None:
        self._memory = memory

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str(args.get("query", "")).strip()
        if not query:
            return ToolResult.error("the query is empty")
        hits = await self._memory.search(query, int(args.get("limit", 10)))
        if not hits:
            return ToolResult(f"No entries in MEMORY.md match all of: {query}. Try fewer words.")
        blocks = [f"{len(hits)} match(es) in MEMORY.md for: {query}"]
        for hit in hits:
            span = f"L{hit.line}" if hit.line == hit.end_line else f"L{hit.line}-{hit.end_line}"
            where = f" (under {hit.heading})" if hit.heading else ""
            blocks.append(f"{span}{where}:\n{hit.text}")
        return ToolResult("\n\n".join(blocks))
