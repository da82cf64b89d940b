"""`countbot subagents list|cancel`: asks the running daemon, which is where subagents run.

The HTTP client is imported when a command runs, so `countbot` itself starts fast.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any
from urllib.parse import quote

import click

from countbot.cli.common import config_option, echo_lines, fail, run_async, settings_or_exit
from countbot.cli.help_format import WholeHelpGroup
from countbot.config.settings import Settings

TIMEOUT = 10.0


@click.group(cls=WholeHelpGroup)
def subagents() -> None:
    """Background subagents of the running daemon."""


@subagents.command("list")
@config_option
@click.option("--session", help="only the subagents this session spawned")
@click.option("--active", is_flag=True, help="only queued and running ones")
def list_subagents(config_path: str | None, session: str | None, active: bool) -> None:
    """List subagents, newest first."""
    settings = settings_or_exit(config_path, require_model=False)
    params = {"active": "1"} if active else {}
    if session:
        params["session"] = session
    response = run_async(lambda: _ask(settings, "GET", "/api/subagents", params))
    if response.status_code != 200:
        fail(f"the daemon answered {response.status_code}: {_error(response)}", 1)
    found = response.json()["subagents"]
    echo_lines([_line(item) for item in found], "No subagents.")


@subagents.command("cancel")
@config_option
@click.argument("subagent_id")
def cancel(config_path: str | None, subagent_id: str) -> None:
    """Stop a queued or running subagent; its report still reaches its chat."""
    settings = settings_or_exit(config_path, require_model=False)
    path = f"/api/subagents/{quote(subagent_id, safe='')}/cancel"
    response = run_async(lambda: _ask(settings, "POST", path, {}))
    if response.status_code != 202:
        fail(_error(response) or f"the daemon answered {response.status_code}", 1)
    click.echo(f"Cancelled subagent {subagent_id}.")


async def _ask(settings: Settings, method: str, path: str, params: dict[str, str]) -> Any:
    import httpx

    from countbot.cli.daemon_client import auth_headers
    from countbot.web.instance import read_daemon_info

    info = await asyncio.to_thread(read_daemon_info, settings.data_dir)
    if info is None:
        fail("no daemon is running for this data folder (start it with `countbot run`)", 1)
    async with httpx.AsyncClient(trust_env=False, timeout=TIMEOUT) as client:
        try:
            return await client.request(
                method, f"{info.local_url()}{path}", params=params, headers=auth_headers(settings)
            )
        except httpx.TransportError as exc:
            fail(f"the daemon does not answer: {exc}", 1)


def _error(response: Any) -> str:
    from countbot.cli.daemon_client import error_text

    return error_text(response)


def _line(item: dict[str, Any]) -> str:
    when = datetime.fromtimestamp(item["created_at"]).strftime("%Y-%m-%d %H:%M")
    return (
        f"{item['id']}  {item['status']:<11}  {when}  {item['label']}"
        f"  (from {item['parent_session']})"
    )
