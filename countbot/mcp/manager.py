"""All configured MCP servers: started in the background, their tools kept in the registry.

Stdio servers that would run outside the sandbox are held until the user approves them
(`host_start.py`) when the manager is given `ask_to_start` (the daemon and in-process turns);
without it (`countbot mcp test`, the owner's own command) they start like the others.

The registry changes only when a server's tool list really changes (names, descriptions or
schemas), so the tool specs (part of the providers' prompt cache) stay the same across restarts
and unchanged `list_changed` notifications.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from countbot.config.settings import McpServerSettings, McpSettings
from countbot.mcp.host_start import START_TOOL, Remembered, StartServerTool, start_request
from countbot.mcp.schema import MAX_NAME, repaired_schema, tool_name
from countbot.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from countbot.mcp.connection import Launcher, McpConnection
    from countbot.mcp.tool import McpTool


@dataclass(slots=True)
class _Registered:
    tools: dict[str, McpTool] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


class McpManager:
    """Owns one `McpConnection` per enabled server and mirrors their tools into the registry."""

    def __init__(
        self,
        settings: McpSettings,
        registry: ToolRegistry,
        *,
        workspace: Path,
        log_dir: Path,
        launcher: Launcher | None = None,
        protocol: str = "auto",
        ask_to_start: Remembered | None = None,
    ) -> None:
        self._settings = settings
        self._registry = registry
        self._registered: dict[str, _Registered] = {}
        self._ask_to_start = ask_to_start
        self._held: set[str] = set()
        self._remembered: asyncio.Task[None] | None = None
        self._workspace = workspace
        self._log_dir = log_dir
        self._launcher = launcher
        self._protocol = protocol
        self.connections: dict[str, McpConnection] = {}
        for name, server in settings.servers.items():
            if server.enabled:
                self._add(name, server)
        self._offer_start_tool()

    def _add(self, name: str, server: McpServerSettings) -> McpConnection:
        """A connection for `name` (not started); held for the user's yes when it would run on
        the host and the daemon asks before starting such servers."""
        # The SDK's import (~0.3 s) is for installations that use it.
        from countbot.mcp.connection import McpConnection

        connection = self.connections[name] = McpConnection(
            name,
            server,
            workspace=self._workspace,
            log_dir=self._log_dir,
            on_tools=self._sync,
            launcher=self._launcher if server.command else None,
            protocol=self._protocol,
        )
        if self._launcher is None and self._ask_to_start is not None and server.command:
            self._held.add(name)
            connection.state = "awaiting approval"
        return connection

    async def apply(self, settings: McpSettings) -> None:
        """Follow a changed configuration while running: a server removed, switched off or
        changed stops and its tools leave the registry; a new or switched-on one starts (or
        waits for the user's yes, as at start)."""
        old, self._settings = self._settings, settings
        for name in list(self.connections):
            wanted = settings.servers.get(name)
            if wanted is None or not wanted.enabled or wanted != old.servers.get(name):
                await self._remove(name)
        added = []
        for name, server in settings.servers.items():
            if server.enabled and name not in self.connections:
                added.append(self._add(name, server))
        self._offer_start_tool()
        for connection in added:
            if connection.name not in self._held:
                connection.start()
        if any(c.name in self._held for c in added):
            self._remembered = asyncio.create_task(self._start_remembered())

    async def _remove(self, name: str) -> None:
        connection = self.connections.pop(name)
        self._held.discard(name)
        await connection.stop()
        for tool in self._registered.pop(name, _Registered()).tools:
            self._registry.unregister(tool)

    def start(self) -> None:
        """Connect to every enabled server in the background; returns at once. Held servers
        start only if "Always allow" was given for them before."""
        for name, connection in self.connections.items():
            if name not in self._held:
                connection.start()
        if self._held:
            self._remembered = asyncio.create_task(self._start_remembered())

    async def close(self) -> None:
        if self._remembered is not None:
            self._remembered.cancel()
            await asyncio.gather(self._remembered, return_exceptions=True)
        await asyncio.gather(*(c.stop() for c in self.connections.values()))

    def is_held(self, name: str) -> bool:
        """Whether `name` waits for the user's yes before it starts on the host."""
        return name in self._held

    def server(self, name: str) -> McpServerSettings:
        return self._settings.servers[name]

    async def release(self, name: str, wait: float) -> str:
        """Start a held server (the user approved it); waits up to `wait` s for its tools.

        Two turns may both have asked: the second finds it started and only waits."""
        connection = self.connections[name]
        if name in self._held:
            self._held.discard(name)
            self._offer_start_tool()
            connection.start()
        if not await connection.wait_tried(wait):
            return f"started {name!r}, but it is not ready yet: {connection.unavailable()}"
        tools = sorted(self._registered.get(name, _Registered()).tools)
        return f"started the MCP server {name!r}; its tools: {', '.join(tools) or 'none'}"

    async def _start_remembered(self) -> None:
        assert self._ask_to_start is not None
        for name in sorted(self._held):
            if await self._ask_to_start(START_TOOL, start_request(name, self.server(name)).key):
                await self.release(name, 0)

    def _offer_start_tool(self) -> None:
        """`mcp_start_server` names exactly the servers still held (and is gone with none)."""
        if self._registry.get(START_TOOL) is not None:
            self._registry.unregister(START_TOOL)
        if self._held:
            self._registry.register(StartServerTool(self, self._held))

    def status(self) -> list[dict[str, Any]]:
        """Each configured server: transport, state, tools, skipped tools and last error."""
        rows = []
        for name, server in self._settings.servers.items():
            connection = self.connections.get(name)
            registered = self._registered.get(name, _Registered())
            rows.append(
                {
                    "name": name,
                    "transport": "stdio" if server.command else "http",
                    "target": server.command or server.url,
                    "enabled": server.enabled,
                    "state": connection.state if connection else "disabled",
                    "approval": server.approval,
                    "tools": sorted(registered.tools),
                    "skipped": dict(registered.skipped),
                    "last_error": connection.last_error if connection else "",
                    "restarts": connection.restarts if connection else 0,
                }
            )
        return rows

    def _sync(self, connection: McpConnection) -> None:
        """Register the server's current tools; only real changes touch the registry."""
        from countbot.mcp.tool import McpTool

        registered = self._registered.setdefault(connection.name, _Registered())
        wanted: dict[str, McpTool] = {}
        skipped: dict[str, str] = {}
        for remote in connection.tools:
            name = tool_name(connection.name, remote.name)
            parameters, problem = repaired_schema(remote.input_schema)
            if parameters is None:
                skipped[remote.name] = problem
            elif len(name) > MAX_NAME:
                skipped[remote.name] = f"the name {name!r} is longer than {MAX_NAME} characters"
            elif name in wanted or (
                name not in registered.tools and self._registry.get(name) is not None
            ):
                skipped[remote.name] = f"the name {name!r} is taken by another tool"
            else:
                wanted[name] = McpTool(connection, remote, parameters)
        for name, old in list(registered.tools.items()):
            new = wanted.get(name)
            if new is None or _spec(new) != _spec(old):
                self._registry.unregister(name)
                del registered.tools[name]
        for name, tool in wanted.items():
            if name not in registered.tools:
                self._registry.register(tool)
                registered.tools[name] = tool
        registered.skipped = skipped


def _spec(tool: McpTool) -> tuple[str, str, Any]:
    return (tool.remote_name, tool.description, tool.parameters)
