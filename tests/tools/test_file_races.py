"""The file tools under attack while they run: paths swapped for symlinks between resolution and
use, hard links to files outside, and folders holding broken or looping symlinks.

Every test runs twice: with the kernel's `openat2` (when this kernel has it) and with the
portable component-by-component walk older kernels get.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from countbot.tools.base import ToolContext, ToolResult
from countbot.tools.beneath import openat2_available
from countbot.tools.files import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from countbot.tools.workspace_guard import WorkspaceGuard

CANARY = "CANARY-5e1f-outside-the-workspace"
ROUNDS = 300

KERNELS = [
    pytest.param(
        None,
        id="openat2",
        marks=pytest.mark.skipif(not openat2_available(), reason="no openat2 here"),
    ),
    pytest.param(False, id="walk"),
]


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """tmp/ws (the workspace) and tmp/outside (a canary file and folder)."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "canary.txt").write_text(CANARY)
    (outside / "folder").mkdir()
    (outside / "folder" / "canary.txt").write_text(CANARY)
    return workspace, outside


def outside_state(outside: Path) -> dict[str, str]:
    return {str(p.relative_to(outside)): p.read_text() for p in outside.rglob("*") if p.is_file()}


class Swapper:
    """A thread that keeps replacing workspace names with symlinks out and back.

    The tools run at the same time and may create or replace the same names, so a step that
    loses its own race is simply tried again on the next round.
    """

    def __init__(self, workspace: Path, outside: Path) -> None:
        self._workspace, self._outside = workspace, outside
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.swaps = 0

    def _run(self) -> None:
        ws = self._workspace
        while not self._stop.is_set():
            with contextlib.suppress(OSError):
                # A regular file, then (atomically) a symlink to the canary file in its place.
                (ws / ".new").write_text("inside text")
                os.replace(ws / ".new", ws / "target.txt")
                _remove(ws / ".link")
                (ws / ".link").symlink_to(self._outside / "canary.txt")
                os.replace(ws / ".link", ws / "target.txt")
                # A real folder, then a symlink to the outside folder in its place.
                _remove(ws / "folder")
                (ws / "folder").mkdir()
                _remove(ws / "folder")
                (ws / "folder").symlink_to(self._outside / "folder")
                self.swaps += 1

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop swapping (and so stop opening files of its own); safe to call twice."""
        self._stop.set()
        self._thread.join()


def _remove(path: Path) -> None:
    """Remove a file, a symlink (never what it points to) or a folder inside the workspace."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path)


