"""Decoding a compressed HTTP body without ever holding more than the caller will keep.

A 2 KB response with `Content-Encoding: gzip, gzip` expands to a gibibyte; httpx decodes each
network chunk whole, so the cap applied after decoding comes too late. Here every encoding in the
chain is undone by a zlib decompressor asked for at most `_STEP` bytes at a time, and the chain is
pulled lazily: the caller stops reading at its cap and nothing past it is ever produced. Only
encodings we can bound are accepted (and only those are advertised in Accept-Encoding).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

# Accept-Encoding sent by web_fetch: the encodings `BodyDecoder` can bound.
ACCEPT_ENCODING = "gzip, deflate"
_STEP = 64 * 1024
_WBITS = {
    "gzip": zlib.MAX_WBITS | 16,
    "x-gzip": zlib.MAX_WBITS | 16,
    # Servers send deflate both with and without the zlib header; 32 makes zlib detect it.
    "deflate": zlib.MAX_WBITS | 32,
}


class UnsupportedEncoding(ValueError):
    """A Content-Encoding the body cannot be decoded from within bounds."""


class _Stage:
    """One zlib decompressor that yields its output in pieces of at most `_STEP` bytes."""

    def __init__(self, wbits: int) -> None:
        self._inflate = zlib.decompressobj(wbits)
        self._raw = wbits == zlib.MAX_WBITS | 32

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data and not self._inflate.eof:
            try:
                out = self._inflate.decompress(data, _STEP)
            except zlib.error:
                if not self._raw:
                    raise
                # A raw deflate stream (no zlib header): start over without header detection.
                self._inflate, self._raw = zlib.decompressobj(-zlib.MAX_WBITS), False
                out = self._inflate.decompress(data, _STEP)
            data = self._inflate.unconsumed_tail
            if out:
                yield out

    def finish(self) -> Iterator[bytes]:
        # Input is consumed in full by feed, so what flush returns is already bounded by _STEP.
        tail = self._inflate.flush(_STEP)
        if tail:
            yield tail


class BodyDecoder:
    """Undoes a Content-Encoding chain (`"gzip, gzip"`), lazily; stop iterating to stop work."""

    def __init__(self, content_encoding: str) -> None:
        names = [n.strip().lower() for n in content_encoding.split(",") if n.strip()]
        stages = []
        for name in names:
            if name == "identity":
                continue
            if name not in _WBITS:
                raise UnsupportedEncoding(f"the server sent the body as {name}, which is not read")
            stages.append(_Stage(_WBITS[name]))
        # The last encoding listed was applied last, so it is undone first.
        self._stages = stages[::-1]

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded pieces of one raw chunk."""
        return self._through(0, data)

    def finish(self) -> Iterator[bytes]:
        """What the decompressors still hold once the raw body has ended."""
        for index, stage in enumerate(self._stages):
            for piece in stage.finish():
                yield from self._through(index + 1, piece)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._stages):
            if data:
                yield data
            return
        for piece in self._stages[index].feed(data):
            yield from self._through(index + 1, piece)
