"""`countbot skills list|install|remove|enable|disable`: skills from the command line.

`install` shows what a bundle holds (SKILL.md, scripts, the binaries and env vars it wants, its
install hints) and asks before copying it into the workspace; it never runs anything.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from countbot.cli.common import config_option, fail, run_async, settings_or_exit, switch_commands
from countbot.cli.help_format import WholeHelpGroup
from countbot.config.errors import ConfigError
from countbot.config.settings import Settings
from countbot.skills.catalog import SkillCatalog
from countbot.skills.installer import BundleError, open_bundle
from countbot.skills.installer import install as install_bundle
from countbot.skills.installer import remove as remove_skill
from countbot.skills.skill import Skill


@click.group(cls=WholeHelpGroup)
def skills() -> None:
    """Skills: list, install from a folder or archive, remove, switch on and off."""


@skills.command("list")
@config_option
def skills_list(config_path: str | None) -> None:
    """Every skill, whether it is on and available, and what it still needs."""
    catalog = _catalog(settings_or_exit(config_path, require_model=False))
    if not catalog.skills:
        click.echo("No skills.")
    for skill in catalog.skills:
        state = "on" if skill.enabled else "off"
        ready = "available" if skill.available else f"unavailable: {skill.unavailable_reason}"
        click.echo(f"{skill.name} ({skill.source}, {state}, {ready})")
        if skill.description:
            click.echo(f"    {skill.description}")
        if not skill.available and skill.install_hints:
            click.echo(f"    to install: {'; '.join(skill.install_hints)}")


@skills.command("install")
@config_option
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--yes", is_flag=True, help="install without asking (for scripts)")
@click.option("--replace", is_flag=True, help="replace an installed skill of the same name")
def skills_install(config_path: str | None, source: Path, yes: bool, replace: bool) -> None:
    """Copy a skill (folder, .zip or .skill) into the workspace after showing what it holds."""
    settings = settings_or_exit(config_path, require_model=False)
    with tempfile.TemporaryDirectory() as scratch:
        try:
            bundle = open_bundle(source, Path(scratch))
        except (BundleError, OSError, UnicodeDecodeError) as exc:
            fail(f"cannot install {source}: {exc}", 2)
        _review(bundle.skill, bundle.files, bundle.scripts)
        if not yes and not click.confirm("Install this skill into the workspace?"):
            fail("nothing installed", 1)
        try:
            target = install_bundle(bundle, settings.workspace / "skills", replace=replace)
        except (BundleError, OSError) as exc:
            fail(f"nothing installed: {exc}", 2)
    click.echo(f"Installed {bundle.skill.name} in {target}.")


@skills.command("remove")
@config_option
@click.argument("name")
@click.option("--yes", is_flag=True, help="remove without asking")
def skills_remove(config_path: str | None, name: str, yes: bool) -> None:
    """Delete a skill from the workspace (built-in skills can only be disabled)."""
    settings = settings_or_exit(config_path, require_model=False)
    if not yes and not click.confirm(f"Delete the workspace skill {name!r}?"):
        fail("nothing removed", 1)
    try:
        target = remove_skill(settings.workspace / "skills", name)
    except (BundleError, OSError) as exc:
        fail(str(exc), 2)
    click.echo(f"Removed {target}.")


def _switch(config_path: str | None, name: str, enabled: bool) -> None:
    from countbot.config.skill_switches import save_skill_switch

    settings = settings_or_exit(config_path, require_model=False)
    if _catalog(settings).get(name) is None:
        fail(f"no skill {name!r}; see `countbot skills list`", 2)
    try:
        save_skill_switch(settings, name, enabled)
    except ConfigError as exc:
        fail(str(exc), 2)
    click.echo(f"{name} is {'on' if enabled else 'off'} (restart a running daemon to apply).")


switch_commands(
    skills,
    "name",
    _switch,
    on="Switch a skill on (removes it from skills.disabled).",
    off="Switch a skill off (adds it to skills.disabled in config.yaml).",
)


def _catalog(settings: Settings) -> SkillCatalog:
    from countbot.runtime.assembly import skills_loader

    return run_async(lambda: skills_loader(settings).catalog())


def _review(skill: Skill, files: tuple[str, ...], scripts: tuple[str, ...]) -> None:
    click.echo(f"Skill {skill.name}: {skill.description or '(no description)'}")
    click.echo(f"  files: {', '.join(files)}")
    if scripts:
        click.echo(f"  scripts (the assistant may run them in the sandbox): {', '.join(scripts)}")
    wants = [
        *(f"binary {name}" for name in skill.requires_bins),
        *([f"one of {', '.join(skill.requires_any_bins)}"] if skill.requires_any_bins else []),
        *(f"env var {name} (passed to its commands)" for name in skill.requires_env),
        *(f"config {key}" for key in skill.requires_config),
        *([f"os {' or '.join(skill.os)}"] if skill.os else []),
    ]
    if wants:
        click.echo(f"  wants: {'; '.join(wants)}")
    if skill.install_hints:
        click.echo(f"  install hints (not run): {'; '.join(skill.install_hints)}")
    if skill.always:
        click.echo("  always on: its text goes into every system prompt")
    click.echo("  --- SKILL.md ---")
    click.echo("  " + skill.body.strip().replace("\n", "\n  "))
