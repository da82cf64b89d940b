"""`countbot backup create|verify|restore`: archives of the instance, made while it runs."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import click

from countbot.cli.common import config_option, fail, run_async, store_settings
from countbot.cli.help_format import WholeHelpGroup


@click.group(cls=WholeHelpGroup)
def backup() -> None:
    """Back up the instance (store, memory, workspace, config) and restore it elsewhere."""


@backup.command("create")
@config_option
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.option("--with-secrets", is_flag=True, help="keep keys and tokens in the archive too")
@click.option(
    "--low-priority", is_flag=True, help="yield the processor to everything else (scheduled runs)"
)
def create(
    config_path: str | None, file: str | None, with_secrets: bool, low_priority: bool
) -> None:
    """Write one archive of the instance (the daemon may keep running)."""
    if low_priority:
        os.nice(10)  # the daemon's turns go first on a busy machine
    from countbot.backup.create import create_backup
    from countbot.backup.names import default_name
    from countbot.backup.source import Instance

    settings = store_settings(config_path)
    target = Path(file) if file else Path(default_name())
    try:
        manifest = create_backup(Instance.of(settings), target, include_secrets=with_secrets)
    except OSError as exc:
        fail(f"the backup could not be written to {target}: {exc.strerror or exc}", 1)
    except sqlite3.Error as exc:  # a store that cannot be read (damaged, locked for minutes)
        fail(f"the store could not be copied: {exc}; nothing was written to {target}", 1)
    click.echo(f"Backup written: {target} ({len(manifest.files)} files).")
    if manifest.secrets_left_out:
        keys = ", ".join(manifest.secrets_left_out)
        click.echo(f"Secrets left out (type them again after a restore): {keys}.")
    for note in manifest.notes:
        click.echo(f"Note: {note}.")


@backup.command("verify")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def backup_verify(file: str) -> None:
    """Check an archive: safe paths, every file matching its manifest."""
    from countbot.backup.reading import BackupError, verify_backup

    try:
        manifest = verify_backup(Path(file))
    except BackupError as exc:
        fail(_refusal(file, exc.problems), 1)
    click.echo(
        f"{file}: OK, {len(manifest.files)} files as the manifest says "
        f"(made {manifest.created_at} by CountBot {manifest.countbot})."
    )


@backup.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--to", "folder", required=True, type=click.Path(file_okay=False), help="new instance folder"
)
def restore(file: str, folder: str) -> None:
    """Make a working instance in a new folder from an archive."""
    from countbot.backup.reading import BackupError
    from countbot.backup.restore import restore_backup
    from countbot.store.database import NewerSchemaError

    try:
        done = run_async(lambda: restore_backup(Path(file), Path(folder)))
    except BackupError as exc:
        fail(_refusal(file, exc.problems), 1)
    except NewerSchemaError as exc:  # made by a newer CountBot: nothing was restored
        fail(f"{file} is refused: {exc}", 1)
    except OSError as exc:
        fail(f"nothing was restored into {folder}: {exc.strerror or exc}", 1)
    click.echo(f"Restored into {Path(folder).absolute()}: countbot run --config {done.config}")
    if done.settled.get("outbox"):
        click.echo(f"{done.settled['outbox']} unsent messages settled as restored, not sent.")
    if done.manifest.secrets_left_out:
        keys = ", ".join(done.manifest.secrets_left_out)
        click.echo(f"Keys to type again on the settings page: {keys}.")
    for model in done.manifest.local_models:
        name = model.get("catalogue")
        again = f"countbot models pull {name}" if name else f"copy {model['file']} back by hand"
        click.echo(f"Local model {model['file']} was not archived: {again}.")


def _refusal(file: str, problems: list[str]) -> str:
    shown = "\n  ".join(problems[:20])
    more = f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
    return f"{file} is refused:\n  {shown}{more}"
