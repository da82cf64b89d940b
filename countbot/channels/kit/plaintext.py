"""Markdown to readable plain text, for platforms that show no markup (QQ through OneBot).

Code keeps every character (fences are dropped, the body stays), links show their address,
headings and emphasis lose their markers, bullets become `•`.
"""

from __future__ import annotations

from countbot.channels.kit.markdown_syntax import (
    BULLET,
    EMPHASIS,
    FENCED,
    HEADING,
    INLINE_CODE,
    LINK,
    Kept,
)


def markdown_to_plain(text: str) -> str:
    """What a reader should see of a Markdown answer on a platform without markup."""
    kept = Kept()
    text = text.replace("\x00", "")
    text = FENCED.sub(lambda m: kept.keep(m.group("body").rstrip("\n")), text)
    text = INLINE_CODE.sub(lambda m: kept.keep(m.group(1)), text)
    text = LINK.sub(lambda m: _link(m.group(1), m.group(2)), text)
    text = HEADING.sub(r"\1", text)
    text = BULLET.sub("\\1• ", text)
    for pattern, _kind in EMPHASIS:
        text = pattern.sub(r"\1", text)
    return kept.restore(text)


def _link(label: str, url: str) -> str:
    return url if label.strip() == url else f"{label} ({url})"
