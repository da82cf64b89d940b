"""Path confinement for the file and shell tools.

The check and the use are one step: every path is opened relative to a descriptor of the
workspace with no symlink able to lead out (`tools/beneath.py`), and the tools work on the
descriptor they got. What is opened is then checked once more by where it really is, so a
credential file is refused even behind a symlink. A regular file with several hard links is
refused while confinement is on: its other names may lie outside the workspace, and reading or
editing it would reach them. Credentials stay unreadable even when confinement is switched off.
All of this does blocking system calls: run it in the worker thread of the file operation.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from countbot.tools.beneath import open_beneath, real_path

# File names that hold credentials, wherever they are.
_SENSITIVE_NAMES = (
    ".env*",
    "*.pem",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".git-credentials",
)
# Directories whose whole content is key material.
_SENSITIVE_DIRS = frozenset({".ssh", ".gnupg"})
_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)
_DIR = _O_PATH | os.O_DIRECTORY
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY  # a FIFO must not block the open


class PathRefused(Exception):
    """A path the tools may not touch; the message tells the model what to do instead."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkspaceGuard:
    """Opens the paths the model gives inside the workspace, or refuses them.

    `kernel` chooses how paths are resolved beneath the workspace: None probes for `openat2`,
    False forces the portable walk (tests drive both).
    """

    def __init__(
        self,
        workspace: Path,
        *,
        restrict: bool = True,
        sensitive_paths: Iterable[Path] = (),
        kernel: bool | None = None,
    ) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.restrict = restrict
        self._sensitive = frozenset(Path(os.path.realpath(p)) for p in sensitive_paths)
        self._kernel = kernel

    @contextlib.contextmanager
    def open(self, user_path: str, flags: int) -> Iterator[tuple[int, Path]]:
        """An fd for `user_path` (closed on exit) and the real path of what it opened."""
        where = self._locate(user_path)
        fd = self._open(where, flags, user_path)
        try:
            real = real_path(fd, self.workspace / where)
            self._check_real(user_path, real)
            yield fd, real
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def open_regular(self, user_path: str) -> Iterator[tuple[BinaryIO, Path]]:
        """An existing regular file open for reading (never a device, a FIFO or a hard-linked
        file) and its real path."""
        with self.open(user_path, _READ) as (fd, real):
            self.check_regular(user_path, os.fstat(fd))
            with os.fdopen(os.dup(fd), "rb") as handle:
                yield handle, real

    def check_regular(self, user_path: str, info: os.stat_result) -> None:
        """Refuse what the file tools must not read or edit: non-files and hard-linked files."""
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(user_path)
        if not stat.S_ISREG(info.st_mode):
            raise PathRefused(f"{user_path!r} is not a regular file")
        if self.restrict and info.st_nlink > 1:
            raise PathRefused(
                f"{user_path!r} has {info.st_nlink} hard links; another name of the same file "
                "may be outside the workspace, so the file tools do not read or edit it "
                "(write_file may replace it with a new file)"
            )

    @contextlib.contextmanager
    def parent(self, user_path: str) -> Iterator[tuple[int, str, Path]]:
        """The folder a write to `user_path` goes into (created if missing), and the name in it.

        A name that is a symlink to a file inside is written through (its target is replaced).
        """
        where = self._locate(user_path)
        with contextlib.suppress(FileNotFoundError), self.open(user_path, _O_PATH) as (fd, real):
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                raise IsADirectoryError(user_path)
            if real != self.workspace / where:
                where = str(real.relative_to(self.workspace)) if self.restrict else str(real)
        folder, name = os.path.split(where)
        if name in ("", ".", ".."):
            raise IsADirectoryError(user_path)
        fd = self._make_folders(folder, user_path)
        try:
            real = real_path(fd, self.workspace / folder) / name
            self._check_real(user_path, real)
            yield fd, name, real
        finally:
            os.close(fd)

    def resolve(self, user_path: str) -> Path:
        """The real path `user_path` names now (for tools that hand a path on, like exec's cwd).

        A path that does not exist yet resolves through its deepest existing folder.
        """
        where, missing = self._locate(user_path), []
        while True:
            try:
                fd = self._open(where, _O_PATH, user_path)
                break
            except FileNotFoundError:
                where, name = os.path.split(where)
                if not name:
                    raise
                missing.insert(0, name)
        try:
            real = real_path(fd, self.workspace / where).joinpath(*missing)
        finally:
            os.close(fd)
        self._check_real(user_path, real)
        return real

    def contains(self, path: Path) -> bool:
        return path == self.workspace or self.workspace in path.parents

    def display(self, path: Path) -> str:
        """How to show a resolved path to the model: relative when inside the workspace."""
        return str(path.relative_to(self.workspace)) if self.contains(path) else str(path)

    def link_note(self, folder: Path, name: str) -> tuple[bool, str]:
        """For list_dir: whether the symlink `folder/name` leads to a folder, and what is wrong."""
        where = os.path.join(str(folder.relative_to(self.workspace)), name)
        if not self.restrict:
            where = str(folder / name)
        try:
            fd = self._open(where, _O_PATH, name)
        except PathRefused:
            return False, "leads outside the workspace"
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return False, "broken: a symlink loop"
            if exc.errno == errno.ENOENT:
                return False, "broken: its target does not exist"
            return False, f"broken: {exc.strerror or exc}"
        try:
            return stat.S_ISDIR(os.fstat(fd).st_mode), ""
        finally:
            os.close(fd)

    def _locate(self, user_path: str) -> str:
        """`user_path` relative to the workspace (absolute when unrestricted), checked lexically."""
        if "\0" in user_path:
            raise PathRefused("the path contains a NUL character")
        if user_path.startswith("~"):
            if self.restrict:
                raise PathRefused(
                    f"{user_path!r}: home-directory paths are outside the workspace; "
                    "use a path relative to the workspace"
                )
            user_path = os.path.expanduser(user_path)
        lexical = Path(os.path.normpath(self.workspace / (user_path or ".")))
        if self.restrict and not self.contains(lexical):
            raise self._outside(user_path)
        if self._is_sensitive(lexical):
            raise PathRefused(f"{user_path!r} holds credentials and is never accessible")
        return str(lexical.relative_to(self.workspace)) if self.restrict else str(lexical)

    def _open(self, where: str, flags: int, user_path: str) -> int:
        if not self.restrict:
            return os.open(where, flags | os.O_CLOEXEC)
        root = os.open(self.workspace, _DIR | os.O_CLOEXEC)
        try:
            return open_beneath(root, self.workspace, where, flags, kernel=self._kernel)
        except OSError as exc:
            if exc.errno == errno.EXDEV:
                raise self._outside(user_path) from None
            raise
        finally:
            os.close(root)

    def _make_folders(self, folder: str, user_path: str) -> int:
        """An fd of `folder`, creating each missing part inside the one opened before it."""
        try:
            return self._open(folder or ".", _DIR, user_path)
        except FileNotFoundError:
            head, name = os.path.split(folder)
            if not name or name == "..":
                raise
        parent = self._make_folders(head, user_path)
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=parent)
        finally:
            os.close(parent)
        # Opened again from the workspace: whatever `name` is now, it cannot lead out.
        return self._open(folder, _DIR, user_path)

    def _check_real(self, user_path: str, real: Path) -> None:
        if self.restrict and not self.contains(real):
            raise self._outside(user_path)
        if self._is_sensitive(real):
            raise PathRefused(f"{user_path!r} holds credentials and is never accessible")

    def _outside(self, user_path: str) -> PathRefused:
        return PathRefused(
            f"{user_path!r} is outside the workspace ({self.workspace}); "
            "use a path inside it, e.g. a relative path"
        )

    def _is_sensitive(self, path: Path) -> bool:
        if path in self._sensitive or _SENSITIVE_DIRS.intersection(path.parts):
            return True
        name = path.name.lower()  # case-insensitive file systems (macOS) open `.ENV` as `.env`
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in _SENSITIVE_NAMES)
