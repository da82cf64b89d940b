"""YAML from files people edit or share (config.yaml, SKILL.md frontmatter), within bounds.

PyYAML's safe loader still expands aliases: nine nested anchors of nine aliases each ("billion
laughs") make 387 million nodes from a few hundred bytes, and every walk over the data takes
minutes and gigabytes. Deep nesting exhausts the recursion limit, and an integer with thousands
of digits raises a bare ValueError. This loader refuses all of those with a `yaml.YAMLError`
that points at the place in the text, so callers report it like any syntax error.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_DOCUMENT_CHARS = 1 << 20
MAX_DEPTH = 40
# Nodes after aliases are expanded: a real config has a few hundred.
MAX_EXPANDED_NODES = 50_000
MAX_INT_DIGITS = 100


class BoundedLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` with limits on nesting depth, alias expansion and integer length."""

    def __init__(self, stream: str) -> None:
        if len(stream) > MAX_DOCUMENT_CHARS:
            raise yaml.YAMLError(
                f"the document is {len(stream):,} characters long; at most "
                f"{MAX_DOCUMENT_CHARS:,} are read"
            )
        _check_flow_depth(stream)
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise ConstructorError(
                    None,
                    None,
                    f"values are nested more than {MAX_DEPTH} levels deep",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1

    def get_single_node(self) -> Node | None:
        root = super().get_single_node()
        if root is not None:
            _check_expansion(root)
        return root

    def construct_yaml_int(self, node: ScalarNode) -> int:
        digits = sum(ch.isdigit() for ch in node.value)
        if digits > MAX_INT_DIGITS:
            raise ConstructorError(
                None, None, f"a number with {digits} digits is too long", node.start_mark
            )
        return super().construct_yaml_int(node)  # type: ignore[no-any-return]


BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)


def load(text: str) -> Any:
    """The data of one YAML document; raises `yaml.YAMLError` on bad syntax or past a limit."""
    loader = BoundedLoader(text)
    try:
        root = loader.get_single_node()
        return None if root is None else construct(loader, root)
    finally:
        loader.dispose()


def construct(loader: BoundedLoader, root: Node) -> Any:
    """The data of the composed `root`. A value refused while it is built (a number too long)
    is named by its key path, so the message says which setting it is, not only the line."""
    try:
        return loader.construct_document(root)
    except ConstructorError as exc:
        path = _path_to(root, exc.problem_mark) if exc.problem_mark else ""
        if path and exc.problem:
            exc.problem = f"`{path}`: {exc.problem}"
        raise


def _path_to(root: Node, mark: Any) -> str:
    """The dotted key path (`model.max_tokens`, `fallbacks[2]`) of the value at `mark`."""
    parts: list[str] = []
    node: Node | None = root
    seen: set[int] = set()  # aliases share nodes; each is entered once
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        inner = None
        for label, child in _labelled_children(node):
            start, end = child.start_mark.index, child.end_mark.index
            if start == mark.index or start < mark.index < end:
                parts.append(label)
                inner = child
                break
        node = inner
    return "".join(parts).lstrip(".")


def _labelled_children(node: Node) -> list[tuple[str, Node]]:
    if isinstance(node, SequenceNode):
        return [(f"[{index}]", child) for index, child in enumerate(node.value)]
    if isinstance(node, MappingNode):
        return [(f".{key.value}", value) for key, value in node.value]
    return []


def _check_flow_depth(text: str) -> None:
    """Refuse `[[[[...` before PyYAML's scanner sees it: its look-ahead for simple keys costs
    time quadratic in the flow depth (half a second for a few thousand brackets). One pass;
    brackets inside quotes on a line do not count."""
    depth = 0
    quote = ""
    for line_number, line in enumerate(text.split("\n"), 1):
        quote = ""
        for ch in line:
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise yaml.YAMLError(
                        f"values are nested more than {MAX_DEPTH} levels deep (line {line_number})"
                    )
            elif ch in "]}":
                depth = max(0, depth - 1)


def _check_expansion(root: Node) -> None:
    """Refuse a tree whose aliases expand past `MAX_EXPANDED_NODES` (or refer to themselves).

    Sizes are memoized per node, so this is linear in the text even when the expansion is not.
    """
    sizes: dict[int, int] = {}
    # Iterative post-order walk: (node, children done?)
    stack: list[tuple[Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > MAX_EXPANDED_NODES:
                raise ConstructorError(
                    None,
                    None,
                    f"aliases expand to more than {MAX_EXPANDED_NODES:,} values",
                    node.start_mark,
                )
            sizes[key] = size
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise ConstructorError(None, None, "an alias refers to itself", node.start_mark)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []
