"""Stdio MCP servers that would run outside the sandbox wait for the user's yes before starting.

With no working sandbox (`tools.exec.sandbox: off`, or `auto` without bubblewrap) a stdio server
would run on this machine with the user's full access, like an unsandboxed `exec` command. So,
as for exec, it does not start on its own: the model gets one tool, `mcp_start_server`, that
names the held servers, and calling it asks the turn's approver (the web UI's card, a chat
channel's buttons, the CLI's prompt; unattended turns are denied). "Always allow" is remembered
per server and exact command line, so such a server then starts with the daemon.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from countbot.config.settings import McpServerSettings
from countbot.tools.approval import ApprovalRequest
from countbot.tools.base import Tool, ToolContext, ToolResult

START_TOOL = "mcp_start_server"
REASON = (
    "there is no working sandbox here: the MCP server would run outside it, with full access "
    "to this machine"
)
# Whether "Always allow" was given for (tool, key): the store's approval rules.
Remembered = Callable[[str, str], Awaitable[bool]]
# How long the tool waits for a started server's tools, so this turn can already use them.
_READY_WAIT = 60.0


class HeldServers(Protocol):
    """What the tool needs of the manager that holds the servers."""

    def is_held(self, name: str) -> bool: ...

    def server(self, name: str) -> McpServerSettings: ...

    async def release(self, name: str, wait: float) -> str: ...


def command_line(server: McpServerSettings) -> str:
    """The server's command as the user would type it (what the approval shows and remembers)."""
    return shlex.join([server.command or "", *server.args])


def start_request(name: str, server: McpServerSettings) -> ApprovalRequest:
    """The question for starting `name` on the host; its key is the server and its command."""
    line = command_line(server)
    return ApprovalRequest(
        tool=START_TOOL,
        summary=f"start the MCP server {name!r} on this machine: {line}",
        reason=REASON,
        key=f"{name}: {line}",
    )


class StartServerTool(Tool):
    """Starts a held server once the user approves; its tools then join the registry."""

    name = START_TOOL
    idempotent = False
    timeout = _READY_WAIT + 600  # the user may take a while to answer

    def __init__(self, manager: HeldServers, held: Iterable[str]) -> None:
        names = sorted(held)
        self._manager = manager
        listed = "; ".join(f"{n} ({command_line(manager.server(n))})" for n in names)
        self.description = (
            "Start one of the user's MCP servers that is configured but not running: there is "
            "no working sandbox here, so it would run on this machine with full access, and the "
            "user is asked first. Call it when the user wants what such a server offers; its "
            f"tools are available once it has started. Waiting servers: {listed}."
        )
        self.parameters = {
            "type": "object",
            "properties": {"server": {"type": "string", "enum": names}},
            "required": ["server"],
            "additionalProperties": False,
        }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = str(args.get("server", ""))
        if not self._manager.is_held(name):
            return ToolResult.error(f"{name!r} is not an MCP server waiting to start")
        if ctx.approver is None:
            return ToolResult.error(
                f"starting {name!r} needs the user's approval ({REASON}) and nobody can give it "
                "here; it was not started."
            )
        decision = await ctx.approver(start_request(name, self._manager.server(name)))
        if decision == "deny":
            return ToolResult.error(f"the user did not approve starting {name!r}; not started.")
        return ToolResult(await self._manager.release(name, _READY_WAIT))
