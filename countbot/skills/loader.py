"""Finds skills on disk and keeps a cached catalog of them.

Skills are read on every turn (the system prompt lists them), so a scan is cached and redone only
when the fingerprint changes: the SKILL.md paths with their mtime_ns and size. Availability
(binaries on PATH, environment variables) is re-checked on every call because installing a tool
changes it without touching any file; that costs a few `stat`s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import sys
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

    async def catalog(self) -> SkillCatalog:
        """The current skills; the same object until a file, availability or a toggle changes."""
        async with self._lock:
            return self.adopt(await asyncio.to_thread(self.scan))

    def scan(self) -> SkillScan:
        """The skills on disk now (reparsed only if a file changed), blocking: run it in a worker
        thread, then hand the result to `adopt` on the event loop."""
        return _rescan(self._sources, self._scan, self._has_config)

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


def _rescan(
    sources: list[tuple[Path, SkillSource]], previous: SkillScan | None, has_config: ConfigCheck
) -> SkillScan:
    """Reparse only if the files changed; always refresh availability."""
    fingerprint = _fingerprint(sources)
    if previous is not None and previous.fingerprint == fingerprint:
        parsed: Iterable[Skill] = previous.skills
    else:
        parsed = _parse_all(fingerprint)
    return SkillScan(fingerprint, tuple(_with_availability(skill, has_config) for skill in parsed))


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


def _with_availability(skill: Skill, has_config: ConfigCheck) -> Skill:
    if skill.error:
        return skill
    missing = []
    if skill.os and sys.platform not in skill.os:
        missing.append(f"os {' or '.join(skill.os)} (this is {sys.platform})")
    missing += [f"binary {b}" for b in skill.requires_bins if shutil.which(b) is None]
    if skill.requires_any_bins and not any(shutil.which(b) for b in skill.requires_any_bins):
        missing.append(f"one of the binaries {', '.join(skill.requires_any_bins)}")
    missing += [f"env var {e}" for e in skill.requires_env if not os.environ.get(e)]
    missing += [f"config {key}" for key in skill.requires_config if not has_config(key)]
    if skill.available == (not missing) and skill.missing == tuple(missing):
        return skill  # unchanged since the last look: the same object (compared by identity)
    return dataclasses.replace(skill, available=not missing, missing=tuple(missing))
