"""MCP servers from the browser: each one's state, tools and last error; add, test, switch on or
off, and remove one.

A change is written to config.yaml (a server's env values go to secrets.yaml, as every secret
does) and followed at once by the running daemon: an added server starts, a removed or switched
off one stops and its tools leave the assistant. "Test" starts a server on its own, lists its
tools and stops it, before or after it is added.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.config.loader import ConfigError, load_settings, save_settings_patch
from countbot.config.problems import explained
from countbot.config.settings import McpServerSettings, McpSettings
from countbot.config.structs import Invalid, replaced, validate
from countbot.web.api.errors import ApiError, daemon_of, json_object
from countbot.web.context import DaemonContext
from countbot.web.live_settings import apply_settings

# What a test waits for a server to connect; one that fails says so as soon as it did.
TEST_WAIT = 30.0
_FIELDS = ("command", "args", "env", "url", "headers", "enabled", "tools", "approval", "timeout")


async def list_servers(request: Request) -> JSONResponse:
    return JSONResponse({"servers": daemon_of(request).runtime.mcp_status()})


async def add_server(request: Request) -> JSONResponse:
    """Add a server (`name` and its definition, as in config.yaml's mcp.servers)."""
    daemon = daemon_of(request)
    body = await json_object(request)
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise ApiError(400, "'name' (how its tools are named: <name>__<tool>) is required")
    if name in daemon.runtime.settings.mcp.servers:
        raise ApiError(409, f"an MCP server named {name!r} exists already")
    definition = _definition(body)
    _check(name, definition)
    await _save(daemon, {"mcp": {"servers": {name: definition}}})
    return JSONResponse({"servers": daemon.runtime.mcp_status()}, status_code=201)


async def change_server(request: Request) -> JSONResponse:
    """Switch a server on or off (`{"enabled": bool}`)."""
    daemon = daemon_of(request)
    name = _known(daemon, request.path_params["name"])
    enabled = (await json_object(request)).get("enabled")
    if not isinstance(enabled, bool):
        raise ApiError(400, "'enabled' must be true or false")
    await _save(daemon, {"mcp": {"servers": {name: {"enabled": enabled}}}})
    return JSONResponse({"servers": daemon.runtime.mcp_status()})


async def remove_server(request: Request) -> JSONResponse:
    daemon = daemon_of(request)
    name = _known(daemon, request.path_params["name"])
    await _save(daemon, {}, removed=[("mcp", "servers", name)])
    return JSONResponse({"servers": daemon.runtime.mcp_status()})


async def test_server(request: Request) -> JSONResponse:
    """Start one server on its own, list its tools, stop it: a configured one by `name`, or a
    definition not added yet."""
    from countbot.runtime.assembly import probe_mcp_servers

    daemon = daemon_of(request)
    body = await json_object(request)
    settings = daemon.runtime.settings
    name = body.get("name") if isinstance(body.get("name"), str) and body["name"] else "test"
    if set(body) <= {"name"}:
        server = settings.mcp.servers.get(name)
        if server is None:
            raise ApiError(404, f"no MCP server named {name!r}")
    else:
        server = _check(name, _definition(body))
    probe = McpSettings(servers={name: server})
    [row] = await probe_mcp_servers(replaced(settings, mcp=probe), [name], TEST_WAIT)
    return JSONResponse(row)


def _definition(body: dict[str, Any]) -> dict[str, Any]:
    """A server's fields from the request, as config.yaml spells them; empty ones left out."""
    return {key: body[key] for key in _FIELDS if key in body and body[key] not in (None, "", [])}


def _check(name: str, definition: dict[str, Any]) -> McpServerSettings:
    """The server as the config loader would read it; a 400 with the loader's words if not."""
    try:
        validate(McpSettings, {"servers": {name: definition}}, strict=True, loc=("mcp",))
        return validate(McpServerSettings, definition, strict=True, loc=("mcp", "servers", name))
    except Invalid as exc:
        raise ApiError(400, "; ".join(explained(exc))) from None


def _known(daemon: DaemonContext, name: str) -> str:
    if name not in daemon.runtime.settings.mcp.servers:
        raise ApiError(404, f"no MCP server named {name!r}")
    return name


async def _save(daemon: DaemonContext, patch: dict[str, Any], **options: Any) -> None:
    """Write the change to the config and apply it to the running daemon at once."""
    path = daemon.runtime.settings.config_path
    if path is None:
        raise ApiError(409, "the daemon was started without a config file to save to")
    try:
        await asyncio.to_thread(save_settings_patch, path, patch, **options)
        fresh = await asyncio.to_thread(load_settings, path)
    except ConfigError as exc:
        raise ApiError(400, "; ".join(exc.problems)) from None
    await apply_settings(daemon, fresh)


routes = [
    Route("/mcp", list_servers, methods=["GET"]),
    Route("/mcp/servers", add_server, methods=["POST"]),
    Route("/mcp/servers/{name}", change_server, methods=["PATCH"]),
    Route("/mcp/servers/{name}", remove_server, methods=["DELETE"]),
    Route("/mcp/test", test_server, methods=["POST"]),
]
