"""Markdown (as models write it) to the small HTML subset Telegram accepts.

Safety first: every character of the answer is HTML-escaped before any tag is added, so model
output can never inject markup; code is cut out before formatting and put back verbatim; links
keep only http(s), tg and mailto targets. When the inline formatting would nest badly, the
answer is sent with code blocks only rather than rejected by Telegram.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from countbot.channels.door import (
    BULLET,
    EMPHASIS,
    FENCED,
    HEADING,
    INLINE_CODE,
    LINK,
    Kept,
)

_SAFE_URL = re.compile(r"^(https?://|tg://|mailto:)", re.IGNORECASE)
_LANGUAGE = re.compile(r"[\w+#.-]+")
_TAGS = {"bold": "b", "italic": "i", "strike": "s"}
_TAG = re.compile(r"<(/?)([a-z]+)[^>]*>")


def markdown_to_html(text: str) -> str:
    """Telegram HTML (`parse_mode="HTML"`) for a Markdown answer."""
    formatted = _convert(text, inline=True)
    return formatted if _balanced(formatted) else _convert(text, inline=False)


def _convert(text: str, *, inline: bool) -> str:
    kept = Kept()
    text = text.replace("\x00", "")
    text = FENCED.sub(lambda m: kept.keep(_code_block(m)), text)
    text = INLINE_CODE.sub(lambda m: kept.keep(f"<code>{html.escape(m.group(1))}</code>"), text)
    if inline:
        text = LINK.sub(_link(kept.keep), text)
    text = html.escape(text, quote=False)
    if inline:
        text = HEADING.sub(r"<b>\1</b>", text)
        text = BULLET.sub("\\1• ", text)
        for pattern, kind in EMPHASIS:
            tag = _TAGS[kind]
            text = pattern.sub(rf"<{tag}>\1</{tag}>", text)
    return kept.restore(text)


def _code_block(match: re.Match[str]) -> str:
    body = html.escape(match.group("body").rstrip("\n"))
    language = _LANGUAGE.match(match.group("info").strip())
    if language is None:
        return f"<pre>{body}</pre>"
    return f'<pre><code class="language-{language.group(0)}">{body}</code></pre>'


def _link(keep: Callable[[str], str]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        label, url = match.group(1), match.group(2)
        if not _SAFE_URL.match(url):
            return match.group(0)
        return keep(f'<a href="{html.escape(url, quote=True)}">') + label + keep("</a>")

    return replace


def _balanced(markup: str) -> bool:
    """Every tag closed in the order it was opened (what Telegram's parser insists on)."""
    open_tags: list[str] = []
    for closing, name in _TAG.findall(markup):
        if not closing:
            open_tags.append(name)
        elif not open_tags or open_tags.pop() != name:
            return False
    return not open_tags
