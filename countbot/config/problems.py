"""Pydantic's validation errors rephrased for someone editing `config.yaml`.

Each problem names the key path as written in the file (`model.temperature`), says what is
allowed and shows what was found, except for secrets, whose values are never echoed.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic_core import ErrorDetails

from countbot.config.fields import Loc, dotted, is_secret, key_paths, known_keys

_BOUNDS = {
    "less_than_equal": ("≤", "le"),
    "less_than": ("<", "lt"),
    "greater_than_equal": ("≥", "ge"),
    "greater_than": (">", "gt"),
}

# Pydantic's own wording for these is about Python types, not about the file.
_EXPECTED = {
    "model_type": "must be a section of `key: value` lines",
    "dict_type": "must be a section of `key: value` lines",
    "path_type": "must be a path",
    "string_type": "must be text",
    "list_type": "must be a list",
}


def explain(error: ErrorDetails) -> str:
    """One sentence about one validation error."""
    loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"unknown key `{dotted(loc)}`{_suggestion(loc)}"
    ctx = error.get("ctx") or {}
    if kind in _BOUNDS:
        symbol, bound = _BOUNDS[kind]
        expected = f"must be {symbol} {show(ctx[bound])}"
    elif kind == "literal_error":
        expected = f"must be one of {ctx['expected']}"
    elif kind in _EXPECTED:
        expected = _EXPECTED[kind]
    else:
        expected = error["msg"].removeprefix("Value error, ").removeprefix("Input ")
    got = "" if is_secret(loc) else f" (got {show(error['input'])})"
    return f"`{dotted(loc)}` {expected}{got}"


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


def _suggestion(loc: Loc) -> str:
    key = str(loc[-1])
    close = difflib.get_close_matches(key, known_keys(loc[:-1]), n=1)
    if close:
        return f" (did you mean `{close[0]}`?)"
    # A known key in the wrong section: `temperature` at the top instead of under `model`.
    elsewhere = [f"`{dotted(path)}`" for path in key_paths() if path[-1] == key]
    return f" (did you mean {' or '.join(elsewhere[:2])}?)" if elsewhere else ""
