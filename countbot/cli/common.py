"""What every `countbot` command shares: the --config option, loading settings, running async."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from countbot.config.instance import (
    CONFIG_NAME,
    EXAMPLE_CONFIG,
    create_from_example,
    default_config,
)
from countbot.config.loader import ConfigError, config_path_from, load_settings
from countbot.config.settings import Settings
from countbot.runtime.preflight import check_settings

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="config file (default: $COUNTBOT_CONFIG, else $COUNTBOT_HOME or ~/.countbot/config.yaml)",
)


def settings_or_exit(
    config_path: str | None, *, require_model: bool = True, need_secrets: bool = True
) -> Settings:
    """Load and check settings, or exit 2 with the problem (one clear paragraph).

    `need_secrets=False` for commands that never use the daemon's secrets (they talk to the
    running daemon or the store), so an unset `${TELEGRAM_BOT_TOKEN}` does not stop them. With no
    model configured, the built-in local model counts as one when it can run here.
    """
    path = config_path_from(config_path)
    try:
        settings = load_settings(path, require_model=require_model, need_secrets=need_secrets)
        check_settings(settings)
    except ConfigError as exc:
        if require_model:
            from countbot.local_model.models import embedded_default

            try:
                settings = load_settings(path, require_model=False, need_secrets=need_secrets)
                check_settings(settings)
            except ConfigError:
                fail(str(exc), 2)
            if embedded_default(settings.model, settings.data_dir):
                return settings
        fail(str(exc), 2)
    return settings


def one_turn_settings(config_path: str | None) -> tuple[Settings, Callable[[], Settings]]:
    """`chat -m`'s settings and how a local turn gets complete ones, the file read once when it
    can be: complete settings (every secret, a model) serve the daemon's client and a local turn
    alike. When they cannot be had, the settings without secrets (a running daemon needs none)
    and, for a local turn, `settings_or_exit`, which says what is missing or finds the built-in
    model."""
    try:
        settings = load_settings(config_path_from(config_path), require_model=True)
        check_settings(settings)
    except ConfigError:
        lenient = settings_or_exit(config_path, require_model=False, need_secrets=False)
        return lenient, lambda: settings_or_exit(config_path)
    return settings, lambda: settings


def create_instance_config(config_path: str | None) -> None:
    """On the daemon's first start without a named config, make the instance's own config.yaml
    from the shipped example (the settings page saves there, never into the checkout)."""
    path = config_path_from(config_path)
    if path != default_config():
        return
    try:
        created = create_from_example(path)
    except ConfigError as exc:
        fail(str(exc), 2)
    if created:
        click.echo(f"countbot: created {path}, your own settings (from the example)", err=True)
    here = Path(CONFIG_NAME).absolute()
    if here.is_file() and here.resolve() != EXAMPLE_CONFIG.resolve():
        # Earlier versions read ./config.yaml by default: say where the settings come from now.
        click.echo(
            f"countbot: using {path}; {here} is not read unless named "
            f"(countbot run --config {here}, or COUNTBOT_CONFIG)",
            err=True,
        )


@contextlib.contextmanager
def first_start(config_path: str | None) -> Iterator[Callable[[], None]]:
    """Around a daemon's start: when the instance folder did not exist before, and the start
    fails before the daemon listens (a busy port, a bad `--port`), the folder it began is
    removed, so the next try starts as new. Yields what to call once it listens."""
    folder = config_path_from(config_path).parent
    fresh = not os.path.lexists(folder)
    served = False

    def listening() -> None:
        nonlocal served
        served = True

    try:
        yield listening
    finally:
        if fresh and not served and os.path.isdir(folder):
            shutil.rmtree(folder, ignore_errors=True)
            click.echo(f"countbot: the start failed, so {folder} was not kept", err=True)


def store_settings(config_path: str | None) -> Settings:
    """Settings for a command that works on the store only: no model, no secrets needed."""
    return settings_or_exit(config_path, require_model=False, need_secrets=False)


def run_async(main: Callable[[], Any]) -> Any:
    """`asyncio.run(main())`; Ctrl-C exits 130 without a traceback."""
    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)
    finally:
        exit_promptly()


def exit_promptly() -> None:
    """Call once the command's work is done and closed: the interpreter's final garbage
    collection then skips the objects alive now. Sweeping the whole heap of a process that is
    about to end took 0.2-0.8 s of every exit (measured with the daemon's modules loaded)."""
    gc.freeze()


def exit_now(status: int) -> NoReturn:
    """End a one-shot command whose work is stored and closed (its runtime closed its database,
    audit log, threads and children) without the interpreter's teardown of every module (a share of
    `chat -m`'s time: docs/cold_start.md); the log handlers, stdout and stderr are flushed first."""
    try:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # stdout closed early (`| head`): Python would exit 120 then too
        status = 120
    os._exit(status)


def echo_lines(lines: Sequence[str], empty: str) -> None:
    """Print each of `lines`, or `empty` when there are none (a listing with nothing in it)."""
    for line in lines or [empty]:
        click.echo(line)


def switch_commands(
    group: click.Group,
    argument: str,
    switch: Callable[[str | None, str, bool], None],
    *,
    on: str,
    off: str,
) -> None:
    """`enable ARGUMENT` and `disable ARGUMENT` on `group`, each calling `switch(config_path,
    value, enabled)`; `on` and `off` are their help texts."""
    for name, enabled, help_text in (("enable", True, on), ("disable", False, off)):
        _switch_command(group, name, argument, switch, enabled, help_text)


def _switch_command(
    group: click.Group,
    name: str,
    argument: str,
    switch: Callable[[str | None, str, bool], None],
    enabled: bool,
    help_text: str,
) -> None:
    @group.command(name, help=help_text)
    @config_option
    @click.argument(argument)
    def command(config_path: str | None, **values: str) -> None:
        switch(config_path, values[argument], enabled)


def fail(message: str, status: int) -> NoReturn:
    click.echo(f"countbot: {message}", err=True)
    sys.exit(status)
