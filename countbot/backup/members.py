"""What may sit in a backup archive, and where each part lands in a restored instance.

The archive's top-level folders name the instance's parts; a restored instance puts them where
a fresh instance keeps them (`config.yaml` and `secrets.yaml` in its folder, the store in
`data/`, the workspace in `data/workspace`), so it works wherever it is restored.
"""

from __future__ import annotations

import posixpath
import tarfile
from pathlib import PurePosixPath

MANIFEST = "manifest.json"
# Archive folder -> folder of the restored instance, relative to the instance folder.
PLACES: dict[str, str] = {
    "config": "",
    "data": "data",
    "workspace": "data/workspace",
    "skills": "skills",
    "personas": "personas",
}


def destination(name: str) -> PurePosixPath:
    """Where the member `name` (already checked) lands, relative to the restored instance."""
    root, _, rest = name.partition("/")
    return PurePosixPath(PLACES[root], rest) if PLACES[root] else PurePosixPath(rest)


def member_problem(info: tarfile.TarInfo) -> str | None:
    """Why `info` must not be restored (an escape, a link out, a device), or None."""
    name = info.name
    if name.startswith("/") or PurePosixPath(name).is_absolute():
        return f"{name!r} is an absolute path"
    parts = name.split("/")
    if ".." in parts:
        return f"{name!r} climbs out of the archive (..)"
    if "" in parts or "." in parts or "\\" in name:
        return f"{name!r} is not a plain relative path"
    if name == MANIFEST:
        return None if info.isfile() else f"{name!r} is not a file"
    if parts[0] not in PLACES or (len(parts) == 1 and not info.isdir()):
        return f"{name!r} is no part of an instance"
    if info.issym():
        return _link_problem(name, info.linkname)
    if info.islnk():
        return f"{name!r} is a hard link"
    if not (info.isfile() or info.isdir()):
        return f"{name!r} is a device, pipe or other special file"
    return None


def _link_problem(name: str, target: str) -> str | None:
    """A symbolic link may only point within its own part (workspace links to workspace files)."""
    if not target or target.startswith("/"):
        return f"{name!r} links to an absolute path"
    root = name.split("/", 1)[0]
    landed = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if landed == root or landed.startswith(f"{root}/"):
        return None
    return f"{name!r} links out of the archive ({target})"
