"""`countbot import --from openclaw|hermes|nanobot PATH`: another assistant's files, brought in."""

from __future__ import annotations

from pathlib import Path

import click

from countbot.cli.common import config_option, fail, run_async, store_settings
from countbot.cli.help_format import WholeHelpCommand

SOURCES = ("openclaw", "hermes", "nanobot")


@click.command("import", cls=WholeHelpCommand)
@config_option
@click.option("--from", "source", type=click.Choice(SOURCES), required=True, help="the assistant")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="say what would be taken, change nothing")
def import_command(config_path: str | None, source: str, path: Path, dry_run: bool) -> None:
    """Bring another assistant's persona, memory, skills and jobs (e.g. ~/.openclaw) in."""
    from countbot.importer.apply import apply_import
    from countbot.importer.layouts import READERS

    settings = store_settings(config_path)
    found = READERS[source](path)
    if not (found.texts or found.notes or found.skills or found.jobs):
        fail(f"{path} holds nothing {found.source} keeps (persona, memory, skills or jobs)", 1)
    report = run_async(lambda: apply_import(found, settings, dry_run=dry_run))
    verb = "Would take" if dry_run else "Took"
    click.echo(f"{verb} from {found.source} ({path}):")
    for line in report.took or ["nothing"]:
        click.echo(f"  {line}")
    if report.left:
        click.echo("Left:")
        for line in report.left:
            click.echo(f"  {line}")
