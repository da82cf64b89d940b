"""MCP servers written with the SDK, reached over stdio and streamable HTTP on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from countbot.llm.types import ToolCall
from countbot.tools.base import ToolContext
from countbot.tools.registry import ToolRegistry
from tests.mcp.conftest import stdio_server
from tests.support.mcp_server import PIXEL


def call(name: str, /, **args: object) -> ToolCall:
    return ToolCall(f"c-{name}", name, json.dumps(args), dict(args))


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext("s1", tmp_path)


async def test_stdio_tools_are_registered_and_answer(start_manager, ctx) -> None:
    manager, registry = await start_manager({"t": stdio_server()})
    assert {"t__echo", "t__add", "t__picture", "t__slow"} <= set(registry.names())
    spec = next(s for s in registry.specs() if s.name == "t__add")
    assert spec.parameters["properties"].keys() == {"a", "b"}
    assert "untrusted" in spec.description

    result = await registry.execute(call("t__echo", text="hi"), ctx)
    assert result.status == "ok"
    assert result.content.startswith('<external source="mcp:t/echo">')
    assert "echo: hi" in result.content
    bad = await registry.execute(call("t__add", a="x"), ctx)
    assert bad.status == "error" and "invalid arguments for t__add" in bad.content
    [row] = manager.status()
    assert row["state"] == "ready" and "t__echo" in row["tools"]


async def test_image_results_carry_the_image(start_manager, ctx) -> None:
    _, registry = await start_manager({"t": stdio_server()})
    result = await registry.execute(call("t__picture"), ctx)
    assert "a red pixel" in result.content and "[image 1: image/png]" in result.content
    [image] = result.images
    assert image.media_type == "image/png"
    import base64

    assert base64.b64decode(image.data) == PIXEL


async def test_tool_errors_come_back_as_error_results(start_manager, ctx) -> None:
    _, registry = await start_manager({"t": stdio_server()})
    result = await registry.execute(call("t__fail", reason="the disk is full"), ctx)
    assert result.status == "error"
    assert "the disk is full" in result.content


async def test_a_slow_call_is_cancelled_mid_call_and_the_server_stays_usable(
    start_manager, ctx
) -> None:
    _, registry = await start_manager({"t": stdio_server()})
    started = time.monotonic()
    running = asyncio.create_task(registry.execute(call("t__slow", seconds=30), ctx))
    await asyncio.sleep(0.5)
    ctx.cancelled.set()
    result = await running
    assert result.status == "cancelled"
    assert time.monotonic() - started < 25  # stopped mid-call, not after the 30 s sleep
    fresh = ToolContext("s1", ctx.workspace)
    after = await registry.execute(call("t__echo", text="still here"), fresh)
    assert "still here" in after.content


async def test_a_slow_call_times_out(start_manager, ctx) -> None:
    _, registry = await start_manager({"t": stdio_server(timeout=0.5)})
    result = await registry.execute(call("t__slow", seconds=30), ctx)
    assert result.status == "timeout"


async def test_a_crashed_server_is_restarted_and_its_tools_wait_for_it(start_manager, ctx) -> None:
    manager, registry = await start_manager({"t": stdio_server()})
    connection = manager.connections["t"]
    first = await registry.execute(call("t__echo", text="a"), ctx)
    crashed = await registry.execute(call("t__crash"), ctx)
    assert crashed.status == "error" and "went away" in crashed.content
    meanwhile = await registry.execute(call("t__echo", text="b"), ctx)
    if connection.state != "ready":
        assert "unavailable" in meanwhile.content
    assert await connection.wait_ready(30)
    again = await registry.execute(call("t__echo", text="c"), ctx)
    assert "echo: c" in again.content
    assert again.content.split("pid ")[1] != first.content.split("pid ")[1]
    assert connection.restarts >= 1


async def test_list_changed_adds_the_new_tool_and_keeps_unchanged_specs(start_manager, ctx) -> None:
    _, registry = await start_manager({"t": stdio_server()})
    before = registry.specs()
    await registry.execute(call("t__grow"), ctx)
    for _ in range(100):
        if registry.get("t__extra") is not None:
            break
        await asyncio.sleep(0.05)
    assert (await registry.execute(call("t__extra"), ctx)).content.count("extra!") == 1
    # The known tools kept their specs; only the new one was appended.
    assert registry.specs()[: len(before)] == before


async def test_allow_list_limits_the_tools(start_manager) -> None:
    _, registry = await start_manager({"t": stdio_server(tools=["echo"])})
    assert [n for n in registry.names() if n.startswith("t__")] == ["t__echo"]


async def test_the_server_sees_only_its_configured_env(
    start_manager, ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTBOT_TEST_SECRET", "s3cret")
    _, registry = await start_manager({"t": stdio_server(env={"NOTES_KEY": "k1"})})
    mine = await registry.execute(call("t__env", name="NOTES_KEY"), ctx)
    secret = await registry.execute(call("t__env", name="COUNTBOT_TEST_SECRET"), ctx)
    assert "k1" in mine.content and "<unset>" in secret.content


async def test_streamable_http_server(start_manager, ctx, http_url: str) -> None:
    from countbot.config.settings import McpServerSettings

    server = McpServerSettings(url=http_url, headers={"X-Test": "1"})
    _, registry = await start_manager({"web": server})
    result = await registry.execute(call("web__add", a=2, b=3), ctx)
    assert "5" in result.content
    picture = await registry.execute(call("web__picture"), ctx)
    assert len(picture.images) == 1


async def test_a_server_that_cannot_start_reports_why(tmp_path: Path) -> None:
    from countbot.config.settings import McpServerSettings, McpSettings
    from countbot.mcp.manager import McpManager

    registry = ToolRegistry()
    bad = McpServerSettings(command="/nonexistent/server")
    manager = McpManager(
        McpSettings(servers={"bad": bad}), registry, workspace=tmp_path, log_dir=tmp_path
    )
    manager.start()
    try:
        for _ in range(100):
            if manager.connections["bad"].last_error:
                break
            await asyncio.sleep(0.05)
        [row] = manager.status()
        assert row["state"] == "restarting" and row["last_error"]
        assert not [n for n in registry.names() if n.startswith("bad__")]
    finally:
        await manager.close()


async def test_a_server_on_the_older_protocol_is_pinged_and_its_changes_followed(
    start_manager, ctx
) -> None:
    manager, registry = await start_manager({"t": stdio_server()}, protocol="legacy")
    connection = manager.connections["t"]
    assert "echo: old" in (await registry.execute(call("t__echo", text="old"), ctx)).content
    await registry.execute(call("t__grow_legacy"), ctx)
    for _ in range(100):
        if registry.get("t__extra") is not None:
            break
        await asyncio.sleep(0.05)
    assert registry.get("t__extra") is not None
    await registry.execute(call("t__crash"), ctx)
    assert await connection.wait_ready(30)
    assert "echo: back" in (await registry.execute(call("t__echo", text="back"), ctx)).content
