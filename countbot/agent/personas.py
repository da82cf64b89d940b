"""Personas: who the assistant is (name, how it addresses the user, personality, reply language).

A preset is a file in the personas folder, `<preset>.md` (frontmatter, with the body as the
personality) or `<preset>.yaml`; `persona:` settings pick one and override its fields. Files are
cached and re-read when their mtime or size changes, so edits apply on the next turn.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from countbot.config.settings import PersonaSettings
from countbot.skills.frontmatter import FrontmatterError, split_frontmatter

log = logging.getLogger(__name__)

PRESET_SUFFIXES = (".md", ".yaml", ".yml")
OVERRIDABLE = ("name", "user_address", "personality", "language")
FIELDS = (*OVERRIDABLE, "description")


class PersonaError(ValueError):
    """A preset that does not exist or cannot be read; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class Persona:
    """`language` is "auto" (answer in the user's language) or a tag like "en" or "zh-CN".

    `description` is the preset's one-line summary for people choosing one; the model never sees it.
    """

    preset: str
    name: str = "CountBot"
    user_address: str = ""
    personality: str = ""
    language: str = "auto"
    description: str = ""


class PersonaLoader:
    """Loads presets from one folder, caching each by its file's mtime and size."""

    def __init__(self, personas_dir: Path) -> None:
        self._dir = personas_dir
        self._cache: dict[Path, tuple[tuple[int, int], Persona]] = {}
        # The last preset looked for and its candidate paths.
        self._candidates: tuple[str, tuple[Path, ...]] = ("", ())

    def check(self, preset: str) -> None:
        """Raise `PersonaError` unless `preset` loads; blocking, for start-up before the loop."""
        self._load_preset(preset)

    async def load(self, settings: PersonaSettings) -> Persona:
        """The preset `settings.preset` with the non-None fields of `settings` applied."""
        return await asyncio.to_thread(self.resolve, settings)

    def resolve(self, settings: PersonaSettings) -> Persona:
        """`load`, blocking: for a worker thread that looks at other files too (the prompt's)."""
        base = self._load_preset(settings.preset)
        overrides = {
            key: value for key in OVERRIDABLE if (value := getattr(settings, key)) is not None
        }
        return dataclasses.replace(base, **overrides) if overrides else base

    async def available(self) -> list[Persona]:
        """The folder's presets, sorted by name; an unreadable one is left out (and logged)."""
        return await asyncio.to_thread(self._readable_presets)

    # --- blocking parts, run in worker threads ------------------------------------------------

    def _load_preset(self, preset: str) -> Persona:
        path, stamp = self._find(preset)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        persona = _parse(preset, path)
        self._cache[path] = (stamp, persona)
        return persona

    def _find(self, preset: str) -> tuple[Path, tuple[int, int]]:
        # Looked for before every turn (the prompt's look): the candidate paths are made once,
        # pathlib costing more than the stat it wraps.
        if self._candidates[0] != preset:
            self._candidates = (preset, self._candidate_paths(preset))
        for path in self._candidates[1]:
            try:
                stat = os.stat(path)
            except (FileNotFoundError, NotADirectoryError):
                continue
            return path, (stat.st_mtime_ns, stat.st_size)
        names = ", ".join(self._preset_names()) or f"none (no preset files in {self._dir})"
        raise PersonaError(f"unknown persona preset {preset!r}; available: {names}")

    def _candidate_paths(self, preset: str) -> tuple[Path, ...]:
        # A preset is a bare name: never let it reach outside the folder.
        if preset and "/" not in preset and "\\" not in preset and not preset.startswith("."):
            return tuple(self._dir / f"{preset}{suffix}" for suffix in PRESET_SUFFIXES)
        return ()

    def _readable_presets(self) -> list[Persona]:
        presets = []
        for name in self._preset_names():
            try:
                presets.append(self._load_preset(name))
            except PersonaError as exc:
                log.warning("%s", exc)
        return presets

    def _preset_names(self) -> list[str]:
        if not self._dir.is_dir():
            return []
        return sorted(
            {p.stem for p in self._dir.iterdir() if p.suffix in PRESET_SUFFIXES and p.is_file()}
        )


def _parse(preset: str, path: Path) -> Persona:
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".md":
            fields, body = split_frontmatter(text)
            fields.setdefault("personality", _unwrap(body))
        else:
            fields = yaml.safe_load(text) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError, FrontmatterError) as exc:
        raise PersonaError(f"cannot read persona preset {path}: {exc}") from exc
    if not isinstance(fields, dict):
        raise PersonaError(f"persona preset {path} is not a mapping of fields")
    values: dict[str, Any] = {k: str(fields[k]).strip() for k in FIELDS if fields.get(k)}
    return Persona(preset=preset, **values)


def _unwrap(text: str) -> str:
    """Join hard-wrapped lines into one line per paragraph, as the prompt shows it."""
    return "\n\n".join(" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip())
