"""What an import found in another assistant's folder, in CountBot's terms."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

# Where a piece of text goes: AGENTS.md (standing instructions, the persona's place in every
# prompt), USER.md, MEMORY.md or HEARTBEAT.md.
Target = Literal["AGENTS.md", "USER.md", "MEMORY.md", "HEARTBEAT.md"]


@dataclass(frozen=True, slots=True)
class Text:
    """A file's text to add to one of the workspace's files."""

    target: Target
    origin: str  # the file it came from, relative to the imported folder
    text: str


@dataclass(frozen=True, slots=True)
class Note:
    """A memory file of its own (a daily note), copied to `memory/<name>.md`."""

    name: str
    origin: str
    text: str


@dataclass(frozen=True, slots=True)
class ImportedJob:
    """A scheduled job, already in the terms of `countbot cron add`."""

    name: str
    kind: Literal["cron", "every", "at"]
    value: str  # a crontab expression, an interval in seconds, or an ISO date-time
    timezone: str | None
    prompt: str
    delivery: str  # "<channel>:<chat>", "web" or "none"
    enabled: bool
    origin: str


@dataclass(slots=True)
class Found:
    """Everything one source folder offers; `left` says what will not be taken, and why."""

    source: str
    texts: list[Text] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    skills: list[Path] = field(default_factory=list)
    jobs: list[ImportedJob] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
