"""The `countbot` command: chat, onboard, doctor (and `run`, the daemon)."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from countbot.cli.common import (
    config_option,
    create_instance_config,
    exit_now,
    exit_promptly,
    first_start,
    one_turn_settings,
    run_async,
    settings_or_exit,
    store_settings,
)
from countbot.cli.groups import GROUPS
from countbot.cli.help_format import CommandsGroup
from countbot.config.loader import HOST_ENV_VAR, PORT_ENV_VAR
from countbot.config.settings import MAIN, Settings
from countbot.speedups.compiled_methods import reused_methods

if TYPE_CHECKING:
    from countbot.cli.chat import Talk

DEFAULT_SESSION = "cli:default"


@click.group(cls=CommandsGroup, lazy=GROUPS)
@click.version_option(package_name="countbot")
def main() -> None:
    """CountBot: your own AI assistant, running on your own machine."""


@main.command()
@config_option
@click.option("-m", "--message", default=None, help="send one message, print the answer, exit")
@click.option(
    "--session",
    "session_id",
    default=DEFAULT_SESSION,
    show_default=True,
    help="session key to talk in (another agent's default: <agent>@cli:default)",
)
@click.option("--agent", default=None, help="the agent to talk to (`agents:`); default: main")
def chat(config_path: str | None, message: str | None, session_id: str, agent: str | None) -> None:
    """Talk to the assistant: one message with -m, else an interactive prompt."""
    if message is not None:
        # Through a running daemon no secret is needed; only a local turn must have them all.
        settings, local = one_turn_settings(config_path)
        talk = _talk(settings, agent, session_id)
        # Every one-shot starts cold: the methods of its dataclasses are compiled once, in the
        # data folder's cache (beside the memory model's files).
        with reused_methods(settings.data_dir / "cache"):
            from countbot.cli.chat import run_once

            _log_warnings(settings)
            status = run_async(lambda: run_once(settings, message, talk, local))
        exit_now(status)
    from countbot.cli.chat import run_interactive

    settings = settings_or_exit(config_path)
    talk = _talk(settings, agent, session_id)
    _log_warnings(settings)
    run_async(lambda: run_interactive(settings, talk))


def _talk(settings: Settings, agent: str | None, session_id: str) -> Talk:
    """Whom `chat` talks to in which session; a usage error for an agent that cannot answer."""
    from countbot.cli.chat import Talk
    from countbot.config.agent_view import unavailable

    why = unavailable(settings.agents, agent or MAIN)
    if why:
        raise click.BadParameter(why, param_hint="--agent")
    if agent not in (None, MAIN) and session_id == DEFAULT_SESSION:
        session_id = f"{agent}@{DEFAULT_SESSION}"
    return Talk(session_id, agent)


def _log_warnings(settings: Settings) -> None:
    """Warnings and errors go to stderr, secrets masked; a chat's output is its answer."""
    from countbot.common.logs import configure_logging
    from countbot.runtime.assembly import secret_masker

    configure_logging(secret_masker(settings), logging.WARNING)


@main.command()
@click.option(
    "--dir",
    "target",
    type=click.Path(file_okay=False),
    default=None,
    help="folder for config.yaml and the workspace (default: $COUNTBOT_HOME or ~/.countbot)",
)
@click.option("--model", default="", help="litellm model string, e.g. openai/gpt-4o-mini")
@click.option("--api-base", default="", help="OpenAI-compatible base URL (optional)")
@click.option(
    "--api-key-env",
    default="",
    metavar="NAME",
    help="read the model's API key from this environment variable (writes ${NAME})",
)
@click.option("--force", is_flag=True, help="overwrite an existing config.yaml")
def onboard(target: str | None, model: str, api_base: str, api_key_env: str, force: bool) -> None:
    """Write a starter config.yaml and workspace."""
    from countbot.cli.onboard import write_starter
    from countbot.config.instance import instance_home

    folder = Path(target) if target is not None else instance_home()
    try:
        lines = write_starter(
            folder, model=model, api_base=api_base, api_key_env=api_key_env, force=force
        )
        for line in lines:
            click.echo(line)
    except (FileExistsError, ValueError) as exc:
        click.echo(f"countbot: {exc}", err=True)
        sys.exit(2)


@main.command()
@config_option
def usage(config_path: str | None) -> None:
    """Print today's token use and cost against each budget limit."""
    from countbot.cli.usage import print_usage

    settings = settings_or_exit(config_path, require_model=False)
    run_async(lambda: print_usage(settings))


@main.command()
@config_option
@click.option(
    "--security",
    is_flag=True,
    help="review the security posture instead (exit 1 when something is dangerous)",
)
def doctor(config_path: str | None, security: bool) -> None:
    """Check the config, the workspace, the data folder, and that the model answers."""
    settings = settings_or_exit(config_path, require_model=False)
    if security:
        from countbot.cli.security import print_review, review, sandbox_view

        sys.exit(print_review(settings, review(settings, sandbox_view(settings))))
    from countbot.cli.doctor import run_checks

    sys.exit(run_async(lambda: run_checks(settings)))


@main.command()
@config_option
@click.option(
    "--host",
    envvar=HOST_ENV_VAR,
    default=None,
    help=f"address to listen on instead of web.host (or ${HOST_ENV_VAR})",
)
@click.option(
    "--port",
    envvar=PORT_ENV_VAR,
    type=click.IntRange(0, 65535),
    default=None,
    help=f"port to listen on instead of web.port (or ${PORT_ENV_VAR})",
)
def run(config_path: str | None, host: str | None, port: int | None) -> None:
    """Start the daemon: web UI, API and WebSocket on web.host:web.port."""
    from countbot.web.daemon import run_daemon

    # Through the environment, so every load of the settings in this process (the config
    # watcher's too) listens where told.
    for name, value in ((HOST_ENV_VAR, host), (PORT_ENV_VAR, port)):
        if value is not None:
            os.environ[name] = str(value)
    with first_start(config_path) as listening:
        create_instance_config(config_path)
        settings = settings_or_exit(config_path, require_model=False)
        status = run_daemon(settings, listening)
    exit_promptly()
    sys.exit(status)


@main.group()
def pairing() -> None:
    """Approve chat users who asked to talk to your assistant."""


@pairing.command("approve")
@config_option
@click.argument("channel")
@click.argument("code")
def pairing_approve(config_path: str | None, channel: str, code: str) -> None:
    """Let the sender who was given CODE on CHANNEL (e.g. telegram) talk to the assistant."""
    from countbot.cli.pairing import approve_code

    status, line = run_async(lambda: approve_code(store_settings(config_path), channel, code))
    click.echo(line, err=status != 0)
    sys.exit(status)


@pairing.command("list")
@config_option
def pairing_list(config_path: str | None) -> None:
    """Show pairing codes waiting for approval and the senders already paired."""
    from countbot.cli.pairing import listing

    for line in run_async(lambda: listing(store_settings(config_path))):
        click.echo(line)
