"""The memory tools against a real MEMORY.md: save, read, search, correct, and their errors."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from countbot.memory.memory_file import MemoryFile
from countbot.memory.tools import MemoryReadTool, MemorySearchTool, MemoryWriteTool
from countbot.tools.base import ToolContext

DAY = date(2026, 11, 22)


@pytest.fixture
def memory(tmp_path: Path) -> MemoryFile:
    return MemoryFile(tmp_path / "MEMORY.md")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext("s1", tmp_path)


async def test_save_read_search_and_correct_round_trip(
    memory: MemoryFile, ctx: ToolContext
) -> None:
    write = MemoryWriteTool(memory, today=lambda: DAY)
    read, search = MemoryReadTool(memory), MemorySearchTool(memory)

    saved = await write.execute({"note": "Sister Anna lives in Vienna"}, ctx)
    assert saved.content == "Saved to MEMORY.md under ## 2026-11-22."
    await write.execute({"note": "Prefers metric units"}, ctx)
    assert (await read.execute({}, ctx)).content == (
        "## 2026-11-22\n\n- Sister Anna lives in Vienna\n- Prefers metric units"
    )

    found = await search.execute({"query": "anna VIENNA"}, ctx)
    assert found.content == (
        "1 match(es) in MEMORY.md for: anna VIENNA\n\n"
        "L3 (under ## 2026-11-22):\n- Sister Anna lives in Vienna"
    )

    fixed = await write.execute({"old_text": "in Vienna", "new_text": "in Graz"}, ctx)
    assert fixed.content == "Updated MEMORY.md (the correction is dated)." and not fixed.is_error
    # The correction supersedes the old fact in place, dated, and says what it replaced.
    assert (
        "- Sister Anna lives in Graz _(corrected 2026-11-22; was: in Vienna)_"
        in await memory.read()
    )


async def test_empty_memory_reads_as_such(memory: MemoryFile, ctx: ToolContext) -> None:
    assert (await MemoryReadTool(memory).execute({}, ctx)).content == "MEMORY.md is empty."


async def test_long_memory_is_read_in_windows(memory: MemoryFile, ctx: ToolContext) -> None:
    await memory.write("\n".join(f"line {i}" for i in range(1, 11)) + "\n")
    read = MemoryReadTool(memory)
    first = await read.execute({"max_lines": 4}, ctx)
    assert first.content == (
        "[MEMORY.md lines 1-4 of 10; continue with start_line=5]\nline 1\nline 2\nline 3\nline 4"
    )
    last = await read.execute({"start_line": 9}, ctx)
    assert last.content == "[MEMORY.md lines 9-10 of 10]\nline 9\nline 10"
    beyond = await read.execute({"start_line": 11}, ctx)
    assert beyond.is_error and "only 10 lines" in beyond.content


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "give either `note`"),
        ({"note": "x", "old_text": "y", "new_text": "z"}, "give either `note`"),
        ({"note": "   "}, "the note is empty"),
        ({"old_text": "likes tea"}, "`new_text` is required"),
        ({"old_text": "likes coffee", "new_text": "x"}, "not found"),
        ({"old_text": "likes", "new_text": "x"}, "occurs 2 times"),
    ],
)
async def test_write_errors_tell_the_model_what_to_fix(
    memory: MemoryFile, ctx: ToolContext, args: dict, message: str
) -> None:
    await memory.write("- likes tea\n- likes rain\n")
    result = await MemoryWriteTool(memory).execute(args, ctx)
    assert result.is_error and message in result.content
    assert await memory.read() == "- likes tea\n- likes rain\n"


async def test_search_needs_a_query(memory: MemoryFile, ctx: ToolContext) -> None:
    result = await MemorySearchTool(memory).execute({"query": "  "}, ctx)
    assert result.is_error and "empty" in result.content


def test_reads_and_searches_may_be_retried_but_writes_may_not(memory: MemoryFile) -> None:
    assert MemoryReadTool(memory).idempotent and MemorySearchTool(memory).idempotent
    assert not MemoryWriteTool(memory).idempotent
