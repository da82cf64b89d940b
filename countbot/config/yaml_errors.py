"""YAML syntax errors told in plain words, with the line they are on.

PyYAML says what its parser expected ("mapping values are not allowed here", "expected <block
end>, but found '-'"); a user editing a config file needs to know what to change. Known problems
get a sentence and a hint; others keep the parser's words. The line is shown with a caret.
"""

from __future__ import annotations

import re

import yaml

_NO_COLON = "could not find expected ':'"
# (a pattern of PyYAML's `problem`, what it means for someone editing the file)
_EXPLANATIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), words)
    for pattern, words in (
        (
            r"^mapping values are not allowed",
            "a `key: value` where none can start: check that this line is indented like the "
            "lines of its section, and put quotes around a value that contains ': '",
        ),
        (
            r"character '\\t' that cannot start",
            "a tab: YAML indents with spaces only; replace the tab with spaces",
        ),
        (
            r"character '(?P<c>[@`%|>])' that cannot start",
            "a value that starts with {c}: put the whole value in quotes",
        ),
        (
            r"^found unexpected end of stream",
            "a quote that is never closed: end the value with the same quote it starts with",
        ),
        (
            r"^expected ',' or '(?P<c>[\]}])', but got",
            "a list or mapping opened with a bracket is never closed: add {c}",
        ),
        (
            r"^expected <block end>, but found",
            "this line does not line up with the lines above it: a list item (`- ...`) and a "
            "`key: value` cannot be siblings, and siblings need the same indentation",
        ),
        (
            r"^could not find expected ':'",
            "a line that is not `key: value`: add the colon, or quote the text",
        ),
        (
            r"^found undefined alias",
            "a value starting with * (YAML's reference mark): put the value in quotes",
        ),
        (
            r"^could not determine a constructor for the tag",
            "a value starting with ! (YAML's type tag): put the value in quotes",
        ),
    )
)


def explain_yaml_error(err: yaml.YAMLError, text: str, source: str) -> str:
    """One message for a YAML syntax error in `text` (read from `source`)."""
    mark = getattr(err, "problem_mark", None)
    problem = str(getattr(err, "problem", None) or err)
    if mark is None:
        return f"YAML syntax error in {source}: {_words_for(problem)}"
    index, column = _faulty_line(err, text, problem)
    if index != mark.line:  # the line above lacks its colon, whatever PyYAML called it
        problem = _NO_COLON
    words = _words_for(problem)
    shown = _line_with_caret(text, index, column)
    place = f"line {index + 1}, column {column + 1}"
    return f"YAML syntax error in {source} at {place}: {words}\n{shown}"


def _faulty_line(err: yaml.YAMLError, text: str, problem: str) -> tuple[int, int]:
    """Where the mistake is, 0-based: PyYAML's mark is often the line after a missing colon.

    "could not find expected ':'" marks where it gave up and keeps the line the key started on
    as its context; "mapping values are not allowed" after a line without a colon (`name foo`
    above `key: x`) means that line ran on into this one as one text.
    """
    mark = err.problem_mark  # type: ignore[attr-defined]
    if problem.startswith(_NO_COLON):
        start = getattr(err, "context_mark", None)
        if start is not None:
            return start.line, start.column
    if problem.startswith("mapping values are not allowed"):
        lines = text.splitlines()
        above = mark.line - 1
        while above >= 0 and lines[above].strip() in ("", "#"):
            above -= 1
        here = lines[mark.line] if mark.line < len(lines) else ""
        if above >= 0 and ":" not in here[: mark.column] and _runs_on(lines[above], here):
            prev = lines[above]
            return above, len(prev) - len(prev.lstrip())
    return mark.line, mark.column


def _runs_on(above: str, here: str) -> bool:
    """Whether `above` is a plain text that YAML reads on into `here` (no colon, no list dash,
    not a comment, indented at least as deep)."""
    bare = above.strip()
    indent = len(above) - len(above.lstrip())
    deeper = indent >= len(here) - len(here.lstrip())
    return bool(bare) and ":" not in bare and not bare.startswith(("-", "#")) and deeper


def _words_for(problem: str) -> str:
    for pattern, words in _EXPLANATIONS:
        found = pattern.search(problem)
        if found:
            return words.format(**found.groupdict())
    return f"the YAML parser says: {problem}"


def _line_with_caret(text: str, index: int, column: int) -> str:
    lines = text.splitlines()
    if not 0 <= index < len(lines):
        return ""
    line = lines[index][:200].replace("\t", " ")
    number = f"{index + 1} | "
    return f"  {number}{line}\n  {' ' * len(number)}{' ' * min(column, len(line))}^"
