"""Tool parameter schemas built from typed property specs.

Every tool's `parameters` is a JSON-schema object of named properties; these helpers write the
shared parts (the object wrapper, `required`, closing it to unknown arguments, the property
types) so a tool declares only its names, descriptions and bounds.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def _property(kind: str, description: str, bounds: dict[str, Any]) -> Schema:
    spec: Schema = {"type": kind, **bounds}
    if description:
        spec["description"] = description
    return spec


def text(description: str = "", **bounds: Any) -> Schema:
    """A string property; `bounds` are JSON-schema keywords (`minLength`, `format`, `enum`…)."""
    return _property("string", description, bounds)


def integer(description: str = "", **bounds: Any) -> Schema:
    """An integer property; `bounds` like `minimum`, `maximum`, `default`."""
    return _property("integer", description, bounds)


def texts(description: str = "", **bounds: Any) -> Schema:
    """An array of strings; `bounds` like `maxItems`."""
    return _property("array", description, {"items": {"type": "string"}, **bounds})


def choice(*values: str, description: str = "") -> Schema:
    """A string that must be one of `values`."""
    return text(description, enum=list(values))


def params(
    required: dict[str, Schema] | None = None,
    optional: dict[str, Schema] | None = None,
    *,
    closed: bool = True,
) -> Schema:
    """The parameters object: `required` properties first, then `optional` ones; `closed`
    refuses arguments the schema does not name."""
    schema: Schema = {"type": "object", "properties": {**(required or {}), **(optional or {})}}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema
