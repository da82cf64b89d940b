"""Replacing a configuration file atomically: readers see the old file or the new one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from countbot.config.errors import ConfigError


def replace_file(target: Path, text: str, mode: int, what: str) -> None:
    """Write `text` to a temporary file beside `target` with `mode`, then rename it over.

    The mode is set before any byte is written, so a key never sits in a readable file.
    """
    temp: str | None = None
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), mode)
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    except OSError as err:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise ConfigError(f"Cannot write the {what} {target}: {err}") from None
