"""`countbot backup create`: one archive of a running instance, written beside its target and
renamed into place once whole, its manifest last.

Blocking work (SQLite copies, compression, hashing): the daemon runs it in a worker thread.
The SQLite steps and zlib release the GIL while they work, so the event loop keeps serving.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sqlite3
import tarfile
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import countbot
from countbot.backup.config_text import without_secrets
from countbot.backup.manifest import Hasher, Manifest
from countbot.backup.members import MANIFEST
from countbot.backup.source import AUDIT_LOG, DATABASES, Instance

log = logging.getLogger(__name__)
_CHUNK = 1 << 20


def create_backup(instance: Instance, target: Path, *, include_secrets: bool = False) -> Manifest:
    """Write the archive of `instance` to `target`; its manifest. Nothing is left at `target`
    (nor beside it) when this fails: a full disk leaves the older backups as they were."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    manifest = Manifest(created_at=datetime.now(UTC).isoformat(), countbot=countbot.__version__)
    try:
        with (
            tempfile.TemporaryDirectory(dir=target.parent, prefix=".backup-") as scratch,
            tarfile.open(partial, "w:gz", compresslevel=6, copybufsize=_CHUNK) as tar,
        ):
            writer = _Writer(tar, manifest, skip={target.parent.resolve()})
            _add_instance(writer, instance, Path(scratch), include_secrets)
        # Only once the scratch copies are gone: an fsync has the file system flush the dirty
        # blocks it holds, and the store's writers waited behind the copy's (docs/backup.md).
        with open(partial, "rb") as done:
            os.fsync(done.fileno())
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        raise
    return manifest


def _add_instance(writer: _Writer, instance: Instance, scratch: Path, secrets: bool) -> None:
    """Every part of the instance, then the manifest, last."""
    _add_config(writer, instance, secrets)
    _add_databases(writer, instance, scratch)
    _add_audit(writer, instance.data_dir)
    writer.add_tree("workspace", instance.workspace)
    for part, folder in (("skills", instance.skills), ("personas", instance.personas)):
        if folder is not None:
            writer.add_tree(part, folder)
    writer.manifest.local_models = instance.local_models()
    writer.add_bytes(MANIFEST, writer.manifest.to_json(), record=False)


def _add_config(writer: _Writer, instance: Instance, include_secrets: bool) -> None:
    manifest = writer.manifest
    manifest.secrets_included = include_secrets
    if instance.config is not None and instance.config.is_file():
        text = instance.config.read_text(encoding="utf-8")
        if not include_secrets:
            text, manifest.secrets_left_out = without_secrets(text)
        writer.add_bytes("config/config.yaml", text.encode(), mode=0o600)
    if include_secrets and instance.secrets is not None and instance.secrets.is_file():
        writer.add_bytes("config/secrets.yaml", instance.secrets.read_bytes(), mode=0o600)


def _add_databases(writer: _Writer, instance: Instance, scratch: Path) -> None:
    for name in DATABASES:
        source = instance.data_dir / name
        if not source.is_file():
            continue
        copy = scratch / name
        version = copy_database(source, copy)
        if name == DATABASES[0]:
            writer.manifest.schema = version
        writer.add_file(f"data/{name}", copy)
    if not (instance.data_dir / DATABASES[1]).is_file():
        writer.manifest.notes.append("no memory index: it is built at the first start")


def copy_database(source: Path, copy: Path) -> int:
    """A consistent copy of a live SQLite file by its online backup API; its schema version.

    One step copies every page inside one read transaction: in WAL mode writers go on
    meanwhile and the copy is the file as of that transaction's start.
    """
    with (
        contextlib.closing(sqlite3.connect(source, timeout=30)) as src,
        contextlib.closing(sqlite3.connect(copy)) as dst,
    ):
        src.backup(dst)
        # One self-contained file: no -wal beside it in the archive.
        dst.execute("PRAGMA journal_mode=DELETE")
        (version,) = dst.execute("PRAGMA user_version").fetchone()
    return int(version)


def _add_audit(writer: _Writer, data_dir: Path) -> None:
    """The audit log and its rotated files, each up to its last whole line (it is being
    appended to)."""
    for path in sorted(data_dir.glob(f"{AUDIT_LOG}*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            writer.add_bytes(f"data/{path.name}", data[: data.rfind(b"\n") + 1])


class _Writer:
    """Adds members to the archive, recording each file's hash in the manifest."""

    def __init__(self, tar: tarfile.TarFile, manifest: Manifest, skip: set[Path]) -> None:
        self.tar = tar
        self.manifest = manifest
        self._skip = skip

    def add_bytes(self, name: str, data: bytes, *, mode: int = 0o644, record: bool = True) -> None:
        self._add(name, io.BytesIO(data), len(data), mode, time.time(), record)

    def add_file(self, name: str, path: Path) -> None:
        with open(path, "rb") as file:
            status = os.fstat(file.fileno())
            self._add(name, file, status.st_size, status.st_mode & 0o777, status.st_mtime, True)

    def add_tree(self, part: str, folder: Path) -> None:
        """Every file under `folder` as `part/...`; links only when they stay inside it."""
        if not folder.is_dir():
            return
        root = folder.resolve()
        for here, dirs, files in os.walk(folder):
            base = Path(here)
            dirs[:] = sorted(d for d in dirs if (base / d).resolve() not in self._skip)
            for name in [*dirs, *sorted(files)]:
                self._add_entry(part, root, folder, base / name)

    def _add_entry(self, part: str, root: Path, folder: Path, path: Path) -> None:
        name = f"{part}/{path.relative_to(folder).as_posix()}"
        if path.is_symlink():
            target = os.readlink(path)
            if not path.resolve().is_relative_to(root) or os.path.isabs(target):
                self.manifest.notes.append(f"left out {name}: it links outside {part}/")
                return
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            self.tar.addfile(info)
            self.manifest.links[name] = target
        elif path.is_dir():
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            self.tar.addfile(info)
        elif path.is_file():
            try:
                self.add_file(name, path)
            except OSError as exc:  # vanished or unreadable meanwhile
                self.manifest.notes.append(f"left out {name}: {exc.strerror or exc}")

    def _add(
        self, name: str, file: BinaryIO, size: int, mode: int, mtime: float, record: bool
    ) -> None:
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = size, mode, int(mtime)
        reader = _HashingReader(file, size)
        self.tar.addfile(info, reader)
        if reader.short:
            self.manifest.notes.append(f"{name} shrank while it was read; its end is zeros")
        if record:
            self.manifest.files[name] = reader.hasher.entry()


class _HashingReader:
    """Reads exactly `size` bytes of `file` for the archive, hashing them; a file that shrank
    while it was read is padded (the member's size is already written)."""

    def __init__(self, file: BinaryIO, size: int) -> None:
        self._file = file
        self._left = size
        self.hasher = Hasher()
        self.short = False

    def read(self, wanted: int = _CHUNK) -> bytes:
        wanted = self._left if wanted < 0 else min(wanted, self._left)
        chunk = self._file.read(wanted)
        if len(chunk) < wanted:
            self.short = True
            chunk += bytes(wanted - len(chunk))
        self._left -= len(chunk)
        self.hasher.update(chunk)
        return chunk
