"""What the `Settings` schema says about a key path: its section, its keys, whether it is secret.

Error messages, the loader and the secret masking all ask these questions, so they are answered
once here by walking the pydantic models instead of hard-coding key names.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from countbot.config.settings import Settings

Loc = tuple[str | int, ...]

# Fields the loader fills in; a file that sets them is wrong.
LOADER_ONLY = frozenset({"config_path"})


def dotted(loc: Loc) -> str:
    """`tools.exec.deny_patterns[0]`: a key path as a user would write it."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def section_at(loc: Loc) -> type[BaseModel] | None:
    """The settings section (model class) that `loc` names, or None if it names no section."""
    model: type[BaseModel] = Settings
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        section = _section_type(field) if field else None
        if section is None:
            return None
        model = section
    return model


def is_secret(loc: Loc) -> bool:
    """True if `loc` names a secret (an API key or token) that must never be shown."""
    parent = section_at(loc[:-1]) if loc else None
    field = parent.model_fields.get(loc[-1]) if parent and isinstance(loc[-1], str) else None
    return field is not None and SecretStr in (
        typing.get_args(field.annotation) or (field.annotation,)
    )


def known_keys(loc: Loc) -> list[str]:
    """The keys a user may write inside the section at `loc` (empty if it is no section)."""
    section = section_at(loc)
    return [name for name in section.model_fields if name not in LOADER_ONLY] if section else []


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


def _section_type(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None
