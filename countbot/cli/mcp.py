"""`countbot mcp import|list|test`: MCP servers from the command line.

`list` asks the running daemon (the live state); without one, and for `test`, the servers are
started here for a moment, in the same sandbox the daemon would use, and stopped again.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from countbot.cli.common import config_option, fail, run_async, settings_or_exit
from countbot.cli.daemon_client import CONNECT_TIMEOUT, auth_headers
from countbot.cli.help_format import WholeHelpGroup
from countbot.config.errors import ConfigError
from countbot.config.settings import Settings

WAIT_OPTION = click.option(
    "--wait", default=30.0, show_default=True, help="seconds each server gets to connect"
)


@click.group(cls=WholeHelpGroup)
def mcp() -> None:
    """MCP servers: import them from another app, list and test them."""


@mcp.command("import")
@config_option
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="write without asking")
def import_servers(config_path: str | None, file: Path, yes: bool) -> None:
    """Add the servers of an `mcpServers` JSON file (Claude Desktop, Cursor) to config.yaml."""
    from countbot.mcp.json_import import servers_from_json, write_servers

    settings = settings_or_exit(config_path, require_model=False)
    target = settings.config_path
    assert target is not None
    try:
        servers, notes = servers_from_json(file.read_text(encoding="utf-8"))
    except (ConfigError, OSError, UnicodeDecodeError) as exc:
        fail(f"cannot import {file}: {exc}", 2)
    for name, entry in servers.items():
        replaced = " (replaces the one configured)" if name in settings.mcp.servers else ""
        click.echo(f"  {name}: {_target(entry)}{replaced}")
        if entry.get("env"):
            click.echo(f"      env: {', '.join(entry['env'])}")
    for note in notes:
        click.echo(f"  ! {note}")
    if not servers:
        fail("nothing to import", 1)
    if not yes and not click.confirm(f"Write {len(servers)} server(s) to {target}?"):
        fail("nothing written", 1)
    try:
        write_servers(target, servers)
    except (ConfigError, ValueError) as exc:
        fail(f"nothing written: {exc}", 2)
    click.echo(f"Written to {target}. Restart the daemon (`countbot run`) to connect to them.")


@mcp.command("list")
@config_option
@WAIT_OPTION
def mcp_list(config_path: str | None, wait: float) -> None:
    """Each server's state, tools and last error."""
    settings = settings_or_exit(config_path, require_model=False)
    if not settings.mcp.servers:
        click.echo("No MCP servers configured (mcp.servers in config.yaml; `countbot mcp import`).")
        return
    rows = run_async(lambda: _daemon_status(settings))
    if rows is None:
        enabled = [name for name, server in settings.mcp.servers.items() if server.enabled]
        rows = run_async(lambda: _probe(settings, enabled, wait))
        rows += [_disabled(name) for name in settings.mcp.servers if name not in enabled]
    for row in rows:
        _show(row)


@mcp.command("test")
@config_option
@click.argument("name")
@WAIT_OPTION
def mcp_test(config_path: str | None, name: str, wait: float) -> None:
    """Start one server, list its tools, stop it; exit status 1 if it does not connect."""
    settings = settings_or_exit(config_path, require_model=False)
    if name not in settings.mcp.servers:
        known = ", ".join(settings.mcp.servers) or "none"
        fail(f"no MCP server {name!r} in the config (configured: {known})", 2)
    [row] = run_async(lambda: _probe(settings, [name], wait))
    _show(row)
    sys.exit(0 if row["state"] == "ready" else 1)


async def _probe(settings: Settings, names: list[str], wait: float) -> list[dict[str, Any]]:
    from countbot.runtime.assembly import probe_mcp_servers

    return await probe_mcp_servers(settings, names, wait)


async def _daemon_status(settings: Settings) -> list[dict[str, Any]] | None:
    """The running daemon's view, or None when no daemon runs on this data folder."""
    import httpx

    from countbot.web.instance import read_daemon_info

    info = await asyncio.to_thread(read_daemon_info, settings.data_dir)
    if info is None:
        return None
    try:
        async with httpx.AsyncClient(trust_env=False, timeout=CONNECT_TIMEOUT) as client:
            answer = await client.get(f"{info.local_url()}/api/mcp", headers=auth_headers(settings))
            answer.raise_for_status()
    except httpx.HTTPError:
        return None
    servers: list[dict[str, Any]] = answer.json()["servers"]
    return servers


def _disabled(name: str) -> dict[str, Any]:
    return {"name": name, "state": "disabled", "tools": [], "skipped": {}, "last_error": ""}


def _target(entry: dict[str, Any]) -> str:
    if entry.get("url"):
        return f"http {entry['url']}"
    return " ".join(["stdio", entry["command"], *entry.get("args", [])])


def _show(row: dict[str, Any]) -> None:
    mark = {"ready": "✓", "disabled": "-"}.get(row["state"], "✗")
    click.echo(f"{mark} {row['name']}: {row['state']}, {len(row['tools'])} tools")
    if row["tools"]:
        click.echo(f"    tools: {', '.join(row['tools'])}")
    for tool, why in row.get("skipped", {}).items():
        click.echo(f"    skipped {tool}: {why}")
    if row.get("last_error"):
        click.echo(f"    last error: {row['last_error']}")
