"""Screenshots and downloads, put into the workspace where the user and the file tools find them.

Names are the page's suggestion, cleaned to a plain file name; an existing file is never
replaced (a number is added). Files are created beneath the workspace's descriptor by the
workspace guard, so a symlink the model made cannot send them elsewhere.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from countbot.tools.workspace_guard import WorkspaceGuard

_UNSAFE = re.compile(r"[^\w.\- ()\[\]]+")
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def clean_name(suggested: str, fallback: str) -> str:
    """A file name without folders, control characters or a leading dot."""
    name = _UNSAFE.sub("_", os.path.basename(suggested.replace("\\", "/"))).strip(" ._")
    return (name or fallback)[:120]


def save_bytes(guard: WorkspaceGuard, folder: str, name: str, data: bytes) -> str:
    """Write `data` as a new file in `folder` of the workspace; returns its workspace path."""
    return _create(guard, folder, name, lambda handle: handle.write(data))


def move_in(guard: WorkspaceGuard, folder: str, name: str, source: Path) -> str:
    """Copy the file at `source` (outside the workspace) in as a new file, then remove it."""
    with open(source, "rb") as data:
        where = _create(guard, folder, name, lambda handle: shutil.copyfileobj(data, handle))
    source.unlink(missing_ok=True)
    return where


def _create(
    guard: WorkspaceGuard, folder: str, name: str, write: Callable[[BinaryIO], object]
) -> str:
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    for attempt in range(1000):
        candidate = name if attempt == 0 else f"{stem} ({attempt}){dot}{suffix}"
        path = f"{folder}/{candidate}"
        with guard.parent(path) as (folder_fd, entry, _):
            try:
                fd = os.open(entry, _FLAGS, 0o644, dir_fd=folder_fd)
            except FileExistsError:
                continue
            with os.fdopen(fd, "wb") as handle:
                write(handle)
            return path
    raise FileExistsError(f"{folder}/{name}")