def descriptors_into(folder: Path) -> list[str]:
    """What this process still has open under `folder` (the workspace and the outside tree)."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
    return [target for target in targets if target.startswith(f"{folder}/")]


@pytest.fixture
def swapping(tree: tuple[Path, Path]) -> Iterator[Swapper]:
    with Swapper(*tree) as swapper:
        yield swapper


@pytest.mark.parametrize("kernel", KERNELS)
async def test_a_path_swapped_for_a_symlink_never_reaches_outside(
    tree: tuple[Path, Path], swapping: Swapper, kernel: bool | None
) -> None:
    workspace, outside = tree
    before = outside_state(outside)
    guard = WorkspaceGuard(workspace, kernel=kernel)
    ctx = ToolContext("s1", workspace)
    calls = [
        (ReadFileTool(guard), {"path": "target.txt"}),
        (EditFileTool(guard), {"path": "target.txt", "old_text": "i", "new_text": "i"}),
        (EditFileTool(guard), {"path": "target.txt", "old_text": "CANARY", "new_text": "x"}),
        (WriteFileTool(guard), {"path": "folder/canary.txt", "content": "overwritten"}),
        (WriteFileTool(guard), {"path": "folder/new.txt", "content": "new"}),
        (ReadFileTool(guard), {"path": "folder/canary.txt"}),
        (ListDirTool(guard), {"path": "folder"}),
    ]
    results: list[ToolResult] = []
    for _ in range(ROUNDS):
        for tool, args in calls:
            results.append(await tool.execute(args, ctx))
    assert swapping.swaps > 10, "the swapper must have raced the tools"
    swapping.stop()
    # Only the tools' own descriptors count: other tests' threads may open files meanwhile.
    assert not descriptors_into(workspace.parent), "no descriptor is left open"
    assert not [r.content for r in results if CANARY in r.content]
    assert outside_state(outside) == before
    assert sorted(p.name for p in (outside / "folder").iterdir()) == ["canary.txt"]
    # Both sides of the race were hit: some calls worked inside, some were refused.
    assert any(r.content == "inside text" for r in results)
    assert any("outside the workspace" in r.content for r in results)


@pytest.mark.parametrize("kernel", KERNELS)
async def test_a_hard_linked_file_is_refused_for_reading_and_editing(
    tree: tuple[Path, Path], kernel: bool | None
) -> None:
    workspace, outside = tree
    os.link(outside / "canary.txt", workspace / "notes.txt")
    guard = WorkspaceGuard(workspace, kernel=kernel)
    ctx = ToolContext("s1", workspace)
    read = await ReadFileTool(guard).execute({"path": "notes.txt"}, ctx)
    edit = await EditFileTool(guard).execute(
        {"path": "notes.txt", "old_text": "CANARY", "new_text": "x"}, ctx
    )
    for result in (read, edit):
        assert result.status == "error"
        assert "2 hard links" in result.content and "outside the workspace" in result.content
        assert CANARY not in result.content
    # A write replaces the name with a new file: the other link keeps its content.
    write = await WriteFileTool(guard).execute({"path": "notes.txt", "content": "mine"}, ctx)
    assert write.status == "ok"
    assert (outside / "canary.txt").read_text() == CANARY
    assert (workspace / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("kernel", KERNELS)
async def test_list_dir_shows_broken_and_looping_links_instead_of_failing(
    tree: tuple[Path, Path], kernel: bool | None
) -> None:
    workspace, _ = tree
    (workspace / "real").mkdir()
    (workspace / "a.txt").write_text("a")
    (workspace / "loop").symlink_to("loop")
    (workspace / "ping").symlink_to("pong")
    (workspace / "pong").symlink_to("ping")
    (workspace / "gone").symlink_to("missing.txt")
    (workspace / "out").symlink_to("../outside")
    (workspace / "docs").symlink_to("real")
    guard = WorkspaceGuard(workspace, kernel=kernel)
    listing = await ListDirTool(guard).execute({}, ToolContext("s1", workspace))
    assert listing.status == "ok", listing.content
    assert listing.content.splitlines() == [
        "a.txt",
        "docs/ -> real",
        "gone -> missing.txt (broken: its target does not exist)",
        "loop -> loop (broken: a symlink loop)",
        "out -> ../outside (leads outside the workspace)",
        "ping -> pong (broken: a symlink loop)",
        "pong -> ping (broken: a symlink loop)",
        "real/",
    ]


@pytest.mark.parametrize("kernel", KERNELS)
async def test_symlinks_that_stay_inside_still_work(
    tree: tuple[Path, Path], kernel: bool | None
) -> None:
    workspace, _ = tree
    (workspace / "sub").mkdir()
    (workspace / "real.txt").write_text("real content")
    (workspace / "sub" / "up").symlink_to("../real.txt")
    (workspace / "absolute").symlink_to(workspace / "real.txt")
    guard = WorkspaceGuard(workspace, kernel=kernel)
    ctx = ToolContext("s1", workspace)
    for path in ("sub/up", "absolute"):
        read = await ReadFileTool(guard).execute({"path": path}, ctx)
        assert read.content == "real content", path
    # Writing through a link replaces its target, inside the workspace.
    await WriteFileTool(guard).execute({"path": "sub/up", "content": "new content"}, ctx)
    assert (workspace / "real.txt").read_text() == "new content"
    assert (workspace / "sub" / "up").is_symlink()


@pytest.mark.parametrize("kernel", KERNELS)
async def test_escapes_through_links_and_dots_are_refused(
    tree: tuple[Path, Path], kernel: bool | None
) -> None:
    workspace, outside = tree
    before = outside_state(outside)
    (workspace / "sub").mkdir()
    (workspace / "sub" / "up").symlink_to("../../outside/canary.txt")
    (workspace / "abs").symlink_to(outside / "canary.txt")
    (workspace / "dirlink").symlink_to(outside / "folder")
    guard = WorkspaceGuard(workspace, kernel=kernel)
    ctx = ToolContext("s1", workspace)
    for path in ("sub/up", "abs", "dirlink/canary.txt"):
        read = await ReadFileTool(guard).execute({"path": path}, ctx)
        write = await WriteFileTool(guard).execute({"path": path, "content": "x"}, ctx)
        for result in (read, write):
            assert result.status == "error" and "outside the workspace" in result.content, path
    new = await WriteFileTool(guard).execute({"path": "dirlink/deep/new.txt", "content": "x"}, ctx)
    assert new.status == "error" and "outside the workspace" in new.content
    assert outside_state(outside) == before
