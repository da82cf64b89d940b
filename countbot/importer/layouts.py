"""How OpenClaw, Hermes Agent and nanobot keep an assistant on disk, read into `Found`.

From their public sources: OpenClaw keeps `~/.openclaw/workspace/` (AGENTS.md, SOUL.md,
IDENTITY.md, USER.md, MEMORY.md, HEARTBEAT.md, TOOLS.md, memory/<date>.md, skills/) and
`~/.openclaw/cron/jobs.json` ({"version": 1, "jobs": [...]}, schedules `at`/`every`/`cron`,
payloads `agentTurn`/`systemEvent`, a `delivery` with channel and recipient). nanobot keeps
`~/.nanobot/workspace/` (AGENTS.md, SOUL.md, USER.md, TOOLS.md, HEARTBEAT.md, memory/MEMORY.md,
memory/HISTORY.md, skills/) and `~/.nanobot/cron/jobs.json` (the same schedule kinds with
`atMs`/`everyMs`, a payload that may deliver to a channel). Hermes keeps `~/.hermes/SOUL.md`,
`~/.hermes/memories/MEMORY.md` and `USER.md` (entries between lines holding `§`),
`~/.hermes/skills/[<category>/]<name>/SKILL.md` and `~/.hermes/cron/jobs.json` ({"jobs": [...]},
schedules `once`/`interval`/`cron`, `deliver` as `origin`, `local` or `<platform>[:<chat>]`).
Each reader is given the folder (`~/.openclaw`, or its workspace itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from countbot.config.settings import ChannelsSettings
from countbot.config.structs import field_types
from countbot.importer.found import Found, ImportedJob, Note, Target, Text

_CHANNELS = frozenset(field_types(ChannelsSettings))
_HERMES_ENTRY = "\n§\n"


def read_openclaw(home: Path) -> Found:
    found = Found("OpenClaw")
    workspace = _workspace(home)
    _texts(
        found,
        home,
        workspace,
        {
            "AGENTS.md": "AGENTS.md",
            "SOUL.md": "AGENTS.md",
            "IDENTITY.md": "AGENTS.md",
            "USER.md": "USER.md",
            "MEMORY.md": "MEMORY.md",
            "HEARTBEAT.md": "HEARTBEAT.md",
        },
    )
    _notes(found, home, workspace / "memory", skip=())
    _skills(found, workspace / "skills")
    _jobs(found, home, _openclaw_job)
    _leave(
        found,
        home,
        workspace,
        {
            "TOOLS.md": "notes on OpenClaw's own tools",
            "BOOTSTRAP.md": "OpenClaw's first-run script",
            "openclaw.json": "settings and keys: set them in config.yaml",
            "agents": "conversation transcripts are not imported",
            "credentials": "keys and tokens are never imported",
        },
    )
    return found


def read_nanobot(home: Path) -> Found:
    found = Found("nanobot")
    workspace = _workspace(home)
    _texts(
        found,
        home,
        workspace,
        {
            "AGENTS.md": "AGENTS.md",
            "SOUL.md": "AGENTS.md",
            "USER.md": "USER.md",
            "HEARTBEAT.md": "HEARTBEAT.md",
            "memory/MEMORY.md": "MEMORY.md",
        },
    )
    _notes(found, home, workspace / "memory", skip=("MEMORY.md",))
    _skills(found, workspace / "skills")
    _jobs(found, home, _nanobot_job)
    _leave(
        found,
        home,
        workspace,
        {
            "TOOLS.md": "notes on nanobot's own tools",
            "config.json": "settings and keys: set them in config.yaml",
            "sessions": "conversation transcripts are not imported",
        },
    )
    return found


def read_hermes(home: Path) -> Found:
    found = Found("Hermes")
    _texts(found, home, home, {"SOUL.md": "AGENTS.md"})
    for name, target in (("MEMORY.md", "MEMORY.md"), ("USER.md", "USER.md")):
        path = home / "memories" / name
        if path.is_file():
            text = _hermes_entries(path.read_text(encoding="utf-8"))
            found.texts.append(Text(target, _relative(path, home), text))
    _skills(found, home / "skills")
    _jobs(found, home, _hermes_job)
    _leave(
        found,
        home,
        home,
        {
            "config.yaml": "settings: set them in CountBot's config.yaml",
            ".env": "keys and tokens are never imported",
            "sessions": "conversation transcripts are not imported",
            "state.db": "conversation transcripts are not imported",
        },
    )
    return found


READERS: dict[str, Callable[[Path], Found]] = {
    "openclaw": read_openclaw,
    "hermes": read_hermes,
    "nanobot": read_nanobot,
}


def _workspace(home: Path) -> Path:
    return home / "workspace" if (home / "workspace").is_dir() else home


def _relative(path: Path, home: Path) -> str:
    return path.relative_to(home).as_posix()


def _texts(found: Found, home: Path, workspace: Path, names: dict[str, Target]) -> None:
    for name, target in names.items():
        path = workspace / name
        if path.is_file() and not path.is_symlink():
            text = path.read_text(encoding="utf-8", errors="replace").strip()
            if text:
                found.texts.append(Text(target, _relative(path, home), text))


def _notes(found: Found, home: Path, folder: Path, skip: tuple[str, ...]) -> None:
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.md")):
        if path.name in skip or not path.is_file() or path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8", errors="replace").strip()
        if text:
            found.notes.append(Note(path.stem, _relative(path, home), text))


def _skills(found: Found, folder: Path) -> None:
    if folder.is_dir():
        found.skills.extend(sorted(path.parent for path in folder.rglob("SKILL.md")))


def _leave(found: Found, home: Path, workspace: Path, reasons: dict[str, str]) -> None:
    for name, reason in reasons.items():
        for base in {home, workspace}:
            if (base / name).exists():
                found.left.append(f"{_relative(base / name, home)}: {reason}")


def _jobs(
    found: Found, home: Path, read: Callable[[dict[str, Any], str], ImportedJob | str]
) -> None:
    path = home / "cron" / "jobs.json"
    if not path.is_file():
        return
    origin = _relative(path, home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        found.left.append(f"{origin}: not readable JSON ({exc})")
        return
    jobs = data.get("jobs") if isinstance(data, dict) else data
    for raw in jobs if isinstance(jobs, list) else []:
        name = str(raw.get("name") or raw.get("id") or "job") if isinstance(raw, dict) else "?"
        try:
            job = read(raw, f"{origin} ({name})") if isinstance(raw, dict) else "not an object"
        except (KeyError, TypeError, ValueError) as exc:
            job = f"not understood ({exc})"
        if isinstance(job, str):
            found.left.append(f"{origin}: job {name!r}: {job}")
        else:
            found.jobs.append(job)


def _openclaw_job(raw: dict[str, Any], origin: str) -> ImportedJob | str:
    payload = raw.get("payload") or {}
    if payload.get("kind") == "systemEvent":
        return "a system event for OpenClaw's main session, not a prompt"
    delivery = raw.get("delivery") or {}
    channel, to = (
        delivery.get("channel") or payload.get("channel"),
        delivery.get("to") or payload.get("to"),
    )
    wanted = delivery.get("mode") == "announce" or payload.get("deliver")
    return _job(raw, raw["schedule"], payload["message"], _delivery(channel, to, wanted), origin)


def _nanobot_job(raw: dict[str, Any], origin: str) -> ImportedJob | str:
    payload = raw.get("payload") or {}
    delivery = _delivery(payload.get("channel"), payload.get("to"), payload.get("deliver"))
    return _job(raw, raw["schedule"], payload["message"], delivery, origin)


def _job(
    raw: dict[str, Any], schedule: dict[str, Any], prompt: str, delivery: str, origin: str
) -> ImportedJob | str:
    """A job from the schedule shape OpenClaw and nanobot share (camelCase or snake_case)."""
    kind = schedule["kind"]
    tz = schedule.get("tz")
    if kind == "cron":
        value = str(schedule["expr"])
    elif kind == "every":
        every_ms = schedule.get("everyMs", schedule.get("every_ms"))
        value = str(max(1, int(every_ms) // 1000))
    elif kind == "at":
        at = schedule.get("at") or schedule.get("atMs") or schedule.get("at_ms")
        value = (
            at if isinstance(at, str) else datetime.fromtimestamp(int(at) / 1000, UTC).isoformat()
        )
    else:
        return f"its schedule kind {kind!r} is unknown"
    if not str(prompt).strip():
        return "it has no prompt"
    return ImportedJob(
        str(raw.get("name") or raw["id"]),
        kind,
        value,
        tz,
        str(prompt),
        delivery,
        bool(raw.get("enabled", True)),
        origin,
    )


def _hermes_job(raw: dict[str, Any], origin: str) -> ImportedJob | str:
    schedule = raw["schedule"]
    kind = schedule["kind"]
    if kind == "cron":
        mapped, value = "cron", str(schedule["expr"])
    elif kind == "interval":
        mapped, value = "every", str(int(schedule["minutes"]) * 60)
    elif kind == "once":
        mapped, value = "at", str(schedule["run_at"])
    else:
        return f"its schedule kind {kind!r} is unknown"
    deliver = str(raw.get("deliver") or "local")
    if deliver == "origin":
        where = raw.get("origin") or {}
        delivery = _delivery(where.get("platform"), where.get("chat_id"), True)
    elif deliver == "local":
        delivery = "web"
    else:
        channel, _, chat = deliver.partition(":")
        delivery = _delivery(channel, chat or None, True)
    return ImportedJob(
        str(raw.get("name") or raw["id"]),
        mapped,
        value,
        None,
        str(raw["prompt"]),
        delivery,
        bool(raw.get("enabled", True)),
        origin,
    )


def _delivery(channel: Any, to: Any, wanted: Any) -> str:
    """Where the answers go here: the same chat when CountBot has that channel, else the web UI."""
    if not wanted:
        return "web"
    if isinstance(channel, str) and channel in _CHANNELS and to:
        return f"{channel}:{to}"
    return "web"


def _hermes_entries(text: str) -> str:
    """Hermes' `§`-separated entries as a Markdown list."""
    entries = [entry.strip() for entry in text.replace("\r\n", "\n").split(_HERMES_ENTRY)]
    return "\n".join("- " + entry.replace("\n", "\n  ") for entry in entries if entry)
