"""What every `countbot` command shares: the --config option, loading settings, running async."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from countbot.config.loader import ConfigError, config_path_from, load_settings
from countbot.config.settings import Settings
from countbot.runtime.preflight import check_settings

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="config file (default: $COUNTBOT_CONFIG, else ./config.yaml)",
)


def settings_or_exit(config_path: str | None, *, require_model: bool = True) -> Settings:
    """Load and check settings, or exit 2 with the problem (one clear paragraph)."""
    try:
        settings = load_settings(config_path_from(config_path), require_model=require_model)
        check_settings(settings)
    except ConfigError as exc:
        fail(str(exc), 2)
    return settings


def run_async(main: Callable[[], Any]) -> Any:
    """`asyncio.run(main())`; Ctrl-C exits 130 without a traceback."""
    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)


def fail(message: str, status: int) -> NoReturn:
    click.echo(f"countbot: {message}", err=True)
    sys.exit(status)
