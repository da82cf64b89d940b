"""No function in countbot/ is longer than 60 lines (STYLE.md): a longer one is a prompt to split.

Counted from its `def` line to its last line, docstring and comments included, nested functions
counted in the function that holds them too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import countbot

MAX_LINES = 60
PACKAGE = Path(countbot.__file__).parent


def _too_long(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_LINES:
                where = path.relative_to(PACKAGE.parent)
                found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_60_lines() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 100  # the whole package was read, not an empty folder
    too_long = [entry for path in sources for entry in _too_long(path)]
    assert too_long == [], "split these functions:\n" + "\n".join(too_long)
