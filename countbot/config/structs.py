"""The settings' building blocks on msgspec: a strict base, validation that finds every problem
with its key path, and the settings as plain data.

msgspec instead of pydantic: the same checks (types, bounds, choices, patterns, unknown keys) for
a tenth of the import's memory, which an idle daemon and `countbot chat -m` would
otherwise carry (docs/cold_start.md). msgspec stops at the first error, so `validate` walks the
sections itself and converts one field at a time: a config file's every problem is reported at
once, each at its dotted key path, as before.
"""

from __future__ import annotations

import functools
import hashlib
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import msgspec

from countbot.config.secret import SecretStr

Loc = tuple[str | int, ...]
T = TypeVar("T", bound="Strict")

# msgspec's error text ends with where in the value it happened: " - at `$.key[0]`".
_WHERE = re.compile(r"^(?P<detail>.*) - at `\$(?P<path>.*)`$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


class Strict(msgspec.Struct, forbid_unknown_fields=True):
    """Base of every settings section: unknown keys are refused, and a secret given as plain
    text in code (`WebSettings(token="...")`) is wrapped at once, so it never shows."""

    # Values a field took in older versions, mapped to what they mean now (before the check).
    former_values: ClassVar[Mapping[str, Mapping[Any, Any]]] = {}

    def __post_init__(self) -> None:
        for name in secret_fields(type(self)):
            value = getattr(self, name)
            if isinstance(value, str):
                setattr(self, name, SecretStr(value))
            elif isinstance(value, dict):
                setattr(self, name, {k: _wrapped(v) for k, v in value.items()})


class FieldError(ValueError):
    """A cross-field or content check of a section that failed at one of its fields."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding: where (`loc`), what kind, msgspec's or the check's own words, and what was
    found there (never to be shown when `secret`)."""

    loc: Loc
    kind: Literal["unknown", "section", "type", "value"]
    detail: str = ""
    value: Any = None
    choices: tuple[Any, ...] = ()
    secret: bool = False
    known: tuple[str, ...] = ()


class Invalid(ValueError):
    """Data that does not fit the settings; `problems` holds every finding."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{_place(p.loc)}: {p.detail or p.kind}" for p in problems))
        self.problems = problems


def validate(cls: type[T], data: Any, *, strict: bool = False, loc: Loc = ()) -> T:
    """`data` (parsed YAML or JSON) as a `cls`, or `Invalid` with every problem found.

    `strict=False` reads a person's YAML leniently ("8080" from `${PORT}` is a port);
    `strict=True` is for JSON, whose types are exact. `loc` prefixes the reported key paths.
    """
    problems: list[Problem] = []
    value = _section(cls, data, loc, strict, problems)
    if problems or value is None:
        raise Invalid(problems)
    return value


def replaced(struct: T, **changes: Any) -> T:
    """A copy of `struct` with `changes`, checked like data from a file (raises `Invalid`)."""
    current = {name: getattr(struct, name) for name in struct.__struct_fields__}
    return validate(type(struct), {**current, **changes})


def to_data(struct: Strict) -> dict[str, Any]:
    """The settings as JSON-ready data; a secret reads `**********` ("" when empty)."""
    return typing.cast(dict[str, Any], msgspec.to_builtins(struct, enc_hook=_shown))


def fingerprint(struct: Strict) -> str:
    """A digest that changes whenever any value does, secrets included (a cache key that
    holds no secret)."""
    return hashlib.sha256(msgspec.json.encode(struct, enc_hook=_revealed)).hexdigest()


@functools.cache
def field_types(cls: type[Strict]) -> dict[str, Any]:
    """Each field's declared type, in declaration order."""
    return {field.name: field.type for field in msgspec.structs.fields(cls)}


def section_type(kind: Any) -> type[Strict] | None:
    """The section class a field's type names, or None for a value field."""
    return kind if isinstance(kind, type) and issubclass(kind, Strict) else None


def is_secret_type(kind: Any) -> bool:
    """True for `SecretStr`, `SecretStr | None` and `dict[str, SecretStr]` (MCP env, headers),
    described (`Annotated`) or not."""
    if typing.get_origin(kind) is Annotated:
        kind = typing.get_args(kind)[0]
    return kind is SecretStr or SecretStr in typing.get_args(kind)


@functools.cache
def choice_fields(cls: type[Strict]) -> dict[str, tuple[str, ...]]:
    """The fields of `cls` whose type is a `Literal` of strings, with their values (a form
    offers them as a list to choose from, not a box to type into)."""
    choices = {}
    for name, kind in field_types(cls).items():
        if typing.get_origin(kind) is Annotated:
            kind = typing.get_args(kind)[0]
        if typing.get_origin(kind) is typing.Literal:
            values = typing.get_args(kind)
            if all(isinstance(value, str) for value in values):
                choices[name] = values
    return choices


@functools.cache
def secret_fields(cls: type[Strict]) -> tuple[str, ...]:
    return tuple(name for name, kind in field_types(cls).items() if is_secret_type(kind))


def _place(loc: Loc) -> str:
    return ".".join(map(str, loc)) or "settings"


def _wrapped(value: Any) -> Any:
    return SecretStr(value) if isinstance(value, str) else value


def _section(cls: type[T], data: Any, loc: Loc, strict: bool, problems: list[Problem]) -> T | None:
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        problems.append(Problem(loc, "section", value=data))
        return None
    types = field_types(cls)
    found = len(problems)
    values: dict[str, Any] = {}
    for key, raw in data.items():
        here = (*loc, key)
        if not isinstance(key, str) or key not in types:
            problems.append(Problem(here, "unknown", known=tuple(types)))
            continue
        former = cls.former_values.get(key)
        if former and isinstance(raw, str):
            raw = former.get(raw, raw)
        values[key] = _field(types[key], raw, here, strict, problems)
    if len(problems) > found:
        return None
    try:
        return cls(**values)
    except FieldError as exc:
        field = exc.field
        problems.append(Problem((*loc, field), "value", str(exc), values.get(field)))
    except (ValueError, TypeError) as exc:
        problems.append(Problem(loc, "value", str(exc), data))
    return None


def _field(kind: Any, raw: Any, loc: Loc, strict: bool, problems: list[Problem]) -> Any:
    section = section_type(kind)
    if section is not None:
        return _section(section, raw, loc, strict, problems)
    if typing.get_origin(kind) is dict and section_type(typing.get_args(kind)[1]):
        if not isinstance(raw, Mapping):
            problems.append(Problem(loc, "section", value=raw))
            return None
        item = typing.get_args(kind)[1]
        names = [name for name in raw if not isinstance(name, str)]
        problems += [Problem((*loc, n), "value", "must be named with text", n) for n in names]
        return {
            name: _section(item, value, (*loc, name), strict, problems)
            for name, value in raw.items()
        }
    try:
        return msgspec.convert(raw, kind, strict=strict, dec_hook=_decoded)
    except msgspec.ValidationError as exc:
        problems.append(_type_problem(str(exc), kind, raw, loc))
        return None


def _type_problem(message: str, kind: Any, raw: Any, loc: Loc) -> Problem:
    """msgspec's message, placed at the key path it names inside the value."""
    match = _WHERE.match(message)
    detail, path = (match["detail"], match["path"]) if match else (message, "")
    value = raw
    for name, index in _STEP.findall(path.split("[...]")[0]):
        step: str | int = name or int(index)
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            break
        loc = (*loc, step)
    choices = () if path else _literal_choices(kind)
    return Problem(loc, "type", detail, value, choices, secret=is_secret_type(kind))


def _literal_choices(kind: Any) -> tuple[Any, ...]:
    for arg in (kind, *typing.get_args(kind)):
        if typing.get_origin(arg) is Literal:
            return typing.get_args(arg)
    return ()


def _decoded(kind: type, value: Any) -> Any:
    """The types msgspec does not know: a secret from text, a path from text."""
    if kind is SecretStr:
        if isinstance(value, SecretStr | str):
            return _wrapped(value)
        raise TypeError("must be text")
    if kind is Path:
        if isinstance(value, str | Path):
            return Path(value)
        raise TypeError("must be a path")
    raise TypeError(f"cannot read a {kind.__name__}")


def _shown(value: Any) -> Any:
    return _encoded(value, str)


def _revealed(value: Any) -> Any:
    return _encoded(value, SecretStr.get_secret_value)


def _encoded(value: Any, secret: Callable[[SecretStr], str]) -> Any:
    if isinstance(value, SecretStr):
        return secret(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write a {type(value).__name__}")
