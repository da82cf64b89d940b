"""Linux inotify through ctypes: the names in one folder that changed, read on the event loop.

The kernel wakes the loop (`add_reader` on the inotify descriptor) only when something in the
folder changes, so ten watched folders cost nothing while nothing happens; no thread, no polling.
Elsewhere (or when the kernel refuses a watch) `open_watch` returns None and the folder is
polled instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import struct
from collections.abc import Callable
from pathlib import Path

# inotify(7): a file written and closed, created, moved in or out, changed, deleted; the folder
# itself deleted or moved.
_EVENTS = 0x8 | 0x100 | 0x80 | 0x40 | 0x2 | 0x200 | 0x400 | 0x800
_HEADER = struct.Struct("iIII")


class FolderWatch:
    """Calls `changed(name)` for each name the kernel reports changed in `folder`."""

    def __init__(self, fd: int, changed: Callable[[str], None]) -> None:
        self._fd = fd
        self._changed = changed
        asyncio.get_running_loop().add_reader(fd, self._read)

    def _read(self) -> None:
        try:
            data = os.read(self._fd, 64 * 1024)
        except BlockingIOError:
            return
        offset = 0
        while offset + _HEADER.size <= len(data):
            _, _, _, length = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
            offset += _HEADER.size + length
            name = raw.rstrip(b"\0").decode(errors="surrogateescape")
            if name:
                self._changed(name)

    def close(self) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is already closed
            asyncio.get_running_loop().remove_reader(self._fd)
        os.close(self._fd)


def open_watch(folder: Path, changed: Callable[[str], None]) -> FolderWatch | None:
    """A kernel watch on `folder`, or None where there is none to be had."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init, add = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError):
        return None
    fd = init(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        return None
    if add(fd, os.fsencode(folder), _EVENTS) < 0:
        os.close(fd)
        return None
    return FolderWatch(fd, changed)
