"""The command groups `countbot --help` lists, each imported only when it runs (a `chat -m`
loads none of them): a function a group that imports its module."""

from __future__ import annotations

from collections.abc import Callable

import click


def _cron() -> click.Command:
    from countbot.cli.cron import cron

    return cron


def _subagents() -> click.Command:
    from countbot.cli.subagents import subagents

    return subagents


def _mcp() -> click.Command:
    from countbot.cli.mcp import mcp

    return mcp


def _skills() -> click.Command:
    from countbot.cli.skills import skills

    return skills


def _models() -> click.Command:
    from countbot.cli.models import models

    return models


def _memory() -> click.Command:
    from countbot.cli.memory import memory

    return memory


def _backup() -> click.Command:
    from countbot.cli.backup import backup

    return backup


def _import_() -> click.Command:
    from countbot.cli.import_from import import_command

    return import_command


GROUPS: dict[str, Callable[[], click.Command]] = {
    "cron": _cron,
    "subagents": _subagents,
    "mcp": _mcp,
    "skills": _skills,
    "models": _models,
    "memory": _memory,
    "backup": _backup,
    "import": _import_,
}
