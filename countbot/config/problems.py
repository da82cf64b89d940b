"""Validation problems rephrased for someone editing `config.yaml`.

Each problem names the key path as written in the file (`model.temperature`), says what is
allowed and shows what was found, except for secrets, whose values are never echoed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from countbot.config.fields import LOADER_ONLY, Loc, dotted, key_paths
from countbot.config.structs import Invalid, Problem

_BOUNDS = {"<=": "≤", "<": "<", ">=": "≥", ">": ">"}
# msgspec's words are about JSON types, not about the file.
_TYPES = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "str": "text",
    "array": "a list",
    "object": "a section of `key: value` lines",
    "null": "empty",
}
_BOUND = re.compile(r"^Expected `\w+` (<=|<|>=|>) (\S+)$")
_PATTERN = re.compile(r"^Expected `str` matching regex (.+)$")
_TYPE = re.compile(r"^Expected `([^`]+)`, got `\w+`$")
_OTHER = {"Number out of range": "is out of range"}


def explain(problem: Problem) -> str:
    """One sentence about one problem."""
    where = dotted(problem.loc)
    if problem.kind == "unknown":
        return f"unknown key `{where}`{_suggestion(problem.loc, problem.known)}"
    if problem.kind == "section":
        return f"`{where}` must be a section of `key: value` lines (got {show(problem.value)})"
    expected = problem.detail if problem.kind == "value" else _expected(problem)
    got = "" if problem.secret else f" (got {show(problem.value)})"
    return f"`{where}` {expected}{got}"


def explained(error: Invalid) -> list[str]:
    """Every problem of `error`, one sentence each."""
    return [explain(problem) for problem in error.problems]


def _expected(problem: Problem) -> str:
    if problem.choices:
        return f"must be one of {_choices(problem.choices)}"
    detail = problem.detail
    if bound := _BOUND.match(detail):
        return f"must be {_BOUNDS[bound[1]]} {show(float(bound[2]))}"
    if pattern := _PATTERN.match(detail):
        return f"must match the pattern {pattern[1]}"
    if kind := _TYPE.match(detail):
        names = [_TYPES.get(name.strip(), name.strip()) for name in kind[1].split("|")]
        return f"must be {' or '.join(names)}"
    return _OTHER.get(detail, detail)


def _choices(choices: tuple[Any, ...]) -> str:
    shown = [repr(choice) for choice in choices]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def show(value: Any) -> str:
    """A value as the user wrote it in YAML, shortened."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return "a section"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(str(value), ensure_ascii=False)
    return text if len(text) <= 60 else text[:56] + '…"'


def _suggestion(loc: Loc, known: tuple[str, ...]) -> str:
    import difflib  # only for a config error's hint: a valid config never loads it

    key = str(loc[-1])
    close = difflib.get_close_matches(key, [k for k in known if k not in LOADER_ONLY], n=1)
    if close:
        return f" (did you mean `{close[0]}`?)"
    # A known key in the wrong section: `temperature` at the top instead of under `model`.
    elsewhere = [f"`{dotted(path)}`" for path in key_paths() if path[-1] == key]
    return f" (did you mean {' or '.join(elsewhere[:2])}?)" if elsewhere else ""
