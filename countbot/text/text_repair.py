"""Making untrusted text safe to keep: valid Unicode only, JSON without surprises.

Every boundary (WebSocket in, REST in, channel in, store) passes text through `repair_text`
(`llm/unicode_repair.py`, where the model stream uses it too): a valid surrogate pair becomes its
character, a lone surrogate becomes U+FFFD. JSON from outside is parsed here, strings repaired.
"""

from __future__ import annotations

import json
from typing import Any

from countbot.llm.unicode_repair import repair_text


class JsonTextError(ValueError):
    """Text that is not a JSON document we accept; the message says why, for the client."""


def repair_deep(value: Any) -> Any:
    """`value` (parsed JSON: dicts, lists, strings, ...) with every string repaired, keys too."""
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        return {repair_deep(key): repair_deep(item) for key, item in value.items()}
    if isinstance(value, list):
        return [repair_deep(item) for item in value]
    return value


def loads_untrusted(text: str | bytes) -> Any:
    """Parse JSON from outside; raises `JsonTextError` with a reason instead of anything else.

    Integers past Python's digit limit, nesting deep enough to exhaust the recursion limit and
    bytes that are not UTF-8 all become a `JsonTextError`; strings come back repaired.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonTextError(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise JsonTextError("malformed JSON: nested too deeply") from None
    except UnicodeDecodeError:
        raise JsonTextError("malformed JSON: the body is not UTF-8") from None
    except ValueError as exc:  # an integer with thousands of digits
        raise JsonTextError(f"malformed JSON: {exc}") from None
    try:
        return repair_deep(data)
    except RecursionError:  # the parser's C stack went deeper than Python's repair can follow
        raise JsonTextError("malformed JSON: nested too deeply") from None
