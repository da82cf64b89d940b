"""Finds skills on disk and keeps a cached catalog of them.

Skills are read on every turn (the system prompt lists them), so a scan is cached and redone only
when the fingerprint changes: the SKILL.md paths with their mtime_ns and size. Availability
(binaries on PATH, environment variables) is re-checked on every call because installing a tool
changes it without touching any file; that costs a `stat` of each PATH folder (a binary is
looked for again only when PATH or one of its folders changed, or, for one not found, when a file
of its name there changed: `chmod +x` in place).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from countbot.skills.catalog import SkillCatalog
from countbot.skills.parser import broken_skill, parse_skill
from countbot.skills.skill import Skill, SkillSource

SKILL_FILE = "SKILL.md"

# Whether a CountBot settings key (dotted, `tools.web.search_api_key`) is set: `requires.config`.
ConfigCheck = Callable[[str], bool]
# (source, SKILL.md path, mtime_ns, size) for every skill file, in override order.
Fingerprint = tuple[tuple[SkillSource, str, int, int], ...]


@dataclass(frozen=True, slots=True)
class SkillScan:
    """What `SkillsLoader.scan` found on disk: the files' fingerprint and their skills."""

    fingerprint: Fingerprint
    skills: tuple[Skill, ...]


class SkillsLoader:
    """Built-in skills plus the workspace's own; a workspace skill overrides a built-in by name."""

    def __init__(
        self,
        builtin_dir: Path | None,
        workspace_skills_dir: Path,
        *,
        disabled: Iterable[str] = (),
        has_config: ConfigCheck = lambda key: False,
    ) -> None:
        # Later sources override earlier ones by name.
        self._sources: list[tuple[Path, SkillSource]] = [(workspace_skills_dir, "workspace")]
        if builtin_dir is not None:
            self._sources.insert(0, (builtin_dir, "builtin"))
        self._disabled = set(disabled)
        self._has_config = has_config
        self._lock = asyncio.Lock()
        self._scan: SkillScan | None = None
        self._catalog: SkillCatalog | None = None
        self._binaries = Binaries()

    async def catalog(self) -> SkillCatalog:
        """The current skills; the same object until a file, availability or a toggle changes."""
        async with self._lock:
            return self.adopt(await asyncio.to_thread(self.scan))

    def scan(self) -> SkillScan:
        """The skills on disk now (reparsed only if a file changed), blocking: run it in a worker
        thread, then hand the result to `adopt` on the event loop."""
        return _rescan(self._sources, self._scan, self._has_config, self._binaries)

    def adopt(self, scan: SkillScan) -> SkillCatalog:
        """The catalog of a fresh `scan`; the same object while nothing changed."""
        if scan != self._scan or self._catalog is None:
            self._scan = scan
            self._catalog = self._build_catalog(scan)
        return self._catalog

    async def env_names(self) -> tuple[str, ...]:
        """The environment variables enabled skills declare: exactly what `exec` passes on."""
        catalog = await self.catalog()
        return tuple(dict.fromkeys(e for s in catalog.skills if s.enabled for e in s.requires_env))

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Turn a skill on or off; takes effect at the next `catalog()` call."""
        if enabled:
            self._disabled.discard(name)
        else:
            self._disabled.add(name)
        self._catalog = None

    def _build_catalog(self, scan: SkillScan) -> SkillCatalog:
        skills = (
            dataclasses.replace(skill, enabled=skill.name not in self._disabled)
            for skill in scan.skills
        )
        return SkillCatalog(tuple(sorted(skills, key=lambda skill: skill.name)))


# --- blocking parts, run in one worker thread per call ---------------------------------------


class Binaries:
    """Whether a binary is on PATH, as `shutil.which` says, kept while PATH and the mtimes of
    its folders stay as they were (adding, removing or renaming a file in a folder moves its
    mtime): a look costs one `stat` per folder, not a walk of every folder per binary. A folder
    changed in the last RECENT_NS is not trusted yet (its mtime is as coarse as the kernel's
    clock tick, so a second change in the same tick would not move it), as git's racy check.

    A binary made executable in place (`chmod +x`) moves no folder's mtime, only its own
    ctime: a name not found while a file of that name sits in a PATH folder is looked for
    again when that file's ctime moves. Those files are few (usually none), so a look stays
    a `stat` per folder."""

    RECENT_NS = 2_000_000_000

    def __init__(self) -> None:
        self._stamp: list[object] = []
        self._found: dict[str, bool] = {}
        # A name not found -> the files of that name on PATH then, with their ctime_ns.
        self._unusable: dict[str, tuple[tuple[str, int], ...]] = {}

    def refresh(self) -> None:
        """Forget what was found if PATH or one of its folders changed, and a name not found
        whose file of that name changed; blocking."""
        path = os.environ.get("PATH", os.defpath)
        stamp: list[object] = [path]
        recent = time.time_ns() - self.RECENT_NS
        trusted = True
        for folder in path.split(os.pathsep):
            try:
                mtime = os.stat(folder or ".").st_mtime_ns
            except OSError:
                stamp.append(None)
                continue
            stamp.append(mtime)
            trusted = trusted and mtime < recent
        if stamp != self._stamp or not trusted:
            self._found = {}
            self._unusable = {}
        else:
            for name, files in list(self._unusable.items()):
                if any(ctime >= recent or _ctime_ns(file) != ctime for file, ctime in files):
                    del self._found[name], self._unusable[name]
        self._stamp = stamp

    def found(self, name: str) -> bool:
        found = self._found.get(name)
        if found is None:
            found = self._found[name] = shutil.which(name) is not None
            files = () if found else _files_named(name)
            if files:
                self._unusable[name] = files
        return found


def _files_named(name: str) -> tuple[tuple[str, int], ...]:
    """The files called `name` in the folders on PATH, with their ctime_ns."""
    files = []
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        file = os.path.join(folder or ".", name)
        ctime = _ctime_ns(file)
        if ctime is not None:
            files.append((file, ctime))
    return tuple(files)


def _ctime_ns(file: str) -> int | None:
    try:
        return os.stat(file).st_ctime_ns
    except OSError:
        return None


def _rescan(
    sources: list[tuple[Path, SkillSource]],
    previous: SkillScan | None,
    has_config: ConfigCheck,
    binaries: Binaries,
) -> SkillScan:
    """Reparse only if the files changed; always refresh availability."""
    fingerprint = _fingerprint(sources)
    if previous is not None and previous.fingerprint == fingerprint:
        parsed: Iterable[Skill] = previous.skills
    else:
        parsed = _parse_all(fingerprint)
    binaries.refresh()
    return SkillScan(
        fingerprint, tuple(_with_availability(skill, has_config, binaries) for skill in parsed)
    )


def _fingerprint(sources: list[tuple[Path, SkillSource]]) -> Fingerprint:
    # Plain strings and os calls: this runs before every turn, and pathlib costs more than the
    # system calls it wraps.
    entries: list[tuple[SkillSource, str, int, int]] = []
    for directory, source in sources:
        try:
            names = sorted(os.listdir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            path = os.path.join(directory, name, SKILL_FILE)
            try:
                stat = os.stat(path)
            except (FileNotFoundError, NotADirectoryError):
                continue
            entries.append((source, path, stat.st_mtime_ns, stat.st_size))
    return tuple(entries)


def _parse_all(fingerprint: Fingerprint) -> list[Skill]:
    by_name: dict[str, Skill] = {}
    for source, path_text, _mtime, _size in fingerprint:
        path = Path(path_text)
        try:
            skill = parse_skill(path, path.read_text(encoding="utf-8"), source)
        except (OSError, UnicodeDecodeError) as exc:
            skill = broken_skill(path, source, f"cannot read: {exc}")
        by_name[skill.name] = skill
    return list(by_name.values())


def _with_availability(skill: Skill, has_config: ConfigCheck, binaries: Binaries) -> Skill:
    if skill.error:
        return skill
    missing = []
    if skill.os and sys.platform not in skill.os:
        missing.append(f"os {' or '.join(skill.os)} (this is {sys.platform})")
    missing += [f"binary {b}" for b in skill.requires_bins if not binaries.found(b)]
    if skill.requires_any_bins and not any(binaries.found(b) for b in skill.requires_any_bins):
        missing.append(f"one of the binaries {', '.join(skill.requires_any_bins)}")
    missing += [f"env var {e}" for e in skill.requires_env if not os.environ.get(e)]
    missing += [f"config {key}" for key in skill.requires_config if not has_config(key)]
    if skill.available == (not missing) and skill.missing == tuple(missing):
        return skill  # unchanged since the last look: the same object (compared by identity)
    return dataclasses.replace(skill, available=not missing, missing=tuple(missing))
