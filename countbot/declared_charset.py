"""Decoding bytes in the charset their sender declared (a web page, a mail part), never failing.

A declared charset is untrusted input: Python's codec registry also holds codecs that are not
character sets at all (`rot13`, `base64`, `zlib` map bytes to bytes or str to str), the codecs
for domain names (`idna` refuses `errors="replace"`, `punycode` is quadratic pure Python), one
that always raises (`undefined`) and the escape decoders that read backslashes as code. Any of
those, an unknown name, or a codec that raises on the data in a way of its own, falls back to
UTF-8. Bytes that do not decode become U+FFFD. The work is done a slice per step
(`countbot.cooperative`), so a 2 MB body decodes on the event loop without stalling it.
"""

from __future__ import annotations

import codecs

from countbot.cooperative import Steps, finish

FALLBACK = "utf-8"
# Codecs that pass as text encodings but are not charsets a sender can mean (names as
# `codecs.lookup` spells them).
_NOT_CHARSETS = frozenset({"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape"})
# Bytes decoded per step: the slowest charsets (utf-7 on noise, utf-32 with every unit invalid)
# take ~2 ms per 16 KB in one C call.
_SLICE = 16 * 1024


def charset_codec(charset: str | None) -> str:
    """The codec to read text declared as `charset`: its own if it is a charset, else UTF-8."""
    if not charset:
        return FALLBACK
    try:
        info = codecs.lookup(charset.strip())
    except (LookupError, ValueError, TypeError):
        return FALLBACK
    # `_is_text_encoding` is how `bytes.decode` itself tells rot13/base64/zlib apart.
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return FALLBACK
    return info.name


def decode_declared(data: bytes, charset: str | None) -> str:
    """`data` as text in its declared `charset` (UTF-8 when that cannot be used)."""
    return finish(decoded_steps(data, charset))


def decoded_steps(data: bytes, charset: str | None) -> Steps[str]:
    """`decode_declared` as bounded steps: one slice of `data` per step."""
    codec = charset_codec(charset)
    try:
        return (yield from _slices_decoded(data, codec))
    except Exception:  # a codec failing its own way must not fail the reader
        if codec == FALLBACK:
            raise
        return (yield from _slices_decoded(data, FALLBACK))


def _slices_decoded(data: bytes, codec: str) -> Steps[str]:
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    parts: list[str] = []
    for start in range(0, len(data), _SLICE):
        parts.append(decoder.decode(data[start : start + _SLICE]))
        yield
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)
