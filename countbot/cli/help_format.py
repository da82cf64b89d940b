"""Command lists in `--help` that show each command's whole first sentence.

click cuts a command's summary to the space left beside its name ("Talk to the assistant: one
message with -m, else an..."); these classes hand click no limit, so its formatter wraps the
sentence onto the next lines instead of cutting it.
"""

from __future__ import annotations

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
