"""All configured MCP servers: started in the background, their tools kept in the registry.

The registry changes only when a server's tool list really changes (names, descriptions or
schemas), so the tool specs (part of the providers' prompt cache) stay the same across restarts
and unchanged `list_changed` notifications.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from countbot.config.settings import McpSettings
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
    ) -> None:
        self._settings = settings
        self._registry = registry
        self._registered: dict[str, _Registered] = {}
        self.connections: dict[str, McpConnection] = {}
        if not any(server.enabled for server in settings.servers.values()):
            return  # the SDK's import (~0.3 s) is for installations that use it
        from countbot.mcp.connection import McpConnection

        self.connections = {
            name: McpConnection(
                name,
                server,
                workspace=workspace,
                log_dir=log_dir,
                on_tools=self._sync,
                launcher=launcher if server.command else None,
                protocol=protocol,
            )
            for name, server in settings.servers.items()
            if server.enabled
        }

    def start(self) -> None:
        """Connect to every enabled server in the background; returns at once."""
        for connection in self.connections.values():
            connection.start()

    async def close(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()))

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
