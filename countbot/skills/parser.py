"""Turns one SKILL.md into a `Skill`, accepting the frontmatter shapes other assistants use.

Requirements may sit in a top-level `requires:` block, in `metadata.requires`, or under a vendor
key (`metadata: {"openclaw"|"nanobot"|"clawdbot"|any other: {"requires": {"bins", "anyBins",
"env", "config"}, "os", "primaryEnv", "always", "install"}}`), so skills written for those
assistants work here unchanged. A file that cannot be parsed becomes
an unavailable skill carrying the error; it never stops the scan.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from countbot.skills.frontmatter import FrontmatterError, split_frontmatter
from countbot.skills.skill import Skill, SkillSource

VENDOR_KEYS = ("countbot", "openclaw", "nanobot", "clawdbot")
_OS_ALIASES = {"macos": "darwin", "mac": "darwin", "windows": "win32", "win": "win32"}


def parse_skill(path: Path, text: str, source: SkillSource) -> Skill:
    """The skill in `path` (a SKILL.md) given its text; availability is checked later."""
    try:
        meta, body = split_frontmatter(text)
    except FrontmatterError as exc:
        return broken_skill(path, source, str(exc))
    blocks = _blocks(meta)
    requires = [b["requires"] for b in blocks if isinstance(b.get("requires"), dict)]
    return Skill(
        name=str(meta.get("name") or path.parent.name).strip(),
        description=str(meta.get("description") or "").strip(),
        always=any(b.get("always") is True for b in blocks),
        path=path,
        body=body,
        source=source,
        requires_bins=_names(r.get("bins") for r in requires),
        # `primaryEnv` (openclaw) names the one key a skill runs on: it is required too.
        requires_env=_names(
            [*(r.get("env") for r in requires), *(b.get("primaryEnv") for b in blocks)]
        ),
        requires_any_bins=_names(r.get("anyBins") for r in requires),
        requires_config=_names(r.get("config") for r in requires),
        os=tuple(
            _OS_ALIASES.get(n.lower(), n.lower()) for n in _names(b.get("os") for b in blocks)
        ),
        model_invocable=not _flag(blocks, "disable-model-invocation", "disableModelInvocation"),
        user_invocable=_flag(blocks, "user-invocable", "userInvocable", default=True),
        install_hints=tuple(
            dict.fromkeys(_hint(i) for b in blocks for i in _list(b.get("install")))
        ),
    )


def broken_skill(path: Path, source: SkillSource, error: str) -> Skill:
    """A placeholder that lists the skill as unavailable, with why."""
    return Skill(
        name=path.parent.name,
        description="",
        always=False,
        path=path,
        body="",
        source=source,
        available=False,
        error=error,
    )


def _blocks(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The frontmatter itself, its `metadata`, and any vendor block inside `metadata`."""
    metadata = meta.get("metadata")
    if isinstance(metadata, str):
        # Some skills write metadata as a JSON string on one line.
        try:
            metadata = json.loads(metadata)
        except ValueError:
            metadata = None
    blocks = [meta]
    if isinstance(metadata, dict):
        blocks.append(metadata)
        # Known vendors first, then any other vendor's block, treated alike.
        keys = [*VENDOR_KEYS, *(k for k in metadata if k not in VENDOR_KEYS)]
        blocks.extend(metadata[k] for k in keys if isinstance(metadata.get(k), dict))
    return blocks


def _flag(blocks: list[dict[str, Any]], *keys: str, default: bool = False) -> bool:
    """The first of `keys` set to a boolean in any block (top level first)."""
    for block in blocks:
        for key in keys:
            if isinstance(block.get(key), bool):
                return bool(block[key])
    return default


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if value else []


def _hint(item: Any) -> str:
    """One install hint as text: its label, else `kind: package`, else the string itself."""
    if not isinstance(item, dict):
        return str(item)
    if item.get("label"):
        return str(item["label"])
    package = item.get("formula") or item.get("package") or item.get("module") or item.get("url")
    return f"{item.get('kind', 'install')}: {package or json.dumps(item, ensure_ascii=False)}"


def _names(values: Any) -> tuple[str, ...]:
    """Distinct names from a mix of lists, single strings and Nones, in first-seen order."""
    names: dict[str, None] = {}
    for value in values:
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        names.update((str(item).strip(), None) for item in items if str(item).strip())
    return tuple(names)
