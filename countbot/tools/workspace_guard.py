"""Path confinement for the file and shell tools.

Paths are resolved fully (`os.path.realpath`, following every symlink) before they are checked,
so neither `..` nor a symlink inside the workspace can lead outside it. Credentials stay
unreadable even when confinement is switched off. Resolution does a few stat calls: run it in the
same worker thread as the file operation it guards.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path

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


class PathRefused(Exception):
    """A path the tools may not touch; the message tells the model what to do instead."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkspaceGuard:
    """Turns a path the model gave into a real path the tools may use, or refuses it."""

    def __init__(
        self, workspace: Path, *, restrict: bool = True, sensitive_paths: Iterable[Path] = ()
    ) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.restrict = restrict
        self._sensitive = frozenset(Path(os.path.realpath(p)) for p in sensitive_paths)

    def resolve(self, user_path: str) -> Path:
        """The real path for `user_path` (relative paths are relative to the workspace)."""
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
        real = Path(os.path.realpath(lexical))
        if self.restrict and not self.contains(real):
            raise PathRefused(
                f"{user_path!r} is outside the workspace ({self.workspace}); "
                "use a path inside it, e.g. a relative path"
            )
        for candidate in (lexical, real):
            if self._is_sensitive(candidate):
                raise PathRefused(f"{user_path!r} holds credentials and is never accessible")
        return real

    def contains(self, path: Path) -> bool:
        return path == self.workspace or self.workspace in path.parents

    def display(self, path: Path) -> str:
        """How to show a resolved path to the model: relative when inside the workspace."""
        return str(path.relative_to(self.workspace)) if self.contains(path) else str(path)

    def _is_sensitive(self, path: Path) -> bool:
        if path in self._sensitive or _SENSITIVE_DIRS.intersection(path.parts):
            return True
        name = path.name.lower()  # case-insensitive file systems (macOS) open `.ENV` as `.env`
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in _SENSITIVE_NAMES)
