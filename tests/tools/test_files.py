"""The file tools on a real directory: round trips, line ranges, binary files, edits, listings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from countbot.tools.base import ToolContext
from countbot.tools.files import (
    MAX_LIST_ENTRIES,
    EditFileTool,
    ListDirTool,
    ReadFileTool,
    WriteFileTool,
)
from countbot.tools.workspace_guard import WorkspaceGuard


@pytest.fixture
def guard(workspace: Path) -> WorkspaceGuard:
    return WorkspaceGuard(workspace)


async def test_write_then_read_round_trip_creating_parents(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    text = "première ligne\nsecond line\n"
    written = await WriteFileTool(guard).execute({"path": "notes/today.md", "content": text}, ctx)
    assert written.status == "ok" and "notes/today.md" in written.content
    read = await ReadFileTool(guard).execute({"path": "notes/today.md"}, ctx)
    assert read.content == text
    assert (workspace / "notes" / "today.md").read_text(encoding="utf-8") == text


async def test_overwrite_is_atomic_and_keeps_the_file_mode(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    await WriteFileTool(guard).execute({"path": "run.sh", "content": "#!/bin/sh\necho new\n"}, ctx)
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert script.stat().st_mode & 0o777 == 0o755
    assert os.listdir(workspace) == ["run.sh"]  # no temp file left behind


async def test_read_a_range_of_lines(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "log.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    tool = ReadFileTool(guard)
    middle = await tool.execute({"path": "log.txt", "offset": 3, "limit": 2}, ctx)
    tail = await tool.execute({"path": "log.txt", "offset": 9}, ctx)
    past = await tool.execute({"path": "log.txt", "offset": 50}, ctx)
    assert middle.content == "line 3\nline 4\n\n[lines 3-4; continue with offset=5]"
    assert tail.content == "line 9\nline 10\n\n[lines 9-10; end of file]"
    assert "shorter" in past.content


async def test_binary_files_are_refused_with_a_clear_error(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (workspace / "latin1.txt").write_bytes("café".encode("latin-1"))
    for name in ("image.png", "latin1.txt"):
        result = await ReadFileTool(guard).execute({"path": name}, ctx)
        assert result.status == "error" and "binary" in result.content


async def test_missing_files_and_directories_give_actionable_errors(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "docs").mkdir()
    missing = await ReadFileTool(guard).execute({"path": "nope.txt"}, ctx)
    directory = await ReadFileTool(guard).execute({"path": "docs"}, ctx)
    assert missing.status == "error" and "does not exist" in missing.content
    assert directory.status == "error" and "list_dir" in directory.content


async def test_edit_replaces_exactly_one_match(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("def main():\n    print('hello')\n")
    args = {"path": "app.py", "old_text": "print('hello')", "new_text": "print('bye')"}
    result = await EditFileTool(guard).execute(args, ctx)
    assert result.status == "ok"
    assert path.read_text() == "def main():\n    print('bye')\n"


async def test_edit_with_no_match_changes_nothing_and_says_so(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("x = 1\n")
    args = {"path": "app.py", "old_text": "x = 2", "new_text": "x = 3"}
    result = await EditFileTool(guard).execute(args, ctx)
    assert result.status == "error" and "not found" in result.content
    assert path.read_text() == "x = 1\n"


async def test_edit_with_several_matches_asks_for_more_context(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    path = workspace / "app.py"
    path.write_text("x = 1\ny = 2\nx = 1\nx = 1\n")
    args = {"path": "app.py", "old_text": "x = 1", "new_text": "x = 9"}
    result = await EditFileTool(guard).execute(args, ctx)
    assert result.status == "error"
    assert "matches 3 places" in result.content and "more surrounding" in result.content
    assert path.read_text() == "x = 1\ny = 2\nx = 1\nx = 1\n"


async def test_list_dir_marks_directories_and_caps_entries(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "README.md").write_text("hi")
    listing = await ListDirTool(guard).execute({}, ctx)
    assert listing.content == "README.md\nsrc/"

    many = workspace / "many"
    many.mkdir()
    for i in range(MAX_LIST_ENTRIES + 7):
        (many / f"f{i:04d}").touch()
    capped = await ListDirTool(guard).execute({"path": "many"}, ctx)
    lines = capped.content.splitlines()
    assert len(lines) == MAX_LIST_ENTRIES + 1
    assert lines[0] == "f0000" and "7 more" in lines[-1]


async def test_list_dir_of_a_file_or_empty_dir(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    (workspace / "empty").mkdir()
    (workspace / "a.txt").write_text("a")
    empty = await ListDirTool(guard).execute({"path": "empty"}, ctx)
    file = await ListDirTool(guard).execute({"path": "a.txt"}, ctx)
    assert empty.content == "empty is empty"
    assert file.status == "error" and "not a directory" in file.content


async def test_unreadable_file_reports_permission_denied(
    guard: WorkspaceGuard, ctx: ToolContext, workspace: Path
) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = workspace / "locked.txt"
    path.write_text("x")
    path.chmod(0)
    result = await ReadFileTool(guard).execute({"path": "locked.txt"}, ctx)
    assert result.status == "error" and "permission denied" in result.content
