"""What CountBot adds to an MCP tool call, and how long the daemon takes to start with servers.

1. Per call: the test MCP server (`tests/support/mcp_server.py`, stdio) answers `add`; the raw
   SDK call (`mcp.Client.call_tool`) against CountBot's path (`ToolRegistry.execute`: validation,
   timeout and cancel race, masking, paging, result conversion) through `McpManager`. Both
   unsandboxed, same server code, same run; medians of wall ms per call.
2. Start-up: a daemon with five configured stdio servers (in the sandbox when bwrap works): when
   the UI answers `GET /`, and when all five servers are ready, against a daemon with none.

    python bench/mcp_call.py [--calls 300] [--starts 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from mcp import Client, StdioServerParameters

from countbot.config.settings import McpServerSettings, McpSettings
from countbot.llm.types import ToolCall
from countbot.mcp.manager import McpManager
from countbot.tools.base import ToolContext
from countbot.tools.registry import ToolRegistry
from countbot.web.daemon import bind_listener, serve_daemon
from tests.support.scripted_model import ScriptedModelServer
from tests.support.settings import make_settings

ROOT = Path(__file__).resolve().parent.parent
WARMUP = 20
SERVER_ARGS = ["-m", "tests.support.mcp_server", "stdio"]
SERVER_ENV = {"PYTHONPATH": str(ROOT)}


async def call_times(calls: int, folder: Path) -> tuple[list[float], list[float]]:
    """Wall ms per call, raw SDK and CountBot, alternating so both see the same machine load."""
    params = StdioServerParameters(command=sys.executable, args=SERVER_ARGS, env=SERVER_ENV)
    server = McpServerSettings(command=sys.executable, args=SERVER_ARGS, env=SERVER_ENV)
    registry = ToolRegistry()
    manager = McpManager(
        McpSettings(servers={"t": server}), registry, workspace=folder, log_dir=folder / "logs"
    )
    manager.start()
    ctx = ToolContext("bench", folder)

    async def ours(i: int) -> None:
        args = {"a": i, "b": 1}
        result = await registry.execute(ToolCall("c", "t__add", json.dumps(args), args), ctx)
        assert result.status == "ok", result.content

    try:
        async with Client(params) as client:
            assert await manager.connections["t"].wait_ready(60)

            async def raw(i: int) -> None:
                await client.call_tool("add", {"a": i, "b": 1})

            for i in range(WARMUP):
                await raw(i)
                await ours(i)
            times: tuple[list[float], list[float]] = ([], [])
            for i in range(calls):
                for action, into in ((raw, times[0]), (ours, times[1])):
                    start = time.perf_counter()
                    await action(i)
                    into.append((time.perf_counter() - start) * 1000)
            return times
    finally:
        await manager.close()


async def daemon_start(
    servers: int, folder: Path, model: ScriptedModelServer
) -> tuple[float, float]:
    """Seconds until the UI answers, and until every server is ready."""
    settings = make_settings(folder, model)
    entry = McpServerSettings(command=sys.executable, args=SERVER_ARGS, env=SERVER_ENV)
    settings.mcp = McpSettings(servers={f"s{i}": entry for i in range(servers)})
    start = time.perf_counter()
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            base = f"http://127.0.0.1:{running.port}"
            async with httpx.AsyncClient(base_url=base, trust_env=False) as http:
                while True:
                    try:
                        if (await http.get("/")).status_code == 200:
                            break
                    except httpx.TransportError:
                        await asyncio.sleep(0.005)
                ui = time.perf_counter() - start
                while True:
                    rows = (await http.get("/api/mcp")).json()["servers"]
                    if all(row["state"] == "ready" for row in rows):
                        break
                    await asyncio.sleep(0.01)
                ready = time.perf_counter() - start
    return ui, ready


async def main(calls: int, starts: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        raw, ours = await call_times(calls, folder)
        raw_ms, our_ms = statistics.median(raw), statistics.median(ours)
        print(f"MCP tool call (stdio, `add`), {calls} calls, median ms")
        print(f"{'path':<34}{'median ms':>10}{'added ms':>10}{'ratio':>8}")
        print(f"{'raw SDK Client.call_tool':<34}{raw_ms:>10.3f}{'':>10}{1:>8.2f}")
        added, ratio = our_ms - raw_ms, our_ms / raw_ms
        print(f"{'CountBot ToolRegistry.execute':<34}{our_ms:>10.3f}{added:>10.3f}{ratio:>8.2f}")
        print()
        with ScriptedModelServer() as model:
            rows = {}
            for servers in (0, 5):
                runs = [
                    await daemon_start(servers, folder / f"d{servers}-{i}", model)
                    for i in range(starts)
                ]
                rows[servers] = (
                    statistics.median(r[0] for r in runs),
                    statistics.median(r[1] for r in runs),
                )
        print(f"Daemon start-up, median of {starts} starts, seconds")
        print(f"{'configured stdio servers':<26}{'UI answers':>12}{'all servers ready':>19}")
        for servers, (ui, ready) in rows.items():
            shown = f"{ready:.3f}" if servers else "-"
            print(f"{servers:<26}{ui:>12.3f}{shown:>19}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--starts", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.starts))
