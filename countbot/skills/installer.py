"""`countbot skills install`: look at a skill bundle, then copy it into the workspace.

A bundle is a folder, a `.zip` or a `.skill` file (a zip) holding one SKILL.md, at its root or in
one top folder. Nothing in it is ever run: the review lists its files, which of them are scripts,
the binaries and env vars it wants and its install hints, so a person decides. Archives are
checked before anything is written: absolute paths, `..`, symlinks and oversized contents are
refused (zip-slip); folders with symlinks are refused too (they could point anywhere).
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from countbot.skills.loader import SKILL_FILE
from countbot.skills.parser import parse_skill
from countbot.skills.skill import Skill

MAX_FILES = 500
MAX_BYTES = 50 << 20
_SCRIPT_SUFFIXES = {".sh", ".bash", ".py", ".js", ".mjs", ".ts", ".rb", ".pl", ".ps1", ".bat"}


class BundleError(Exception):
    """The bundle cannot be installed; the message says why."""


@dataclass(frozen=True, slots=True)
class Bundle:
    """A skill bundle unpacked into a temporary folder (`root` holds the SKILL.md)."""

    root: Path
    skill: Skill
    files: tuple[str, ...]
    scripts: tuple[str, ...]


def open_bundle(source: Path, scratch: Path) -> Bundle:
    """Check and unpack `source` into `scratch` (a fresh temporary folder) for review."""
    if source.is_dir():
        target = scratch / source.name
        # Links are copied as links (never followed), then refused in our own copy.
        shutil.copytree(source, target, symlinks=True)
        _refuse_links(target)
    elif zipfile.is_zipfile(source):
        target = scratch / "bundle"
        _extract(source, target)
    else:
        raise BundleError(f"{source} is neither a folder nor a .zip/.skill archive")
    root = _skill_root(target)
    text = (root / SKILL_FILE).read_text(encoding="utf-8")
    skill = parse_skill(root / SKILL_FILE, text, "workspace")
    if skill.error:
        raise BundleError(f"its SKILL.md is broken: {skill.error}")
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    scripts = [name for name in files if _is_script(root / name)]
    return Bundle(root, skill, tuple(files), tuple(scripts))


def install(bundle: Bundle, skills_dir: Path, *, replace: bool = False) -> Path:
    """Copy the reviewed bundle to `<skills_dir>/<name>`; an existing one only with `replace`."""
    name = bundle.skill.name
    if not name or "/" in name or name.startswith(".") or name != Path(name).name:
        raise BundleError(f"the skill's name {name!r} cannot be a folder name")
    target = skills_dir / name
    if target.exists() and not replace:
        raise BundleError(f"a skill {name!r} is already installed at {target}")
    skills_dir.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(dir=skills_dir, prefix=f".{name}."))
    shutil.copytree(bundle.root, staged, dirs_exist_ok=True)
    if target.exists():
        shutil.rmtree(target)
    staged.rename(target)
    return target


def remove(skills_dir: Path, name: str) -> Path:
    """Delete the workspace skill `name` (never a built-in one)."""
    target = skills_dir / name
    if name != Path(name).name or not (target / SKILL_FILE).is_file():
        raise BundleError(f"no workspace skill {name!r} in {skills_dir}")
    shutil.rmtree(target)
    return target


def _extract(archive: Path, target: Path) -> None:
    with zipfile.ZipFile(archive) as bundle:
        members = bundle.infolist()
        if len(members) > MAX_FILES:
            raise BundleError(f"the archive holds more than {MAX_FILES} files")
        if sum(m.file_size for m in members) > MAX_BYTES:
            raise BundleError(f"the archive unpacks to more than {MAX_BYTES >> 20} MiB")
        for member in members:
            path = PurePosixPath(member.filename)
            if path.is_absolute() or ".." in path.parts or "\\" in member.filename:
                raise BundleError(f"the archive entry {member.filename!r} points outside it")
            if stat.S_ISLNK(member.external_attr >> 16):
                raise BundleError(f"the archive entry {member.filename!r} is a symlink")
        target.mkdir(parents=True)
        for member in members:
            destination = target.joinpath(*PurePosixPath(member.filename).parts)
            if member.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            with bundle.open(member) as source, destination.open("wb") as out:
                shutil.copyfileobj(source, out)
            if (member.external_attr >> 16) & 0o111:
                destination.chmod(0o755)


def _refuse_links(folder: Path) -> None:
    for count, path in enumerate(folder.rglob("*"), 1):
        if path.is_symlink():
            raise BundleError(f"{path.name} is a symlink; skills are installed without them")
        if count > MAX_FILES:
            raise BundleError(f"the folder holds more than {MAX_FILES} files")


def _skill_root(folder: Path) -> Path:
    if (folder / SKILL_FILE).is_file():
        return folder
    children = [child for child in folder.iterdir() if not child.name.startswith(".")]
    if len(children) == 1 and (children[0] / SKILL_FILE).is_file():
        return children[0]
    raise BundleError(f"no {SKILL_FILE} at the top of the bundle (or in its one top folder)")


def _is_script(path: Path) -> bool:
    if path.suffix.lower() in _SCRIPT_SUFFIXES or path.stat().st_mode & 0o111:
        return True
    with path.open("rb") as file:
        return file.read(2) == b"#!"
