"""MCP servers from `tests/support/mcp_server.py`: configs for stdio, and a live HTTP server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from countbot.config.settings import McpServerSettings, McpSettings
from countbot.mcp.manager import McpManager
from countbot.tools.registry import ToolRegistry
from tests.tools import conftest as tools

ROOT = Path(__file__).resolve().parents[2]

# A workspace and a tool context in it, as for the built-in tools' tests.
workspace = tools.workspace
ctx = tools.ctx


def stdio_server(**extra: object) -> McpServerSettings:
    """The test server over stdio; PYTHONPATH is the one variable it needs from us."""
    env = {"PYTHONPATH": str(ROOT), **extra.pop("env", {})}  # type: ignore[dict-item]
    return McpServerSettings(
        command=sys.executable,
        args=["-m", "tests.support.mcp_server", "stdio"],
        env=env,
        **extra,
    )


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    """The test server over streamable HTTP on a free loopback port."""
    port_file = tmp_path / "port"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mcp_server", "http", str(port_file)], env=env
    )
    deadline = time.monotonic() + 30
    while not port_file.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port_file.read_text()}/mcp"
    proc.terminate()  # uvicorn waits for open streams (a client's listen stream) before exiting
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@pytest.fixture
async def start_manager(tmp_path: Path) -> AsyncIterator[object]:
    """Starts an `McpManager` over a fresh registry; every one started is closed afterwards."""
    managers: list[McpManager] = []

    async def start(
        servers: dict[str, McpServerSettings], *, wait: bool = True, **kwargs: object
    ) -> tuple[McpManager, ToolRegistry]:
        registry = ToolRegistry()
        manager = McpManager(
            McpSettings(servers=servers),
            registry,
            workspace=tmp_path,
            log_dir=tmp_path / "mcp-logs",
            **kwargs,  # type: ignore[arg-type]
        )
        managers.append(manager)
        manager.start()
        for name, connection in manager.connections.items():
            if wait and not manager.is_held(name):  # a held one waits for the user's yes
                assert await connection.wait_ready(60), connection.last_error
        return manager, registry

    yield start
    await asyncio.gather(*(m.close() for m in managers))
