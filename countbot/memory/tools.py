"""The model's hands on MEMORY.md: read it, search it, add a dated note or correct a passage."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from countbot.common.authorship import external
from countbot.memory.cited import KINDS, CitedHit, MemorySearch
from countbot.memory.hygiene import corrected, repeats, without
from countbot.memory.memory_file import MemoryEditError, MemoryFile
from countbot.memory.notes import add_note, date_heading
from countbot.tools.base import Tool, ToolContext, ToolResult
from countbot.tools.schema import choice, integer, params, text

DEFAULT_READ_LINES = 400
MAX_NOTE_CHARS = 4000


class MemoryReadTool(Tool):
    """Reads MEMORY.md, a window of lines at a time so a long file does not flood the context."""

    name = "memory_read"
    description = (
        "Read MEMORY.md, your long-term memory: notes you saved and summaries of older "
        "conversations. For something specific in a long file, prefer memory_search."
    )
    parameters = params(
        optional={
            "start_line": integer("First line to return (1-based). Default 1.", minimum=1),
            "max_lines": integer(
                f"How many lines to return. Default {DEFAULT_READ_LINES}.", minimum=1, maximum=2000
            ),
        },
        closed=False,
    )
    idempotent = True
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

    name = "memory_write"
    description = (
        "Save to MEMORY.md. Give `note` to add a short fact under today's date heading, or "
        "`old_text` and `new_text` to correct a fact that changed (old_text must match exactly "
        "once; the correction is dated; an empty new_text deletes it). A note that repeats a "
        "saved fact is not added twice. Save stable preferences, decisions and facts the user "
        "asks you to remember; never secrets."
    )
    parameters = params(
        optional={
            "note": text(
                "A short fact to add, e.g. 'Prefers metric units.'", maxLength=MAX_NOTE_CHARS
            ),
            "old_text": text("Exact text to replace."),
            "new_text": text("Replacement for old_text."),
        },
        closed=False,
    )

    remembers = ("note", "new_text")

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
            return await self._add(note)
        if "new_text" not in args:
            return ToolResult.error("`new_text` is required with `old_text` (empty to delete)")
        try:
            new_text = corrected(old_text, args["new_text"], self._today())
            await self._memory.replace(old_text, new_text)
        except MemoryEditError as exc:
            return ToolResult.error(str(exc))
        return ToolResult("Updated MEMORY.md (the correction is dated).")

    async def _add(self, note: str) -> ToolResult:
        """File `note` under today's heading unless MEMORY.md already says the same."""
        day = self._today()
        same: list[str] = []

        def change(content: str) -> str:
            found = repeats(content, note)
            if found is not None:
                same.append(found)
                return content
            return add_note(content, day, note)

        await self._memory.update(change)
        if same:
            return ToolResult(
                f"Already in MEMORY.md, not added again: {same[0]}\nIf the fact changed, "
                "correct that entry with old_text/new_text instead."
            )
        return ToolResult(f"Saved to MEMORY.md under {date_heading(day)}.")


