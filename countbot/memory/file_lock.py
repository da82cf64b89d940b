"""An exclusive OS-level lock on a sibling lock file, so separate processes never interleave.

The lock lives on its own file rather than the data file because the data file is replaced
atomically (`os.replace`), and a lock held on a replaced inode protects nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows has no flock: only the in-process asyncio lock serializes writers.
    fcntl = None  # type: ignore[assignment]


@contextmanager
def exclusive_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive `flock` on `lock_path` (created if missing); blocks until granted."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        # Closing the descriptor releases the flock.
        os.close(fd)
