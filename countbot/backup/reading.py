"""Reading an archive back: `verify` checks it, `restore` unpacks it into a new instance folder.

One pass over the archive does both: every member's path is checked before anything is
written, every file is hashed as it is read, and the manifest (the last member) must name
exactly the files and links read, with the same hashes. A restore writes into a hidden folder
beside its target and renames it into place only when all of that holds, so a refused archive
leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from countbot.backup.manifest import Hasher, Manifest
from countbot.backup.members import MANIFEST, destination, member_problem

_CHUNK = 1 << 20
# A manifest is a few kB per thousand files; anything past this is not one.
_MANIFEST_LIMIT = 64 << 20


class BackupError(Exception):
    """The archive cannot be trusted or restored; `problems` says why, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(slots=True)
class _Read:
    """What one pass over the archive found."""

    files: dict[str, dict[str, object]] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)
    manifest: Manifest | None = None
    problems: list[str] = field(default_factory=list)


def verify_backup(archive: Path) -> Manifest:
    """The archive's manifest once every check holds; BackupError otherwise."""
    return _read(archive, None)


def unpack_backup(archive: Path, into: Path) -> Manifest:
    """Unpack a checked archive into the new folder `into` (made here; removed again if the
    archive is refused). The files land where a fresh instance keeps them (`members.PLACES`)."""
    into.mkdir(mode=0o700)
    try:
        return _read(archive, into)
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise


def _read(archive: Path, into: Path | None) -> Manifest:
    found = _Read()
    try:
        with tarfile.open(archive, "r|gz") as tar:
            for info in tar:
                if problem := _take(tar, info, found, into):
                    raise BackupError([problem])
    except (tarfile.TarError, EOFError, OSError) as exc:  # truncated, not gzip, unreadable
        raise BackupError([f"the archive cannot be read: {exc}"]) from None
    problems = _against_manifest(found)
    if problems:
        raise BackupError(problems)
    assert found.manifest is not None
    if into is not None:
        _make_links(found, into)
    return found.manifest


def _take(
    tar: tarfile.TarFile, info: tarfile.TarInfo, found: _Read, into: Path | None
) -> str | None:
    """Check one member and read it (into `into`); the reason to refuse the archive, or None."""
    if found.manifest is not None:
        return f"{info.name!r} comes after the manifest"
    if problem := member_problem(info):
        return problem
    name = info.name
    if name in found.files or name in found.links or name in found.folders:
        return f"{name!r} appears twice"
    if any(parent in found.links for parent in _parents(name)):
        return f"{name!r} lies under a link"
    if info.issym():
        found.links[name] = info.linkname
    elif info.isdir():
        found.folders.add(name)
        if into is not None:
            (into / destination(name)).mkdir(mode=0o755, parents=True, exist_ok=True)
    elif name == MANIFEST:
        return _take_manifest(tar, info, found)
    else:
        source = tar.extractfile(info)
        assert source is not None
        found.files[name] = _copy(source, into / destination(name) if into else None, info.mode)
    return None


def _take_manifest(tar: tarfile.TarFile, info: tarfile.TarInfo, found: _Read) -> str | None:
    if info.size > _MANIFEST_LIMIT:
        return "the manifest is too large to be one"
    source = tar.extractfile(info)
    assert source is not None
    try:
        found.manifest = Manifest.from_json(source.read())
    except ValueError as exc:
        return str(exc)
    return None


def _copy(source: BinaryIO, target: Path | None, mode: int) -> dict[str, object]:
    """Hash the member's bytes, writing them to a new file at `target` when given."""
    hasher = Hasher()
    with contextlib.ExitStack() as stack:
        out = None
        if target is not None:
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            out = stack.enter_context(open(os.open(target, flags, mode & 0o755 | 0o600), "wb"))
        while chunk := source.read(_CHUNK):
            hasher.update(chunk)
            if out is not None:
                out.write(chunk)
    return hasher.entry()


def _against_manifest(found: _Read) -> list[str]:
    manifest = found.manifest
    if manifest is None:
        return ["the archive has no manifest (cut short, or not a CountBot backup)"]
    problems = [
        f"{name!r} does not match the manifest"
        for name, entry in found.files.items()
        if manifest.files.get(name) != entry
    ]
    problems += [
        f"{name!r} is in the manifest but not in the archive"
        for name in manifest.files.keys() - found.files.keys()
    ]
    problems += [
        f"{name!r} is not a link the manifest names"
        for name in found.links
        if manifest.links.get(name) != found.links[name]
    ]
    problems += [
        f"the link {name!r} is missing" for name in manifest.links.keys() - found.links.keys()
    ]
    problems += [_link_problem(name, target, found) for name, target in found.links.items()]
    return [problem for problem in problems if problem]


def _link_problem(name: str, target: str, found: _Read) -> str:
    """A link may not stand where a folder is, nor reach its target through another link (the
    check of `members` reads the target's path as written, which only holds without links)."""
    prefix = f"{name}/"
    if name in found.folders or any(other.startswith(prefix) for other in found.files):
        return f"the link {name!r} stands where the archive has a folder"
    walked = posixpath.dirname(name)
    for part in target.split("/"):
        walked = posixpath.normpath(posixpath.join(walked, part))
        if walked in found.links and walked != name:
            return f"the link {name!r} reaches its target through another link"
    return ""


def _make_links(found: _Read, into: Path) -> None:
    for name, target in sorted(found.links.items()):
        path = into / destination(name)
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        os.symlink(target, path)


def _parents(name: str) -> list[str]:
    return [parent.as_posix() for parent in PurePosixPath(name).parents][:-1]
