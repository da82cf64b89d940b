"""The file-system half of the security review: who else can read or change CountBot's files,
keys left in plain text in config.yaml, and workspace skills that did not ship with CountBot."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from countbot.config import fields
from countbot.config.loader import SHIPPED_ROOT
from countbot.config.secrets_file import secrets_path
from countbot.config.settings import Settings

Level = Literal["ok", "warning", "danger"]
_DATA_FILES = ("countbot.db", "audit.jsonl", "daemon.json")


@dataclass(frozen=True)
class Finding:
    """One line of the review: how bad, about what, what was seen, and what to change."""

    level: Level
    topic: str
    detail: str
    fix: str = ""


def review_files(settings: Settings) -> list[Finding]:
    findings: list[Finding] = []
    config = settings.config_path
    if config is not None and config.exists():
        plain = plain_text_keys(config)
        findings.append(_config_mode(config, holds_keys=bool(plain)))
        if plain:
            findings.append(
                Finding(
                    "warning",
                    "keys in config.yaml",
                    f"{', '.join(plain)} written in plain text",
                    "write ${ENV_VAR} references, or move the values to secrets.yaml beside "
                    "it (mode 0600) and write ${secret:<name>}; a key typed on the settings "
                    "page goes there by itself",
                )
            )
        secrets = secrets_path(config)
        if secrets.exists():
            findings.append(_private_file(secrets, "secrets file"))
    findings.append(_data_dir(settings.data_dir))
    findings.append(_skills(settings))
    return findings


def plain_text_keys(config: Path) -> list[str]:
    """The secret settings whose value is written in the file itself, not referenced."""
    try:
        raw = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    found = []
    for loc in fields.key_paths():
        if not fields.is_secret(loc):
            continue
        value = _at(raw, loc)
        if isinstance(value, str) and value and "${" not in value:
            found.append(fields.dotted(loc))
    return found


def _at(data: Any, loc: fields.Loc) -> Any:
    for part in loc:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _config_mode(config: Path, *, holds_keys: bool) -> Finding:
    mode = _mode(config)
    if mode & 0o022:
        return Finding(
            "danger",
            "config file",
            f"{config} ({mode:04o}) can be changed by other users: they could point the "
            "assistant anywhere",
            f"chmod 600 {config}",
        )
    if holds_keys and mode & 0o044:
        level: Level = "danger" if mode & 0o004 else "warning"
        return Finding(
            level,
            "config file",
            f"{config} ({mode:04o}) holds keys and other users can read it",
            f"chmod 600 {config}",
        )
    return Finding("ok", "config file", f"{config} ({mode:04o})")


def _private_file(path: Path, topic: str) -> Finding:
    mode = _mode(path)
    if not mode & 0o077:
        return Finding("ok", topic, f"{path} ({mode:04o})")
    level: Level = "danger" if mode & 0o006 or mode & 0o020 else "warning"
    return Finding(
        level, topic, f"{path} ({mode:04o}) can be read by other users", f"chmod 600 {path}"
    )


def _data_dir(data_dir: Path) -> Finding:
    if not data_dir.is_dir():
        return Finding("ok", "data folder", f"{data_dir} does not exist yet")
    mode = _mode(data_dir)
    if mode & 0o002:
        return Finding(
            "danger",
            "data folder",
            f"{data_dir} ({mode:04o}) can be changed by every user",
            f"chmod 700 {data_dir}",
        )
    # A file is readable by others only if they can also enter the folder.
    exposed = [
        name
        for name in _DATA_FILES
        if (data_dir / name).exists() and _mode(data_dir / name) & 0o004 and mode & 0o001
    ]
    if exposed:
        return Finding(
            "warning",
            "data folder",
            f"other users can read {', '.join(exposed)} in {data_dir} (conversations, audit trail)",
            f"chmod 700 {data_dir}",
        )
    return Finding("ok", "data folder", f"{data_dir} ({mode:04o})")


def _skills(settings: Settings) -> Finding:
    folder = settings.workspace / "skills"
    builtin = settings.skills_dir or SHIPPED_ROOT / "skills"
    shipped = [SHIPPED_ROOT / "workspace" / "skills", builtin]
    unknown, known = [], 0
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    for name in (n for n in names if (folder / n / "SKILL.md").is_file()):
        digest = _digest(folder / name)
        if any(_digest(root / name) == digest for root in shipped if (root / name).is_dir()):
            known += 1
        elif name not in settings.skills.disabled:
            unknown.append(name)
    if not unknown:
        return Finding("ok", "skills", f"{known} workspace skills, all as shipped")
    return Finding(
        "warning",
        "skills",
        f"workspace skills that did not ship with CountBot: {', '.join(unknown)}; their "
        "instructions steer the assistant",
        "read each SKILL.md (and any scripts beside it); switch off the ones you do not trust "
        "on the Skills page",
    )


def _digest(folder: Path) -> str:
    """One hash over every file of a skill folder (names and contents)."""
    sha = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        sha.update(os.fsencode(path.relative_to(folder)) + b"\0")
        sha.update(path.read_bytes())
    return sha.hexdigest()
