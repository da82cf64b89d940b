"""With no working sandbox, a stdio MCP server waits for the user's yes before it starts."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from countbot.config.settings import McpServerSettings
from countbot.execution.sandbox import Sandbox
from countbot.llm.types import ToolCall
from countbot.mcp.host_start import START_TOOL, start_request
from countbot.mcp.manager import McpManager
from countbot.tools.approval import ApprovalDecision, ApprovalRequest, Approver
from countbot.tools.base import ToolContext, ToolResult
from countbot.tools.registry import ToolRegistry
from tests.mcp.conftest import stdio_server

Held = Callable[..., Awaitable[tuple[McpManager, ToolRegistry]]]


@pytest.fixture
def held_manager(start_manager: Callable[..., Awaitable[Any]]) -> Held:
    """A manager as the daemon makes it when the sandbox does not work: no launcher, and the
    "Always allow" rules in `remembered`."""

    async def start(
        servers: dict[str, McpServerSettings], remembered: set[tuple[str, str]] = frozenset()
    ) -> tuple[McpManager, ToolRegistry]:
        async def allows(tool: str, key: str) -> bool:
            return (tool, key) in remembered

        return await start_manager(servers, ask_to_start=allows)

    return start


def answering(decision: ApprovalDecision, asked: list[ApprovalRequest]) -> Approver:
    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return decision

    return approver


async def start_server(registry: ToolRegistry, ctx: ToolContext) -> ToolResult:
    call = ToolCall("c1", START_TOOL, json.dumps({"server": "t"}), {"server": "t"})
    return await registry.execute(call, ctx)


async def test_the_server_waits_until_the_user_approves_it(
    held_manager: Held, tmp_path: Path
) -> None:
    manager, registry = await held_manager({"t": stdio_server()})
    assert manager.status()[0]["state"] == "awaiting approval"
    assert registry.names() == [START_TOOL]  # none of its tools: it never ran
    assert not (tmp_path / "mcp-logs" / "t.stderr.log").exists()

    unattended = await start_server(registry, ToolContext("s1", tmp_path))
    assert "nobody can give it here" in unattended.content
    asked: list[ApprovalRequest] = []
    ctx = ToolContext("s1", tmp_path, approver=answering("deny", asked))
    denied = await start_server(registry, ctx)
    assert "did not approve" in denied.content
    assert manager.status()[0]["state"] == "awaiting approval"

    ctx = ToolContext("s1", tmp_path, approver=answering("once", asked))
    approved = await start_server(registry, ctx)
    assert approved.status == "ok" and "t__echo" in approved.content, approved.content
    request = asked[-1]
    assert request.tool == START_TOOL and "sandbox" in request.reason
    assert request.key == start_request("t", manager.server("t")).key
    assert "tests.support.mcp_server" in request.summary  # the user sees what would run
    assert START_TOOL not in registry.names() and manager.status()[0]["state"] == "ready"
    call = ToolCall("c2", "t__echo", json.dumps({"text": "hi"}), {"text": "hi"})
    assert "echo: hi" in (await registry.execute(call, ToolContext("s1", tmp_path))).content


async def test_a_server_always_allowed_before_starts_on_its_own(
    held_manager: Held, tmp_path: Path
) -> None:
    server = stdio_server()
    remembered = {(START_TOOL, start_request("t", server).key)}
    manager, registry = await held_manager({"t": server, "u": stdio_server()}, remembered)
    assert await manager.connections["t"].wait_ready(60), manager.connections["t"].last_error
    assert "t__echo" in registry.names()
    # The other one still waits, and the start tool now offers only it.
    assert manager.status()[1]["state"] == "awaiting approval"
    [start] = [spec for spec in registry.specs() if spec.name == START_TOOL]
    assert start.parameters["properties"]["server"]["enum"] == ["u"]


async def test_a_changed_command_asks_again(held_manager: Held, tmp_path: Path) -> None:
    old = start_request("t", stdio_server()).key
    changed = McpServerSettings(command=sys.executable, args=["-m", "another_server"])
    manager, _ = await held_manager({"t": changed}, {(START_TOOL, old)})
    assert manager.is_held("t")


async def test_a_required_sandbox_that_does_not_work_refuses_the_server(
    start_manager: Callable[..., Awaitable[Any]], tmp_path: Path
) -> None:
    # `bwrap` means "never outside the sandbox": the server is refused, as exec refuses.
    sandbox = Sandbox("bwrap", tmp_path, bwrap="no-such-bwrap")
    assert not sandbox.probe().active
    manager, registry = await start_manager(
        {"t": stdio_server()}, wait=False, launcher=sandbox.server_launcher()
    )
    connection = manager.connections["t"]
    for _ in range(1200):
        if connection.last_error:
            break
        await asyncio.sleep(0.05)
    assert "tools.exec.sandbox is 'bwrap'" in connection.last_error
    assert connection.state == "restarting" and registry.names() == []
    assert not manager.is_held("t")  # nothing to approve: it never runs unsandboxed
