"""A secret setting (an API key, a token): its value is read on purpose, never shown by accident."""

from __future__ import annotations

_HIDDEN = "**********"


class SecretStr:
    """A secret value whose `repr` and `str` never show it; `get_secret_value()` reads it.

    Not a `str` subclass on purpose: a `str` would leak through f-strings, `json.dumps` and
    concatenation. Equal when the values are equal, so a changed key counts as a change.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"SecretStr('{self}')"

    def __str__(self) -> str:
        return _HIDDEN if self._value else ""

    def __len__(self) -> int:
        return len(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretStr) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)
