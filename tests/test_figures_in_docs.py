"""Measurements live in the bench docs (docs/<bench>.md), where a rerun updates them, not in code
comments and docstrings, where they go stale unseen (issue 39). Sizes of inputs and limits in KB
are words about the code; times and megabytes are measurements."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "countbot"
FIGURE = re.compile(r"\d ?(?:ms|µs|us|MB|GB)\b")


def _prose(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield node.body[0].lineno, docstring


def test_no_measured_figure_in_a_comment_or_docstring() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {match.group()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, text in _prose(path.read_text(encoding="utf-8"))
        for match in FIGURE.finditer(text)
    ]
    assert found == [], "move the figure to the bench's doc (docs/<bench>.md) and point there"
