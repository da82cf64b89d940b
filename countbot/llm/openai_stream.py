"""Reading an OpenAI-compatible answer stream: the server-sent events' framing and each chunk.

Every chunk of every answer on the direct path goes through here, so this is its hot path. The
events are cut from the body's bytes as they arrive (no text decoding of the stream, no event
objects), and a chunk is decoded by msgspec straight into the few typed fields the accumulator
reads: a tenth of what `json.loads` into attribute objects took (docs/llm_call.md). A chunk whose
fields do not fit these types (a server's own dialect) or that reports an error is left to the
general decoding (`typed_chunk` returns None), so nothing a server sends is read differently.
"""

from __future__ import annotations

from typing import Any

import msgspec

_BOM = b"\xef\xbb\xbf"


class EventData:
    """The data of each server-sent event, cut from a stream's bytes as they come.

    The standard's framing: lines end in CRLF, LF or CR; a blank line ends an event; an event's
    `data:` lines are joined by newlines; comments and other fields (`event`, `id`, `retry`) are
    skipped. An event without data, or one the stream ends in the middle of, yields nothing.
    """

    def __init__(self) -> None:
        self._rest = b""  # the start of a line whose end has not come yet
        self._data: list[bytes] = []
        self._started = False
        self._after_cr = False  # the last piece ended in CR: an LF that comes next is its pair

    def feed(self, piece: bytes) -> list[bytes]:
        """The data of the events `piece` completes, in order."""
        if self._after_cr and piece.startswith(b"\n"):
            piece, self._after_cr = piece[1:], False
        if not piece:
            return []
        buffer = self._rest + piece if self._rest else piece
        if not self._started:  # a byte-order mark may open the stream, even split in pieces
            if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
                self._rest = buffer
                return []
            self._started, buffer = True, buffer.removeprefix(_BOM)
        self._after_cr = buffer.endswith(b"\r")
        lines = buffer.splitlines()  # bytes split at CRLF, LF and CR only
        ended = self._after_cr or buffer.endswith(b"\n")
        self._rest = b"" if ended or not lines else lines.pop()
        events: list[bytes] = []
        for line in lines:
            if line:
                name, _, value = line.partition(b":")
                if name == b"data":
                    self._data.append(value[1:] if value.startswith(b" ") else value)
            elif self._data:  # a blank line ends the event
                data, self._data = b"\n".join(self._data), []
                if data:
                    events.append(data)
        return events


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCallPiece(msgspec.Struct):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Delta(msgspec.Struct):
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[_ToolCallPiece] | None = None


class _Choice(msgspec.Struct):
    delta: _Delta | None = None
    finish_reason: str | None = None


class _TokenDetails(msgspec.Struct):
    cached_tokens: int | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _TokenDetails | None = None
    cache_read_input_tokens: int | None = None


class _Chunk(msgspec.Struct):
    """The fields of a chunk that `StreamAccumulator` and the constrained calls read; a server's
    other fields are skipped unread."""

    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    error: msgspec.Raw | None = None


_CHUNK = msgspec.json.Decoder(_Chunk)


def typed_chunk(data: bytes) -> Any | None:
    """`data` as a chunk read by attribute, or None when it is not JSON, does not fit the
    fields' types or carries an error (for the general decoding to read or report)."""
    try:
        chunk = _CHUNK.decode(data)
    except msgspec.DecodeError:  # a ValidationError too
        return None
    return chunk if chunk.error is None else None
