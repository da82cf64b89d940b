"""Archives that must be refused whole: escapes, links out, and anything the manifest denies."""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from countbot.backup.manifest import Hasher, Manifest
from countbot.backup.reading import BackupError, verify_backup
from countbot.backup.restore import restore_backup

Member = tuple[tarfile.TarInfo, bytes]


def _file(name: str, data: bytes = b"x") -> Member:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, b""


def _archive(
    path: Path, members: list[Member], manifest: Callable[[Manifest], None] = lambda m: None
) -> Path:
    """A gzip tar of `members` and a manifest that names them truly (then edited)."""
    listed = Manifest(created_at="2026-11-29T00:00:00+00:00", countbot="0.1.0")
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
            if info.isfile():
                hasher = Hasher()
                hasher.update(data)
                listed.files[info.name] = hasher.entry()
            elif info.issym():
                listed.links[info.name] = info.linkname
        manifest(listed)
        raw = listed.to_json()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(raw)
        tar.addfile(info, io.BytesIO(raw))
    return path


GOOD = [_file("config/config.yaml", b"model: {}\n"), _file("workspace/MEMORY.md", b"- a\n")]


def _drop_first_file(manifest: Manifest) -> None:
    manifest.files.pop("workspace/MEMORY.md")


def _change_hash(manifest: Manifest) -> None:
    manifest.files["workspace/MEMORY.md"]["sha256"] = "0" * 64


def _add_missing(manifest: Manifest) -> None:
    manifest.files["workspace/USER.md"] = {"sha256": "0" * 64, "size": 1}


HOSTILE: dict[str, tuple[list[Member], Callable[[Manifest], None], str]] = {
    "absolute path": ([*GOOD, _file("/etc/cron.d/evil")], lambda m: None, "absolute"),
    "dot-dot": ([*GOOD, _file("workspace/../../evil")], lambda m: None, "climbs out"),
    "link out": ([*GOOD, _link("workspace/l", "../../../etc/passwd")], lambda m: None, "links out"),
    "absolute link": ([*GOOD, _link("workspace/l", "/etc/passwd")], lambda m: None, "absolute"),
    "hard link": (
        [*GOOD, _link("workspace/h", "config/config.yaml", tarfile.LNKTYPE)],
        lambda m: None,
        "hard link",
    ),
    "file under a link": (
        [*GOOD, _link("workspace/d", "."), _file("workspace/d/x")],
        lambda m: None,
        "under a link",
    ),
    "link through a link": (
        [*GOOD, _link("workspace/a", "."), _link("workspace/b", "a/..")],
        lambda m: None,
        "through another link",
    ),
    "device": ([*GOOD, (tarfile.TarInfo("workspace/dev"), b"")], lambda m: None, "special"),
    "unknown part": ([*GOOD, _file("etc/passwd")], lambda m: None, "no part of an instance"),
    "file not in manifest": (GOOD, _drop_first_file, "does not match the manifest"),
    "changed file": (GOOD, _change_hash, "does not match the manifest"),
    "missing file": (GOOD, _add_missing, "not in the archive"),
}
HOSTILE["device"][0][-1][0].type = tarfile.CHRTYPE


@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_a_hostile_archive_is_refused_and_nothing_is_written(
    tmp_path: Path, case: str
) -> None:
    members, edit, reason = HOSTILE[case]
    archive = _archive(tmp_path / "hostile.tar.gz", members, edit)
    with pytest.raises(BackupError, match=reason):
        verify_backup(archive)
    with pytest.raises(BackupError, match=reason):
        await restore_backup(archive, tmp_path / "restored")
    assert os.listdir(tmp_path) == ["hostile.tar.gz"]


async def test_a_cut_short_archive_is_refused(tmp_path: Path) -> None:
    whole = _archive(tmp_path / "whole.tar.gz", GOOD).read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(BackupError):
        verify_backup(cut)
    no_manifest = tmp_path / "no-manifest.tar.gz"
    with tarfile.open(no_manifest, "w:gz") as tar:
        for info, data in GOOD:
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(BackupError, match="no manifest"):
        verify_backup(no_manifest)


async def test_a_true_archive_restores_its_links_inside_the_workspace(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "good.tar.gz", [*GOOD, _link("workspace/notes.md", "MEMORY.md")])
    assert json.loads(Manifest(created_at="", countbot="").to_json())["format"] == "countbot-backup"
    restored = await restore_backup(archive, tmp_path / "restored")
    link = restored.config.parent / "data" / "workspace" / "notes.md"
    assert link.is_symlink() and link.read_text() == "- a\n"
