"""An exclusive OS-level lock on a data file's folder, so separate processes never interleave.

The lock is not on the data file itself because that file is replaced atomically (`os.replace`),
and a lock held on a replaced inode protects nothing. It is on the folder (`flock` works on a
directory's descriptor) rather than on a sibling lock file, which would sit in the workspace
beside MEMORY.md and be listed to the model and the user as one of their files.
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
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive `flock` on `folder` (which must exist); blocks until granted."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        # Closing the descriptor releases the flock.
        os.close(fd)
