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

_FENCED = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)(?:^ {0,3}(?P=fence)[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)
# Every span that may fail to close is bounded (`{1,N}`, possessive `+` where the class cannot
# contain the closer): each start then scans at most N characters once, so a line of a
# thousand unclosed `**` or `[` stays linear instead of quadratic.
_INLINE_CODE = re.compile(r"`([^`\n]{1,2000}+)`")
_LINK = re.compile(r"\[([^\]\n]{1,300}+)\]\(\s{0,20}+([^)\s]{1,1000}+)\s{0,20}+\)")
_SAFE_URL = re.compile(r"^(https?://|tg://|mailto:)", re.IGNORECASE)
_LANGUAGE = re.compile(r"[\w+#.-]+")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+([^\n]{1,300}?)[ \t#]{0,20}$", re.MULTILINE)
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+", re.MULTILINE)
_INLINE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\*\*(?=\S)([^\n]{1,300}?)(?<=\S)\*\*"), r"<b>\1</b>"),
    (re.compile(r"(?<!\w)__(?=\S)([^\n]{1,300}?)(?<=\S)__(?!\w)"), r"<b>\1</b>"),
    (re.compile(r"~~(?=\S)([^\n]{1,300}?)(?<=\S)~~"), r"<s>\1</s>"),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]{1,300}?)(?<=[^\s*])\*(?![\w*])"), r"<i>\1</i>"),
    (re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]{1,300}?)(?<=[^\s_])_(?![\w_])"), r"<i>\1</i>"),
)
_TAG = re.compile(r"<(/?)([a-z]+)[^>]*>")
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")


def markdown_to_html(text: str) -> str:
    """Telegram HTML (`parse_mode="HTML"`) for a Markdown answer."""
    formatted = _convert(text, inline=True)
    return formatted if _balanced(formatted) else _convert(text, inline=False)


def _convert(text: str, *, inline: bool) -> str:
    kept: list[str] = []

    def keep(fragment: str) -> str:
        kept.append(fragment)
        return f"\x00{len(kept) - 1}\x00"

    text = text.replace("\x00", "")
    text = _FENCED.sub(lambda m: keep(_code_block(m)), text)
    text = _INLINE_CODE.sub(lambda m: keep(f"<code>{html.escape(m.group(1))}</code>"), text)
    if inline:
        text = _LINK.sub(_link(keep), text)
    text = html.escape(text, quote=False)
    if inline:
        text = _HEADING.sub(r"<b>\1</b>", text)
        text = _BULLET.sub("\\1• ", text)
        for pattern, replacement in _INLINE:
            text = pattern.sub(replacement, text)
    return _PLACEHOLDER.sub(lambda m: kept[int(m.group(1))], text)


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
