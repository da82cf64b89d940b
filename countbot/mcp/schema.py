"""Names and JSON schemas of MCP tools made acceptable to every model provider.

Providers accept function names of `[A-Za-z0-9_-]{1,64}` and parameters that are an object
schema; MCP servers promise neither. A schema that cannot be made valid means the tool is skipped
with a reason the status pages show, never a failed model request.
"""

from __future__ import annotations

import copy
import re
from typing import Any

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64
SEPARATOR = "__"


def tool_name(server: str, tool: str) -> str:
    """`<server>__<tool>`, with characters providers reject replaced by `_`."""
    return _NAME_CHARS.sub("_", f"{server}{SEPARATOR}{tool}")


def repaired_schema(schema: Any) -> tuple[dict[str, Any] | None, str]:
    """The schema a provider will accept, or None and why the tool must be skipped."""
    if not isinstance(schema, dict):
        return None, "its input schema is not a JSON object"
    fixed = copy.deepcopy(schema)
    if fixed.get("type", "object") != "object":
        return None, f"its input schema has type {fixed.get('type')!r}, not 'object'"
    fixed["type"] = "object"
    if not isinstance(fixed.get("properties"), dict):
        fixed["properties"] = {}
    required = fixed.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(name, str) for name in required)
    ):
        del fixed["required"]
    # Here, not at the top: an idle daemon, and one without MCP servers, never loads jsonschema.
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(fixed).check_schema(fixed)
    except SchemaError as err:
        return None, f"its input schema is invalid: {err.message}"
    return fixed, ""
