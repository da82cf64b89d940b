"""Markdown with a YAML frontmatter block between `---` lines: SKILL.md and persona files."""

from __future__ import annotations

from typing import Any

import yaml

from countbot.text import bounded_yaml


class FrontmatterError(ValueError):
    """The frontmatter block is unterminated, not YAML, or not a mapping."""


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(metadata, body); text without a leading `---` line has empty metadata."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text.strip()
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            header = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            break
    else:
        raise FrontmatterError("the frontmatter block has no closing '---' line")
    try:
        data = bounded_yaml.load(header)
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"invalid YAML in frontmatter: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontmatterError("the frontmatter is not a mapping of keys to values")
    return data, body.strip()
