"""Open a path beneath a directory descriptor, so no symlink or `..` can lead out of it.

The check and the open are one step: the kernel (Linux `openat2` with `RESOLVE_BENEATH`) or our
own walk (one component at a time, each opened `O_NOFOLLOW` relative to the descriptor of the one
before) resolves the path against a descriptor we hold. Swapping a component for a symlink
between a check and a use cannot help an attacker, because there is no separate check to race.

Symlinks that stay inside are followed, like a shell would. An absolute symlink is followed only
when its target lies under the root's own path (the kernel refuses every absolute link, so those
paths take our walk). Leaving the root raises `OSError(EXDEV)`.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import os
import platform
import stat
import sys
from collections import deque
from pathlib import Path

# The generic syscall table gives openat2 the same number on x86_64 and aarch64.
_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437, "arm64": 437}.get(platform.machine())
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_MAX_LINKS = 40  # Linux's own limit on symlinks in one resolution
_O_PATH = getattr(os, "O_PATH", 0)
_DIR_FLAGS = (_O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _escape(path: str) -> OSError:
    return OSError(errno.EXDEV, "leads outside the workspace", path)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _openat2(dir_fd: int, path: str, flags: int) -> int:
    """The raw `openat2` call; raises OSError like `os.open` does."""
    how = _OpenHow(flags | os.O_CLOEXEC, 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    fd = _libc().syscall(
        ctypes.c_long(_SYS_OPENAT2),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return fd


@functools.cache
def openat2_available() -> bool:
    """Whether this kernel has `openat2` and lets us call it (probed once per process)."""
    if not sys.platform.startswith("linux") or _SYS_OPENAT2 is None:
        return False
    try:
        root = os.open("/", _DIR_FLAGS)
    except OSError:
        return False
    try:
        os.close(_openat2(root, ".", _DIR_FLAGS))
    except OSError:  # ENOSYS on kernels before 5.6, EPERM under some seccomp filters
        return False
    finally:
        os.close(root)
    return True


def open_beneath(
    root_fd: int, root: Path, rel: str, flags: int, *, kernel: bool | None = None
) -> int:
    """An fd for `rel` (relative to the directory `root_fd`, whose real path is `root`).

    `flags` are `os.open` flags without `O_CREAT`. `kernel=None` uses `openat2` when the kernel
    has it; False forces our own walk (what older kernels and other systems get).
    """
    if os.path.isabs(rel):
        raise _escape(rel)
    use_kernel = openat2_available() if kernel is None else kernel
    if use_kernel:
        try:
            return _openat2(root_fd, rel or ".", flags)
        except OSError as exc:
            # The kernel refuses absolute symlinks even when they point inside: let our walk
            # decide those (and give the one answer for real escapes).
            if exc.errno != errno.EXDEV:
                raise
    return _walk(root_fd, root, rel, flags)


def _walk(root_fd: int, root: Path, rel: str, flags: int) -> int:
    """Resolve `rel` one component at a time, each opened without following symlinks."""
    parts = deque(_split(rel))
    stack = [os.dup(root_fd)]
    links = 0
    try:
        while parts:
            name = parts.popleft()
            if name == "..":
                if len(stack) == 1:
                    raise _escape(rel)
                os.close(stack.pop())
                continue
            last = not parts
            target = _readlink(stack[-1], name)
            if target is not None:
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), rel)
                if os.path.isabs(target):
                    inside = _under(root, target)
                    if inside is None:
                        raise _escape(rel)
                    while len(stack) > 1:
                        os.close(stack.pop())
                    target = inside
                parts.extendleft(reversed(_split(target)))
                continue
            fd = os.open(name, (flags if last else _DIR_FLAGS) | os.O_NOFOLLOW, dir_fd=stack[-1])
            if last:
                return fd
            stack.append(fd)
        # An empty path or one that ends in `..`: the directory we stand in.
        return os.open(".", flags, dir_fd=stack[-1])
    finally:
        for fd in stack:
            os.close(fd)


def _readlink(dir_fd: int, name: str) -> str | None:
    """The target if `name` in `dir_fd` is a symlink now, else None (missing entries too)."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISLNK(info.st_mode):
        return None
    with contextlib.suppress(OSError):  # replaced since the stat: the O_NOFOLLOW open decides
        return os.readlink(name, dir_fd=dir_fd)
    return None


def _split(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _under(root: Path, target: str) -> str | None:
    """`target` relative to `root` when it lies under it (lexically), else None."""
    normal = Path(os.path.normpath(target))
    if normal == root:
        return "."
    return str(normal.relative_to(root)) if root in normal.parents else None


def real_path(fd: int, fallback: Path) -> Path:
    """Where the object behind `fd` lives now, for the credential check and for display."""
    with contextlib.suppress(OSError):
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    getpath = getattr(fcntl, "F_GETPATH", None)  # macOS has no /proc
    if getpath is not None:
        with contextlib.suppress(OSError):
            raw = fcntl.fcntl(fd, getpath, b"\0" * 1024)
            return Path(os.fsdecode(raw.rstrip(b"\0")))
    return fallback
