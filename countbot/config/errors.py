"""The one error the configuration layer raises, phrased for the person editing the file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class ConfigError(Exception):
    """A configuration the daemon cannot run with; `str(error)` is ready to print as is.

    `problems` holds each finding on its own (without the file name) so a settings page can show
    them next to its fields.
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.problems = list(problems) or [message]

    @classmethod
    def listing(cls, source: Path, problems: Sequence[str]) -> ConfigError:
        """One message that reports every problem found in `source` at once."""
        if len(problems) == 1:
            return cls(f"Invalid configuration in {source}: {problems[0]}", problems)
        lines = "\n".join(f"  - {problem}" for problem in problems)
        header = f"Invalid configuration in {source} ({len(problems)} problems):"
        return cls(f"{header}\n{lines}", problems)
