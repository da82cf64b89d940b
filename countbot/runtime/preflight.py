"""Checks a configuration must pass before anything starts, so a bad one exits 2 with a message.

The schema cannot see the file system: `data_dir` or `workspace` naming a file or a folder that
cannot be written, or a persona preset that does not exist, would otherwise start the daemon and
then fail every turn (or end in a traceback). Blocking I/O: call before the event loop runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from countbot.agent.personas import PersonaError, PersonaLoader
from countbot.config.errors import ConfigError
from countbot.config.settings import Settings

# The data folder holds conversations, the audit trail and keys: only its owner may enter one
# that CountBot creates (so `doctor --security` never warns about a folder CountBot made). The
# workspace is the user's own files and keeps the usual mode.
_MODES = {"data_dir": 0o700, "workspace": 0o777}


def check_settings(settings: Settings) -> None:
    """Raise one `ConfigError` listing every problem found, or return."""
    problems = [
        problem
        for key, path in (("data_dir", settings.data_dir), ("workspace", settings.workspace))
        if (problem := _folder_problem(key, path, _MODES[key])) is not None
    ]
    if settings.personas_dir is not None:
        try:
            PersonaLoader(settings.personas_dir).check(settings.persona.preset)
        except PersonaError as exc:
            problems.append(f"`persona.preset`: {exc}")
    if problems:
        source = settings.config_path or Path("config.yaml")
        raise ConfigError.listing(source, problems)


def _folder_problem(key: str, path: Path, mode: int) -> str | None:
    """Why `path` cannot be used as a writable folder (created here with `mode` when missing)."""
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        where = "is a file" if existing == path else f"is inside {existing}, which is a file"
        return f"`{key}` ({path}) {where}; it must be a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "cannot be written" if existing == path else f"cannot be created in {existing}"
        return f"`{key}` ({path}) {what}; choose a folder you can write to"
    # Permissions do not tell everything (root under /proc, a read-only mount): try it.
    try:
        path.mkdir(mode=mode, parents=True, exist_ok=True)
    except OSError as exc:
        return f"`{key}` ({path}) cannot be created ({exc.strerror or exc}); choose another folder"
    return None
