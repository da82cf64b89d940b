"""Decoding bytes in the charset their sender declared (a web page, a mail part), never failing.

A declared charset is untrusted input: Python's codec registry also holds codecs that are not
character sets at all (`rot13`, `base64`, `zlib` map bytes to bytes or str to str), the codecs for
domain names (`idna` refuses `errors="replace"`, `punycode` is quadratic pure Python), one that
always raises (`undefined`) and the escape decoders that read backslashes as code. Any of those, an
unknown name, or a codec that raises on the data in a way of its own, falls back to UTF-8. Bytes
that do not decode become U+FFFD. The work is done a slice per step (`countbot.common.cooperative`),
so a body of megabytes decodes on the event loop without stalling it.

UTF-16 without a byte order mark is read in the order its bytes show: ASCII in UTF-16 has a NUL
as each code unit's high byte, at odd offsets in little-endian, at even ones in big-endian.
Declared as `utf-16` with no such sign, it is big-endian (RFC 2781, 4.3). Bytes whose NULs stand
clearly at one parity, or that open with a UTF-16 byte order mark, are UTF-16 whatever other
charset (or none) was declared: no text in an ASCII-compatible charset has them. Only the first
`_SAMPLE` bytes are looked at.
"""

from __future__ import annotations

import codecs

from countbot.common.cooperative import Steps, finish

FALLBACK = "utf-8"
# Codecs that pass as text encodings but are not charsets a sender can mean (names as
# `codecs.lookup` spells them).
_NOT_CHARSETS = frozenset({"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape"})
# Bytes decoded per step: small enough that the slowest charsets (utf-7 on noise, utf-32 with
# every unit invalid) stay a short step in one C call (docs/hostile_inputs.md).
_SLICE = 16 * 1024
# Bytes looked at for the signs of UTF-16 without a byte order mark.
_SAMPLE = 4096


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
    codec = _utf16_order(data, charset_codec(charset))
    try:
        return (yield from _slices_decoded(data, codec))
    except Exception:  # a codec failing its own way must not fail the reader
        if codec == FALLBACK:
            raise
        return (yield from _slices_decoded(data, FALLBACK))


def _utf16_order(data: bytes, codec: str) -> str:
    """`codec`, or the byte order of UTF-16 the bytes show (see the module's docstring)."""
    if codec.startswith(("utf-16-", "utf-32")):  # declared with its byte order, or not UTF-16
        return codec
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return "utf-16"  # the mark says so, whatever was declared
    sample = data[:_SAMPLE]
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if codec == "utf-16":
        return "utf-16-le" if odd > even else "utf-16-be"
    # A NUL in at least a quarter of the code units, and nearly all at one parity.
    nuls = max(even, odd)
    if nuls >= max(2, len(sample) // 8) and min(even, odd) * 8 <= nuls:
        return "utf-16-le" if odd > even else "utf-16-be"
    return codec


def _slices_decoded(data: bytes, codec: str) -> Steps[str]:
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    parts: list[str] = []
    for start in range(0, len(data), _SLICE):
        parts.append(decoder.decode(data[start : start + _SLICE]))
        yield
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)
