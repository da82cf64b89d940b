"""`${VAR}`, `${VAR:-default}` and `${secret:NAME}` in string values, substituted after parsing.

Substituting after parsing means a value never changes the YAML structure or its quoting: an API
key full of colons and quotes stays one string. `$${VAR}` is a literal `${VAR}`; `literal()`
writes any text that way, for values that must never be expanded (what the settings page saves).
`${secret:NAME}` takes NAME's value from the secrets file (`secrets_file.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from countbot.config.fields import Loc

_REFERENCE = re.compile(
    r"(\$?)\$\{(?:secret:([A-Za-z0-9_.-]+)|([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?)\}"
)


@dataclass(frozen=True)
class MissingVariable:
    """A reference that could not be resolved; it stays in the text.

    A `${VAR}` without default whose variable is not set, or (`secret=True`) a `${secret:NAME}`
    the secrets file does not hold.
    """

    loc: Loc
    name: str
    secret: bool = False


def literal(value: Any) -> Any:
    """`value` with every reference in its strings escaped, so loading gives back `value`.

    An escaped reference (`$${X}`) gets one more `$` too: loading takes one away.
    """
    if isinstance(value, str):
        return _REFERENCE.sub(lambda match: "$" + match.group(0), value)
    if isinstance(value, list):
        return [literal(item) for item in value]
    if isinstance(value, dict):
        return {key: literal(item) for key, item in value.items()}
    return value


def interpolate(
    data: Any, env: Mapping[str, str], secrets: Mapping[str, str] | None = None
) -> tuple[Any, list[MissingVariable]]:
    """A copy of `data` with references in its strings replaced, and the ones that could not be.

    Like the shell, `${VAR:-default}` uses the default when VAR is unset or empty, and `${VAR}`
    keeps an empty value as empty.
    """
    missing: list[MissingVariable] = []
    secrets = secrets or {}

    def substitute(text: str, loc: Loc) -> str:
        def replace(match: re.Match[str]) -> str:
            escaped, secret, name, default = match.groups()
            if escaped:
                return match.group(0)[1:]
            if secret is not None:
                if secret in secrets:
                    return secrets[secret]
                missing.append(MissingVariable(loc, secret, secret=True))
                return match.group(0)
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
