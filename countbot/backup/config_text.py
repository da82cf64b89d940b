"""The config file as a backup keeps it: secrets taken out unless asked for, and paths that
point into the restored instance.

Edits go through the YAML positions (`config/yaml_text.py`), so the owner's comments survive;
a value that cannot be replaced in place makes the file rewritten from its data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from countbot.config import yaml_text
from countbot.config.fields import Loc, dotted, is_secret
from countbot.config.settings import McpServerSettings
from countbot.config.structs import secret_fields

# Paths a restored instance must not take from the old machine: its own folders instead.
_RESTORED_PATHS: dict[str, str] = {"data_dir": "data", "workspace": "data/workspace"}


def without_secrets(text: str) -> tuple[str, list[str]]:
    """`text` with every secret value or `${secret:…}` reference emptied, and their keys.

    `${VAR}` references stay: they name the environment, not a secret. The restored instance
    starts without the keys; they are typed again on the settings page.
    """
    document = yaml_text.parse(text)
    changes: list[tuple[Loc, Any]] = []
    for loc, value in _secret_values(document.data, ()):
        if isinstance(value, str) and value and not _only_environment(value):
            changes.append((loc, None if len(loc) < 5 or loc[0] != "mcp" else ""))
    return _edited(text, document, changes), [dotted(loc) for loc, _ in changes]


def restored(text: str, parts: set[str]) -> str:
    """`text` with its folders pointed at a restored instance's (`parts`: the archive's parts,
    so `skills_dir` follows a custom skills folder that was archived)."""
    document = yaml_text.parse(text)
    data = document.data if isinstance(document.data, dict) else {}
    wanted = dict(_RESTORED_PATHS)
    wanted.update({f"{part}_dir": part for part in ("skills", "personas") if part in parts})
    # An absent data_dir or workspace already means the restored instance's own folders.
    changes: list[tuple[Loc, Any]] = [
        ((key,), value)
        for key, value in wanted.items()
        if data.get(key, _RESTORED_PATHS.get(key)) != value
    ]
    return _edited(text, document, changes)


def _edited(text: str, document: yaml_text.YamlDocument, changes: list[tuple[Loc, Any]]) -> str:
    if not changes:
        return text
    data = _applied(document.data if isinstance(document.data, dict) else {}, changes)
    edited = yaml_text.replace_values(text, document.root, changes)
    if edited is None or yaml_text.parse(edited).data != data:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    return edited


def _applied(data: dict[str, Any], changes: list[tuple[Loc, Any]]) -> dict[str, Any]:
    merged = yaml.safe_load(yaml.safe_dump(data))  # a deep copy of plain YAML data
    for loc, value in changes:
        section = merged
        for part in loc[:-1]:
            section = section.setdefault(part, {})
        section[loc[-1]] = value
    return merged


def _secret_values(data: Any, loc: Loc) -> Iterator[tuple[Loc, Any]]:
    """Every secret leaf in the raw config data, with its key path."""
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        here = (*loc, key)
        if _is_secret_map(here) and isinstance(value, dict):
            yield from (((*here, name), item) for name, item in value.items())
        elif is_secret(here) and not isinstance(value, dict):
            yield here, value
        else:
            yield from _secret_values(value, here)


def _is_secret_map(loc: Loc) -> bool:
    """An MCP server's `env` or `headers`: every value in it is a secret."""
    return (
        len(loc) == 4
        and loc[:2] == ("mcp", "servers")
        and loc[3] in secret_fields(McpServerSettings)
    )


def _only_environment(value: str) -> bool:
    """A value that is one `${VAR}` reference: the secret lives in the environment."""
    return value.startswith("${") and value.endswith("}") and not value.startswith("${secret:")
