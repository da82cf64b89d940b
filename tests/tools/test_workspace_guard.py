"""Confinement: escapes through `..`, absolute paths, `~` and symlinks are refused, credentials
are never readable, and nothing outside the workspace is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from countbot.tools.base import ToolContext
from countbot.tools.files import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from countbot.tools.workspace_guard import PathRefused, WorkspaceGuard


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """tmp/ws (the workspace, with a symlink `link` to tmp/outside) and tmp/outside/secret.txt."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("outside content")
    (workspace / "link").symlink_to(outside)
    (workspace / "etc").symlink_to("/etc")
    return workspace, outside


def snapshot(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in directory.iterdir()}


ESCAPES = [
    "../outside/secret.txt",
    "../outside/new.txt",
    "sub/../../outside/secret.txt",
    "link/secret.txt",
    "link/new.txt",
    "etc/passwd",
    "/etc/passwd",
    "~/.bashrc",
]


@pytest.mark.parametrize("path", ESCAPES)
async def test_escapes_are_refused_and_nothing_outside_changes(
    layout: tuple[Path, Path], path: str
) -> None:
    workspace, outside = layout
    before = snapshot(outside)
    guard = WorkspaceGuard(workspace)
    ctx = ToolContext("s1", workspace)
    attempts = [
        (ReadFileTool(guard), {"path": path}),
        (WriteFileTool(guard), {"path": path, "content": "pwned"}),
        (EditFileTool(guard), {"path": path, "old_text": "outside", "new_text": "pwned"}),
        (ListDirTool(guard), {"path": path}),
    ]
    for tool, args in attempts:
        result = await tool.execute(args, ctx)
        assert result.status == "error", (tool.name, result.content)
        assert "outside the workspace" in result.content or "home-directory" in result.content
    assert snapshot(outside) == before


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".env.local",
        "config/.env",
        "deploy/server.pem",
        "keys/id_rsa",
        "keys/id_ed25519.pub",
        ".ssh/config",
        ".netrc",
        ".git-credentials",
    ],
)
async def test_credential_files_inside_the_workspace_are_refused(
    layout: tuple[Path, Path], path: str
) -> None:
    workspace, _ = layout
    target = workspace / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("API_KEY=sk-abcdefghijklmnopqrstuvwx")
    guard = WorkspaceGuard(workspace)
    ctx = ToolContext("s1", workspace)
    read = await ReadFileTool(guard).execute({"path": path}, ctx)
    write = await WriteFileTool(guard).execute({"path": path, "content": "x"}, ctx)
    assert read.status == "error" and "credentials" in read.content
    assert write.status == "error"
    assert target.read_text() == "API_KEY=sk-abcdefghijklmnopqrstuvwx"


def test_a_symlink_to_a_credential_file_is_refused(layout: tuple[Path, Path]) -> None:
    workspace, outside = layout
    (outside / ".env").write_text("TOKEN=x")
    (workspace / "harmless.txt").symlink_to(outside / ".env")
    with pytest.raises(PathRefused):
        WorkspaceGuard(workspace, restrict=False).resolve("harmless.txt")


def test_unrestricted_mode_reaches_outside_but_never_sensitive_paths(
    layout: tuple[Path, Path], tmp_path: Path
) -> None:
    workspace, outside = layout
    config = tmp_path / "config.yaml"
    config.write_text("model:\n  api_key: sk-abcdefghijklmnopqrstuvwx\n")
    guard = WorkspaceGuard(workspace, restrict=False, sensitive_paths=[config])
    assert guard.resolve("../outside/secret.txt") == outside.resolve() / "secret.txt"
    assert guard.resolve("~") == Path(os.path.realpath(Path.home()))
    with pytest.raises(PathRefused, match="credentials"):
        guard.resolve(str(config))
    with pytest.raises(PathRefused, match="credentials"):
        guard.resolve("../config.yaml")
    with pytest.raises(PathRefused):
        guard.resolve("~/.ssh/id_rsa")


def test_relative_paths_resolve_inside_the_workspace(layout: tuple[Path, Path]) -> None:
    workspace, _ = layout
    guard = WorkspaceGuard(workspace)
    real = workspace.resolve()
    assert guard.resolve("a/b/../c.txt") == real / "a" / "c.txt"
    assert guard.resolve("") == real
    assert guard.resolve(str(real / "x.txt")) == real / "x.txt"
    assert guard.display(real / "a" / "c.txt") == "a/c.txt"
