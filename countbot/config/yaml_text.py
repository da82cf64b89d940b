"""YAML text with its positions: parse with line numbers, find duplicate keys, edit in place.

PyYAML's node tree remembers where every key and value sits in the text. That is enough to point
an error at its line and to change a value without rewriting (and losing the comments of) the
rest of the file, which is all the config layer needs; no round-trip YAML library required.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from countbot.config.fields import Loc
from countbot.text.bounded_yaml import BoundedLoader, construct

_COMMENT_AFTER = re.compile(r"( +)#")


@dataclass(frozen=True)
class Duplicate:
    """A key written twice in one mapping; YAML would silently keep the later value."""

    loc: Loc
    line: int
    first_line: int


@dataclass(frozen=True)
class YamlDocument:
    """The parsed data together with the node tree it came from (None for an empty text)."""

    data: Any
    root: yaml.Node | None
    duplicates: list[Duplicate]


def parse(text: str) -> YamlDocument:
    """Parse one YAML document; raises `yaml.YAMLError` (with `problem_mark`) on bad syntax.

    Aliases, nesting and numbers are bounded (`countbot.text.bounded_yaml`): a hostile file fails as
    a syntax error instead of taking minutes and gigabytes.
    """
    loader = BoundedLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return YamlDocument(None, None, [])
        # Merge keys (`<<`) are flattened into the tree during construction: look before that.
        duplicates = list(_duplicates(root, ()))
        return YamlDocument(construct(loader, root), root, duplicates)
    finally:
        loader.dispose()


def line_of(root: yaml.Node | None, loc: Loc) -> int | None:
    """The 1-based line of the deepest part of `loc` present in the text, if any."""
    pairs = _pairs_along(root, loc)
    if not pairs:
        return None
    key_node, node = pairs[-1]
    return (key_node or node).start_mark.line + 1


def replace_values(text: str, root: yaml.Node | None, changes: list[tuple[Loc, Any]]) -> str | None:
    """`text` with each value at `loc` replaced in place, or None if some change cannot be.

    Only values already written as plain or flow nodes are replaced; a missing key, a section or
    a block scalar (`|`, `>`) needs a rewrite. The caller re-parses the result to be sure.
    """
    edits: list[tuple[int, int, str]] = []
    for loc, value in changes:
        pairs = _pairs_along(root, loc)
        if not loc or len(pairs) < len(loc):
            return None
        node = pairs[-1][1]
        replaceable = isinstance(node, yaml.ScalarNode) and node.style not in ("|", ">")
        replaceable |= isinstance(node, yaml.SequenceNode) and bool(node.flow_style)
        if not replaceable:
            return None
        start, end = node.start_mark.index, node.end_mark.index
        rendered = inline(value)
        # An empty value (`api_key:`) ends right at the colon.
        if start > 0 and text[start - 1] == ":":
            rendered = " " + rendered
        # Keep a trailing comment in its column where the new value leaves room.
        comment = _COMMENT_AFTER.match(text, end)
        if comment:
            end = comment.end(1)
            rendered += " " * max(1, end - start - len(rendered))
        edits.append((start, end, rendered))
    for start, end, rendered in sorted(edits, reverse=True):
        text = text[:start] + rendered + text[end:]
    return text


def inline(value: Any) -> str:
    """`value` as YAML that fits on the rest of one line."""
    rendered = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=math.inf)
    rendered = rendered.removesuffix("\n").removesuffix("\n...")
    # JSON is valid flow YAML and keeps line breaks as escapes instead of folding lines.
    return json.dumps(value, ensure_ascii=False) if "\n" in rendered else rendered


def _pairs_along(root: yaml.Node | None, loc: Loc) -> list[tuple[yaml.Node | None, yaml.Node]]:
    """The (key node, value node) pairs along `loc`, as far as the text has them."""
    pairs: list[tuple[yaml.Node | None, yaml.Node]] = []
    node = root
    for part in loc:
        found = _child(node, part) if node is not None else None
        if found is None:
            break
        pairs.append(found)
        node = found[1]
    return pairs


def _child(node: yaml.Node, part: str | int) -> tuple[yaml.Node | None, yaml.Node] | None:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        # The last of duplicated keys is the one YAML keeps.
        for key_node, value_node in reversed(node.value):
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == part:
                return key_node, value_node
    if (
        isinstance(node, yaml.SequenceNode)
        and isinstance(part, int)
        and 0 <= part < len(node.value)
    ):
        return None, node.value[part]
    return None


def _duplicates(node: yaml.Node, loc: Loc) -> Iterator[Duplicate]:
    if isinstance(node, yaml.MappingNode):
        first_lines: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            line = key_node.start_mark.line + 1
            if key_node.value in first_lines:
                yield Duplicate((*loc, key_node.value), line, first_lines[key_node.value])
            first_lines.setdefault(key_node.value, line)
            yield from _duplicates(value_node, (*loc, key_node.value))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _duplicates(item, (*loc, index))
