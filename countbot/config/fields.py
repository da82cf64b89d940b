"""What the `Settings` schema says about a key path: its section, its keys, whether it is secret.

Error messages, the loader and the secret masking all ask these questions, so they are answered
once here by walking the settings' structs instead of hard-coding key names.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Annotated, Any

from countbot.config.settings import Settings
from countbot.config.structs import Loc, Strict, field_types, is_secret_type, section_type

# Fields the loader fills in; a file that sets them is wrong.
LOADER_ONLY = frozenset({"config_path"})


def dotted(loc: Loc) -> str:
    """`tools.exec.deny_patterns[0]`: a key path as a user would write it."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def section_at(loc: Loc) -> type[Strict] | None:
    """The settings section (struct class) that `loc` names, or None if it names no section.
    An entry of a named collection of sections (`mcp.servers.notes`) is a section too."""
    kind = _kind_at(loc)
    return section_type(kind) if kind is not None else None


def is_secret(loc: Loc) -> bool:
    """True if `loc` names a secret (an API key or token) that must never be shown: a secret
    field, or an entry of a field of secrets (an MCP server's `env`, its `headers`)."""
    if not loc:
        return False
    kind = _kind_at(loc)
    if kind is not None and is_secret_type(kind):
        return True
    holder = _kind_at(loc[:-1])
    return typing.get_origin(holder) is dict and is_secret_type(holder)


def _kind_at(loc: Loc) -> Any:
    """The declared type at `loc` (None where the schema names nothing): fields of sections,
    and the entries of `dict[str, Section]` fields by their key."""
    kind: Any = Settings
    for part in loc:
        section = section_type(kind)
        if section is not None and isinstance(part, str):
            kind = field_types(section).get(part)
        elif typing.get_origin(kind) is dict and isinstance(part, str):
            kind = typing.get_args(kind)[1]
        else:
            return None
        if kind is None:
            return None
        if typing.get_origin(kind) is Annotated:
            kind = typing.get_args(kind)[0]
    return kind


def known_keys(loc: Loc) -> list[str]:
    """The keys a user may write inside the section at `loc` (empty if it is no section)."""
    section = section_at(loc)
    return [name for name in field_types(section) if name not in LOADER_ONLY] if section else []


def key_paths(loc: Loc = ()) -> list[Loc]:
    """Every key path under `loc`, sections and leaves, in schema order."""
    paths: list[Loc] = []
    for name in known_keys(loc):
        paths.append((*loc, name))
        paths.extend(key_paths((*loc, name)))
    return paths


def drop_empty_sections(data: Mapping[Any, Any], loc: Loc = ()) -> dict[Any, Any]:
    """Treat a section left as `persona:` (its keys all commented out) as absent, not as null."""
    kept: dict[Any, Any] = {}
    for key, value in data.items():
        here = (*loc, key)
        if section_at(here) is not None:
            if value is None:
                continue
            if isinstance(value, Mapping):
                value = drop_empty_sections(value, here)
        kept[key] = value
    return kept
