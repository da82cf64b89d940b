"""Making untrusted text safe to keep: valid Unicode only, JSON without surprises.

Python strings may hold lone UTF-16 surrogates (a JSON `"\\ud800"` escape from a client, half an
emoji in one model stream chunk). Such a string cannot be encoded as UTF-8, so it breaks the
WebSocket send, the SQLite write and the audit log far from where it came in. Every boundary
(WebSocket in, REST in, model stream in, channel in, store) passes text through here: a valid
surrogate pair becomes its character, a lone surrogate becomes U+FFFD. All of it is linear time.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATES = re.compile("[\ud800-\udfff]")
_HIGH = ("\ud800", "\udbff")


class JsonTextError(ValueError):
    """Text that is not a JSON document we accept; the message says why, for the client."""


def repair_text(text: str) -> str:
    """`text` as valid Unicode: surrogate pairs joined, lone surrogates replaced by U+FFFD."""
    if text.isascii() or _SURROGATES.search(text) is None:
        return text
    # UTF-16 with surrogatepass joins every valid pair and keeps the lone ones as raw code units,
    # which the strict decoder then turns into U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


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
    return repair_deep(data)


class StreamTextRepair:
    """Repairs text arriving in pieces: a high surrogate at a piece's end waits for the next.

    A model stream may split a character's UTF-16 pair across two chunks; repairing each chunk
    alone would turn one emoji into two U+FFFD.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """The repaired text that can be shown now (may be empty while a half pair waits)."""
        piece = self._held + piece
        self._held = ""
        if piece and _HIGH[0] <= piece[-1] <= _HIGH[1]:
            piece, self._held = piece[:-1], piece[-1]
        return repair_text(piece)

    def flush(self) -> str:
        """What is still held at the end of the stream, repaired."""
        held, self._held = self._held, ""
        return repair_text(held)
