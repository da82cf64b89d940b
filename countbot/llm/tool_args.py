"""Tool-call arguments as the model wrote them, parsed, repaired where possible, or explained.

Models emit trailing commas, single quotes and missing braces; repairing beats a round trip. What
cannot be repaired is kept raw with an error the model can read and correct.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from countbot.llm.types import ToolCall

# json-repair is a Python-level parser, slow on long or deeply nested text (seconds for 20 KB of
# "{"): beyond these the raw text and the error go back to the model instead.
MAX_REPAIR_CHARS = 64 * 1024
MAX_REPAIR_DEPTH = 64


def parse_tool_call(call_id: str, name: str, arguments_raw: str) -> ToolCall:
    """A `ToolCall` with `arguments` parsed (or repaired), or None with a `parse_error`."""
    arguments, error = parse_arguments(arguments_raw)
    return ToolCall(call_id, name, arguments_raw, arguments, error)


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """(arguments, None) on success, (None, what is wrong) otherwise. Empty means no arguments."""
    if not raw.strip():
        return {}, None
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        repaired = _repair(raw) if _repairable(raw) else None
        if isinstance(repaired, dict):
            return repaired, None
        return None, (
            f"The arguments are not valid JSON ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno}). Call the tool again with the arguments as one JSON object."
        )
    except (RecursionError, ValueError) as exc:  # nesting past the limit, a 5000-digit number
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return None, f"The arguments could not be read ({detail}). Call the tool again."
    if not isinstance(parsed, dict):
        kind = type(parsed).__name__
        return None, f"The arguments must be a JSON object, not a {kind}. Call the tool again."
    return parsed, None


def _repair(raw: str) -> Any:
    """json-repair's best reading of `raw`. Imported here, on the first broken call: its import
    costs about 0.13 s that a one-shot `countbot chat -m` would otherwise pay for nothing."""
    import json_repair

    return json_repair.repair_json(raw, return_objects=True)


def _repairable(raw: str) -> bool:
    """Whether json-repair may try: short and shallow enough, and not cut off mid-call.

    Text that stops inside a string or before a value was cut off; repairing it would invent a
    value (write an empty or half file), so it is refused.
    """
    if len(raw) > MAX_REPAIR_CHARS:
        return False
    in_string = escaped = False
    last = ""
    depth = 0
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_REPAIR_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
        if not ch.isspace():
            last = ch
    return not in_string and last != ":"


def wire_arguments(call: ToolCall) -> str:
    """The arguments to send back to a provider: raw if it is a JSON object, else repaired.

    Some providers re-parse arguments in history and reject the whole request on broken JSON.
    This runs for every call in the history at every request, so a repair is never redone: the
    call's own parsed arguments serve when it has them (a fresh call), else the repair of a call
    read back from the store is remembered.
    """
    try:
        if isinstance(json.loads(call.arguments_raw), dict):
            return call.arguments_raw
    except (json.JSONDecodeError, RecursionError, ValueError):
        pass
    if call.arguments is not None:
        return json.dumps(call.arguments)
    return _repaired_for_wire(call.arguments_raw)


@functools.lru_cache(maxsize=32)
def _repaired_for_wire(raw: str) -> str:
    arguments, _ = parse_arguments(raw)
    return json.dumps(arguments or {})