class MemorySearchTool(Tool):
    """Searches notes and past conversations (the memory index), with a citation per hit."""

    name = "memory_search"
    description = (
        "Search your memory: MEMORY.md, USER.md, dated notes and every other conversation, by "
        "meaning as well as words, in any language. Each hit says where and when it was "
        "written. Narrow with `scope` (notes or conversations) and `since`/`until` dates."
    )
    parameters = params(
        required={"query": text("What you are looking for.")},
        optional={
            "scope": choice("all", "notes", "conversations"),
            "since": text("YYYY-MM-DD, inclusive", format="date"),
            "until": text("YYYY-MM-DD, inclusive", format="date"),
            "limit": integer(minimum=1, maximum=50, default=8),
        },
        closed=False,
    )
    idempotent = True
    brings = frozenset({"private"})

    def __init__(self, memory: MemoryFile, index: MemorySearch | None = None) -> None:
        self._memory = memory
        self._index = index

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str(args.get("query", "")).strip()
        if not query:
            return ToolResult.error("the query is empty")
        limit = int(args.get("limit", 8))
        if self._index is None:
            return await self._keyword_search(query, limit)
        try:
            since, until = _day(args.get("since")), _day(args.get("until"))
        except ValueError as exc:
            return ToolResult.error(str(exc))
        kinds = _SCOPES.get(str(args.get("scope", "all")), KINDS)
        # The turn's own conversation is in the request already (and holds the question).
        hits = await self._index.search(
            query,
            limit=limit,
            kinds=kinds,
            since=since,
            until=until,
            exclude_session=ctx.session_id,
        )
        if not hits:
            return ToolResult(f"Nothing in memory matches: {query}. Try other words.")
        now = time.time()
        blocks = [f"{len(hits)} hit(s) in memory for: {query}"]
        blocks.extend(_shown(n, hit, now) for n, hit in enumerate(hits, 1))
        # What others wrote counts for the turn as a fetched page does (the data-flow ledger).
        others = [hit.written_by(now) for hit in hits if not hit.author.owned]
        return ToolResult("\n\n".join(blocks), untrusted=tuple(dict.fromkeys(others)))

    async def _keyword_search(self, query: str, limit: int) -> ToolResult:
        """Without an index (a bare registry): every word must occur in a MEMORY.md entry."""
        hits = await self._memory.search(query, limit)
        if not hits:
            return ToolResult(f"No entries in MEMORY.md match all of: {query}. Try fewer words.")
        blocks = [f"{len(hits)} match(es) in MEMORY.md for: {query}"]
        for hit in hits:
            span = f"L{hit.line}" if hit.line == hit.end_line else f"L{hit.line}-{hit.end_line}"
            where = f" (under {hit.heading})" if hit.heading else ""
            blocks.append(f"{span}{where}:\n{hit.text}")
        return ToolResult("\n\n".join(blocks))


class MemoryForgetTool(Tool):
    """Removes a fact from the memory files and stops past conversations from recalling it."""

    name = "memory_forget"
    description = (
        "Forget a fact when the user asks you to: removes every entry holding `text` from "
        "MEMORY.md, USER.md and the dated notes, and past conversations that mention it are no "
        "longer found. Give a short distinctive piece of the fact."
    )
    parameters = params(required={"text": text(minLength=3)}, closed=False)

    def __init__(
        self,
        files: Sequence[MemoryFile],
        index: MemorySearch | None,
        notes_folder: Path | None = None,
    ) -> None:
        self._files = files
        self._index = index
        self._notes_folder = notes_folder  # the dated notes, `memory/*.md`, as they are then

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        text = str(args.get("text", "")).strip()
        if len(text) < 3:
            return ToolResult.error("give at least three characters of the fact to forget")
        # The index logs the forgetting first (a crash after it still forgets the past
        # conversations), then the files lose their entries.
        dropped = await self._index.forget(text) if self._index is not None else 0
        notes = await asyncio.to_thread(_notes, self._notes_folder)
        removed = 0
        for memory in [*self._files, *(MemoryFile(path) for path in notes)]:
            counted: list[int] = []

            def change(content: str, counted: list[int] = counted) -> str:
                new, count = without(content, text)
                counted.append(count)
                return new

            await memory.update(change)
            removed += sum(counted)
        if not removed and not dropped:
            return ToolResult(f"Nothing in memory holds: {text}")
        return ToolResult(
            f"Forgot {removed} note entr{'y' if removed == 1 else 'ies'} and "
            f"{dropped} conversation passage(s) holding: {text}"
        )


def _shown(number: int, hit: CitedHit, now: float) -> str:
    """A hit as the model reads it: what others wrote inside the marker text from outside gets,
    named by what it is ("a message forwarded on telegram, 3 days ago")."""
    text = hit.text if hit.author.owned else external(hit.written_by(now), hit.text)
    return f"[{number}] ({hit.citation()}) {text}"


_SCOPES = {"notes": ("note",), "conversations": ("conversation",), "all": KINDS}


def _notes(folder: Path | None) -> list[Path]:
    """The dated notes in `folder` (none without one)."""
    return sorted(folder.glob("*.md")) if folder is not None and folder.is_dir() else []


def _day(value: object) -> date | None:
    if value in (None, ""):
        return None
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{value!r} is not a date (use YYYY-MM-DD)") from None
