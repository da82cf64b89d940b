"""`countbot backup restore FILE --to DIR`: a checked archive made into a working instance."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from countbot.backup.config_text import restored
from countbot.backup.manifest import Manifest
from countbot.backup.reading import BackupError, unpack_backup
from countbot.config.instance import CONFIG_NAME
from countbot.store.database import Database
from countbot.store.restored import settle_restored


@dataclass(frozen=True, slots=True)
class Restored:
    """A restored instance: its config file, what the archive said, what was settled."""

    config: Path
    manifest: Manifest
    settled: dict[str, int]


async def restore_backup(archive: Path, folder: Path) -> Restored:
    """Restore `archive` as a new instance in `folder` (absent or empty); BackupError when the
    archive is refused or the folder is taken. The folder appears only once all is done."""
    staging, manifest = await asyncio.to_thread(_unpack, archive, folder)
    try:
        database = staging / "data" / "countbot.db"
        settled = await _settle_store(database) if manifest.files.get("data/countbot.db") else {}
        final = await asyncio.to_thread(_move_into_place, staging, folder)
    except BaseException:
        await asyncio.to_thread(shutil.rmtree, staging, True)
        raise
    return Restored(final / CONFIG_NAME, manifest, settled)


def _unpack(archive: Path, folder: Path) -> tuple[Path, Manifest]:
    """The archive checked and unpacked beside `folder`, its config pointed at its folders."""
    folder = Path(os.path.abspath(folder))
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise BackupError([f"{folder} exists and is not an empty folder"])
    staging = folder.with_name(f".{folder.name}.restoring-{os.getpid()}")
    manifest = unpack_backup(archive, staging)
    try:
        config = staging / CONFIG_NAME
        parts = {name for name in ("skills", "personas") if (staging / name).is_dir()}
        text = config.read_text(encoding="utf-8") if config.is_file() else ""
        fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8") as out:
            out.write(restored(text, parts))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging, manifest


def _move_into_place(staging: Path, folder: Path) -> Path:
    folder = Path(os.path.abspath(folder))
    if folder.exists():
        folder.rmdir()  # empty, checked before the unpacking
    os.rename(staging, folder)
    return folder


async def _settle_store(path: Path) -> dict[str, int]:
    """Bring the restored store to this version's schema and settle what it owed."""
    db = await Database.open(path)
    try:
        return await settle_restored(db, time.time())
    finally:
        await db.close()
