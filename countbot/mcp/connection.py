"""One configured MCP server, kept connected: start, list tools, watch, restart with backoff.

A supervisor task owns the SDK `Client` (its task group lives there); tool calls from turns use
the connected client and report a dropped connection back, so the supervisor restarts the server
while its tools answer "server unavailable". Changes to the tool list arrive as a
`subscriptions/listen` event (2026-07-28 servers) or a `tools/list_changed` notification (older
ones); older servers are also pinged, which is how an idle one is found dead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, Any, Literal, Protocol

import anyio
import httpx2
import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from countbot.config.settings import McpServerSettings

log = logging.getLogger(__name__)

# "awaiting approval": a stdio server with no sandbox to run in, held until the user says yes.
ServerState = Literal["awaiting approval", "connecting", "ready", "restarting", "stopped"]
# Long enough for `npx`/`uvx` to download a server on first start.
_CONNECT_TIMEOUT = 120.0
_PING_INTERVAL = 15.0
_PING_TIMEOUT = 10.0
_STDERR_TAIL = 2000
# Network failures of a call mean the server is gone, not that the tool failed.
_LOST = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError)


class ServerUnavailable(Exception):
    """The server is not connected; its tools answer with this until it is back."""


class Launcher(Protocol):
    """Wraps a stdio server's argv and environment (the sandbox's `server_command`)."""

    def __call__(
        self, argv: Sequence[str], env: dict[str, str]
    ) -> Awaitable[tuple[list[str], dict[str, str]]]: ...


ToolsChanged = Callable[["McpConnection"], None]


class McpConnection:
    """A server's connection, state, tools and last error; `start()` it, `stop()` it."""

    def __init__(
        self,
        name: str,
        settings: McpServerSettings,
        *,
        workspace: Path,
        log_dir: Path,
        on_tools: ToolsChanged,
        launcher: Launcher | None = None,
        backoff: tuple[float, float] = (0.5, 60.0),
        protocol: str = "auto",
    ) -> None:
        self.name = name
        self.settings = settings
        self.state: ServerState = "connecting"
        self.tools: tuple[mcp_types.Tool, ...] = ()
        self.last_error = ""
        self.restarts = 0
        self._workspace = workspace
        self._log_file = log_dir / f"{name}.stderr.log"
        self._on_tools = on_tools
        self._launcher = launcher
        self._backoff = backoff
        # "auto" negotiates; "legacy" forces the pre-2026 handshake (as older servers speak it).
        self._protocol = protocol
        self._client: Client | None = None
        self._lost = asyncio.Event()
        self._changed = asyncio.Event()
        self._ready = asyncio.Event()
        # Set when an attempt to connect ended (ready or failed): what a probe waits for.
        self._tried = asyncio.Event()
        self._connected = False
        self._task: asyncio.Task[None] | None = None

    @property
    def transport(self) -> str:
        return "stdio" if self.settings.command else "http"

    def start(self) -> None:
        """Connect in the background; nothing waits for it."""
        self.state = "connecting"
        self._task = asyncio.create_task(self._supervise(), name=f"mcp:{self.name}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.state = "stopped"

    async def wait_ready(self, within: float) -> bool:
        """True once connected (for tests), False after `within` seconds."""
        try:
            await asyncio.wait_for(self._ready.wait(), within)
        except TimeoutError:
            return False
        return True

    async def wait_tried(self, within: float) -> bool:
        """True once connected, False as soon as the first attempt failed (or after `within`
        seconds): `mcp test` reports a server that cannot start at once, not after its wait."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._tried.wait(), within)
        return self._ready.is_set()

    async def call(
        self, tool: str, args: dict[str, Any], read_timeout: float
    ) -> mcp_types.CallToolResult:
        """Call a tool; raises ServerUnavailable when the server is not (or no longer) there."""
        client = self._client
        if client is None or self.state != "ready":
            raise ServerUnavailable(self.unavailable())
        try:
            return await client.call_tool(tool, args, read_timeout_seconds=read_timeout)
        except MCPError as exc:
            if exc.error.code != mcp_types.CONNECTION_CLOSED:
                raise
        except _LOST:
            pass
        self._mark_lost(client, "the server went away during a call")
        raise ServerUnavailable(f"MCP server {self.name!r} went away during the call")

    def _mark_lost(self, client: Client, why: str) -> None:
        """Tools answer "unavailable" from now on; the supervisor restarts the server."""
        if self._client is client:
            self._client = None
            self._ready.clear()
            self.state = "restarting"
            self.last_error = why
        self._lost.set()

    def unavailable(self) -> str:
        why = f" ({self.last_error})" if self.last_error else ""
        return f"MCP server {self.name!r} is unavailable: {self.state}{why}"

    # --- the supervisor -------------------------------------------------------------------

    async def _supervise(self) -> None:
        first, most = self._backoff
        delay = first
        while True:
            try:
                await self._session()
                error = "the server closed the connection"
            except asyncio.CancelledError:
                self._client = None
                raise
            except Exception as exc:  # a server's failure must not end the supervisor
                error = await self._describe(exc)
            self._tried.set()
            if self._connected:
                delay = first  # it worked: restart quickly
            self._connected = False
            self._client = None
            self._ready.clear()
            self.state = "restarting"
            self.last_error = error
            self.restarts += 1
            log.warning("MCP server %s: %s; retrying in %.1f s", self.name, error, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, most)

    async def _session(self) -> None:
        async with AsyncExitStack() as stack:
            transport = await self._transport(stack)
            client = Client(
                transport,
                message_handler=self._on_message,
                mode=self._protocol,
                client_info=mcp_types.Implementation(name="countbot", version="1"),
            )
            # asyncio's timeout, not anyio's: the client's task group outlives this block.
            async with asyncio.timeout(_CONNECT_TIMEOUT):
                await stack.enter_async_context(client)
                await self._refresh(client)
            self._lost.clear()
            self._client = client
            self._connected = True
            self.state = "ready"
            self.last_error = ""
            self._ready.set()
            self._tried.set()
            log.info("MCP server %s: ready, %d tools", self.name, len(self.tools))
            await self._watch(client)

    async def _transport(self, stack: AsyncExitStack) -> Any:
        settings = self.settings
        if settings.url is not None:
            headers = {k: v.get_secret_value() for k, v in settings.headers.items()}
            timeout = httpx2.Timeout(30.0, read=300.0)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=timeout)
            )
            return streamable_http_client(settings.url, http_client=http)
        assert settings.command is not None
        argv = [settings.command, *settings.args]
        env = {k: v.get_secret_value() for k, v in settings.env.items()}
        if self._launcher is not None:
            argv, env = await self._launcher(argv, env)
        errlog = await asyncio.to_thread(self._open_log)
        stack.callback(errlog.close)
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=self._workspace)
        return stdio_client(params, errlog=errlog)

    def _open_log(self) -> IO[str]:
        self._log_file.parent.mkdir(parents=True, exist_ok=True)
        return self._log_file.open("w", encoding="utf-8")

    async def _refresh(self, client: Client) -> None:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools += page.tools
            cursor = page.next_cursor
            if cursor is None:
                break
        allowed = self.settings.tools
        self.tools = tuple(t for t in tools if allowed is None or t.name in allowed)
        self._on_tools(self)

    async def _watch(self, client: Client) -> None:
        """Returns when the connection is lost; refreshes the tools when they change."""
        lost = asyncio.create_task(self._lost.wait())
        watcher = asyncio.create_task(
            self._listen(client)
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS
            else self._ping(client)
        )
        try:
            await asyncio.wait({lost, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (lost, watcher):
                task.cancel()
            await asyncio.gather(lost, watcher, return_exceptions=True)
        if watcher.done() and not watcher.cancelled() and watcher.exception() is not None:
            raise watcher.exception()  # type: ignore[misc]

    async def _listen(self, client: Client) -> None:
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _event in events:
                    await self._refresh(client)
        except MCPError as exc:
            if exc.error.code == mcp_types.CONNECTION_CLOSED:
                raise
            # The server does not offer change events: only a failed call finds it gone.
            log.info("MCP server %s: no change events (%s)", self.name, exc)
            await asyncio.Event().wait()

    async def _ping(self, client: Client) -> None:
        while True:
            try:
                await asyncio.wait_for(self._changed.wait(), _PING_INTERVAL)
                self._changed.clear()
                await self._refresh(client)
            except TimeoutError:
                with anyio.fail_after(_PING_TIMEOUT):
                    await client.session.send_ping()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._changed.set()

    async def _describe(self, exc: BaseException) -> str:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        text = str(exc) or type(exc).__name__
        if isinstance(exc, TimeoutError):
            text = f"no answer within {_CONNECT_TIMEOUT:g} s"
        if self.settings.command:
            tail = await asyncio.to_thread(self._stderr_tail)
            if tail:
                text += f"; stderr: {tail}"
            text += self._private_tmp_hint()
        return text

    def _private_tmp_hint(self) -> str:
        """Why a file under /tmp is missing: a sandboxed server gets a /tmp of its own."""
        if self._launcher is None:
            return ""
        named = [self.settings.command or "", *self.settings.args]
        in_tmp = [part for part in named if part == "/tmp" or part.startswith("/tmp/")]
        if not in_tmp:
            return ""
        return (
            f" (the sandbox gives each server a private /tmp, so {in_tmp[0]} is not there for"
            " it: put the server in the workspace or another folder)"
        )

    def _stderr_tail(self) -> str:
        try:
            text = self._log_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        lines = [line.strip() for line in text[-_STDERR_TAIL:].splitlines() if line.strip()]
        return lines[-1] if lines else ""
