"""`${VAR}` and `${VAR:-default}` in string values, substituted after YAML parsing.

Substituting after parsing means a value never changes the YAML structure or its quoting: an API
key full of colons and quotes stays one string. `$${VAR}` is a literal `${VAR}`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from countbot.config.fields import Loc

_REFERENCE = re.compile(r"(\$?)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class MissingVariable:
    """A `${VAR}` without default whose variable is not set; the reference stays in the text."""

    loc: Loc
    name: str


def interpolate(data: Any, env: Mapping[str, str]) -> tuple[Any, list[MissingVariable]]:
    """A copy of `data` with references in its strings replaced, and the ones that could not be.

    Like the shell, `${VAR:-default}` uses the default when VAR is unset or empty, and `${VAR}`
    keeps an empty value as empty.
    """
    missing: list[MissingVariable] = []

    def substitute(text: str, loc: Loc) -> str:
        def replace(match: re.Match[str]) -> str:
            escaped, name, default = match.groups()
            if escaped:
                return match.group(0)[1:]
            if default is not None:
                return env.get(name) or default
            if name in env:
                return env[name]
            missing.append(MissingVariable(loc, name))
            return match.group(0)

        return _REFERENCE.sub(replace, text)

    def walk(value: Any, loc: Loc) -> Any:
        if isinstance(value, dict):
            return {key: walk(item, (*loc, key)) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item, (*loc, index)) for index, item in enumerate(value)]
        if isinstance(value, str):
            return substitute(value, loc)
        return value

    return walk(data, ()), missing
