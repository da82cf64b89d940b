"""What a skill is: a folder with a SKILL.md (frontmatter + Markdown instructions) and its files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SkillSource = Literal["builtin", "workspace"]


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill as scanned.

    `missing` names what keeps an unavailable skill from working ("binary curl", "env var X");
    `error` is set instead when its SKILL.md could not be parsed. `path` is the SKILL.md file.
    """

    name: str
    description: str
    always: bool
    path: Path
    body: str
    source: SkillSource
    requires_bins: tuple[str, ...] = ()
    requires_env: tuple[str, ...] = ()
    # At least one of these binaries (`requires.anyBins`).
    requires_any_bins: tuple[str, ...] = ()
    # CountBot settings keys (dotted) that must be set (`requires.config`).
    requires_config: tuple[str, ...] = ()
    # Operating systems it runs on (`os`: linux, darwin, win32); empty means any.
    os: tuple[str, ...] = ()
    # `disable-model-invocation`: only the user may load it (`/name`), the model is not told.
    model_invocable: bool = True
    # `user-invocable: false`: `/name` does not load it.
    user_invocable: bool = True
    # How to get what it needs (`install`), shown to people, never run.
    install_hints: tuple[str, ...] = ()
    available: bool = True
    missing: tuple[str, ...] = ()
    error: str = ""
    enabled: bool = True

    @property
    def folder(self) -> Path:
        """Where bundled files (scripts, templates, references) live."""
        return self.path.parent

    @property
    def unavailable_reason(self) -> str:
        """Why the skill cannot be used, for people and the model; "" when it can."""
        if self.error:
            return f"broken SKILL.md: {self.error}"
        if self.missing:
            return "needs " + ", ".join(self.missing)
        return ""
