"""Valid Unicode from a model stream: surrogate pairs joined, lone surrogates replaced.

Python strings may hold lone UTF-16 surrogates (half an emoji in one model stream chunk, a
`"\\ud800"` escape from a client). Such a string cannot be encoded as UTF-8, so it breaks the
WebSocket send, the SQLite write and the audit log far from where it came in. The llm layer
repairs what models send here; `countbot/text/text_repair.py` uses the same function for every other
boundary. Linear time.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

_SURROGATES = re.compile("[\ud800-\udfff]")
_HIGH = ("\ud800", "\udbff")
_JSON = msgspec.json.Encoder()


def repair_text(text: str) -> str:
    """`text` as valid Unicode: surrogate pairs joined, lone surrogates replaced by U+FFFD."""
    if text.isascii() or _SURROGATES.search(text) is None:
        return text
    # UTF-16 with surrogatepass joins every valid pair and keeps the lone ones as raw code units,
    # which the strict decoder then turns into U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def json_text(value: Any) -> str:
    """`value` as compact JSON text that UTF-8 can carry (a WebSocket frame, a stored record).

    msgspec's: a seventh of `json.dumps`'s time for a streamed piece's frame, a third for a
    record. Text with a lone surrogate, which msgspec will not encode and which would make a send
    or a write raise, goes the slow way: repaired to U+FFFD instead of losing what carried it.
    """
    try:
        return _JSON.encode(value).decode()
    except UnicodeEncodeError:
        return repair_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


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
