"""`approval: always` asks the turn's approver; stdio servers run inside the bwrap sandbox."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from countbot.config.settings import McpServerSettings
from countbot.execution.sandbox import Sandbox
from countbot.llm.types import ToolCall
from countbot.tools.approval import ApprovalDecision, ApprovalRequest
from countbot.tools.base import ToolContext
from tests.mcp.conftest import stdio_server


def echo(text: str) -> ToolCall:
    return ToolCall("c1", "t__echo", json.dumps({"text": text}), {"text": text})


async def test_approval_always_denies_without_an_approver(start_manager, tmp_path: Path) -> None:
    _, registry = await start_manager({"t": stdio_server(approval="always")})
    result = await registry.execute(echo("hi"), ToolContext("s1", tmp_path))
    assert result.status == "error" and "needs the user's approval" in result.content


@pytest.mark.parametrize(("answer", "runs"), [("once", True), ("deny", False)])
async def test_approval_always_asks_the_approver(
    start_manager, tmp_path: Path, answer: ApprovalDecision, runs: bool
) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return answer

    _, registry = await start_manager({"t": stdio_server(approval="always")})
    ctx = ToolContext("s1", tmp_path, approver=approver)
    result = await registry.execute(echo("hi"), ctx)
    [request] = asked
    assert request.tool == request.key == "t__echo" and "hi" in request.summary
    assert ("echo: hi" in result.content) is runs


async def test_a_stdio_server_runs_in_the_sandbox(
    start_manager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTBOT_TEST_SECRET", "s3cret")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = Sandbox("auto", workspace, home=home)
    if not sandbox.probe().active:
        pytest.skip(sandbox.status.detail)
    _, registry = await start_manager(
        {"t": stdio_server(env={"NOTES_KEY": "k1"})}, launcher=sandbox.server_command
    )
    ctx = ToolContext("s1", workspace)

    async def env(name: str) -> str:
        call = ToolCall("c", "t__env", json.dumps({"name": name}), {"name": name})
        return (await registry.execute(call, ctx)).content

    assert "k1" in await env("NOTES_KEY")
    assert "<unset>" in await env("COUNTBOT_TEST_SECRET")
    assert "/tmp/.cache" in await env("XDG_CACHE_HOME")
    # Its own PID namespace: the server is a child of bwrap's init, not of the daemon.
    pid = (await registry.execute(echo("x"), ctx)).content.split("pid ")[1].split(")")[0]
    assert int(pid) < 10


async def test_a_server_script_under_tmp_fails_in_the_sandbox_and_says_why(
    start_manager, tmp_path: Path
) -> None:
    """pytest's tmp_path is under /tmp, which the sandbox replaces with a private one: the
    server's own file is not there for it, and the error says so instead of only 'No such
    file or directory'."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = Sandbox("auto", workspace)
    if not sandbox.probe().active:
        pytest.skip(sandbox.status.detail)
    script = tmp_path / "server.py"
    script.write_text("print('never runs')\n")
    server = McpServerSettings(command=sys.executable, args=[str(script)])
    manager, _ = await start_manager({"t": server}, wait=False, launcher=sandbox.server_command)
    connection = manager.connections["t"]
    assert not await connection.wait_tried(120)
    assert "private /tmp" in connection.last_error and str(script) in connection.last_error
