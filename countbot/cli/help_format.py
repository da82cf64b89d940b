"""Command lists in `--help` that show each command's whole first sentence.

click cuts a command's summary to the space left beside its name ("Talk to the assistant: one
message with -m, else an..."); these classes hand click no limit, so its formatter wraps the
sentence onto the next lines instead of cutting it.
"""

from __future__ import annotations

from collections.abc import Callable

import click

_NO_LIMIT = 10_000


class WholeHelpCommand(click.Command):
    """A command whose summary in its group's list is never cut."""

    def get_short_help_str(self, limit: int = 45) -> str:
        return super().get_short_help_str(limit=_NO_LIMIT)


class WholeHelpGroup(click.Group):
    """A group whose commands and subgroups list their summaries whole."""

    command_class = WholeHelpCommand
    group_class = type  # subgroups made with @group.group() are WholeHelpGroups too

    def get_short_help_str(self, limit: int = 45) -> str:
        return super().get_short_help_str(limit=_NO_LIMIT)


class CommandsGroup(WholeHelpGroup):
    """The `countbot` group: its subgroups, each made by a function of `lazy` that imports it,
    are imported only when one is run (or `--help` lists them), so a command never loads the
    others' code."""

    group_class = WholeHelpGroup  # the groups defined beside it (`pairing`) load at once

    def __init__(
        self, *args: object, lazy: dict[str, Callable[[], click.Command]], **kwargs: object
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        load = self._lazy.get(cmd_name)
        return super().get_command(ctx, cmd_name) if load is None else load()
