"""Replacing a file atomically: readers see the old file or the new one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def replace_bytes(target: Path, data: bytes, mode: int = 0o600) -> None:
    """Write `data` to a temporary file beside `target` with `mode`, then rename it over;
    on an `OSError` the temporary file is removed and the error raised.

    The mode is set before any byte is written, so a key never sits in a readable file.
    """
    temp: str | None = None
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    except OSError:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise
