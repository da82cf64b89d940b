"""A settings file replaced atomically (`common/atomic_write.py`); a failure is a `ConfigError`."""

from __future__ import annotations

from pathlib import Path

from countbot.common.atomic_write import replace_bytes
from countbot.config.errors import ConfigError


def replace_file(target: Path, text: str, mode: int, what: str) -> None:
    """Write `text` to `target` as `replace_bytes` does; a failure is a `ConfigError`."""
    try:
        replace_bytes(target, text.encode("utf-8"), mode)
    except OSError as err:
        raise ConfigError(f"Cannot write the {what} {target}: {err}") from None
