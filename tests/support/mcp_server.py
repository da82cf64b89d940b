"""An MCP server written with the SDK's server API, run by the tests over stdio or HTTP.

`python -m tests.support.mcp_server stdio` serves over stdin/stdout;
`python -m tests.support.mcp_server http PORT_FILE` serves streamable HTTP on a free loopback port
and writes the port to PORT_FILE. Tools cover what a CountBot MCP client must handle: text,
images, errors, a slow call, a crash, and a tool list that changes.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, TextContent

# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

server = MCPServer("countbot-test")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back, with the server's process id."""
    return f"echo: {text} (pid {os.getpid()})"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A tiny picture and a caption."""
    image = Image(data=PIXEL, format="png").to_image_content()
    return [TextContent(type="text", text="a red pixel"), image]


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(reason)


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


@server.tool()
def crash() -> str:
    """Kill the server process."""
    os._exit(3)


@server.tool()
def env(name: str) -> str:
    """The value of an environment variable, or <unset>."""
    return os.environ.get(name, "<unset>")


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named `extra` and tell the client the tool list changed."""
    if "extra" not in {tool.name for tool in await server.list_tools()}:
        server.add_tool(_extra, name="extra", description="Added at run time.")
    await ctx.notify_tools_changed()
    return "grown"


@server.tool()
async def grow_legacy(ctx: Context) -> str:
    """Like `grow`, announced as a `tools/list_changed` notification (the pre-2026 way)."""
    if "extra" not in {tool.name for tool in await server.list_tools()}:
        server.add_tool(_extra, name="extra", description="Added at run time.")
    await ctx.request_context.session.send_tool_list_changed()
    return "grown"


def _extra() -> str:
    return "extra!"


def main() -> None:
    if sys.argv[1] == "stdio":
        server.run("stdio")
        return
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    with open(sys.argv[2] + ".tmp", "w") as out:
        out.write(str(sock.getsockname()[1]))
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])
    app = server.streamable_http_app()
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
