"""Markdown (as models write it) to the small HTML subset Telegram accepts.

Safety first: every character of the answer is HTML-escaped before any tag is added, so model
output can never inject markup; code is cut out before formatting and put back verbatim; links
keep only http(s), tg and mailto targets. When the inline formatting would nest badly, the
answer is sent with code blocks only rather than rejected by Telegram.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace

from countbot.channels.door import Kept, MarkupRules, rewrite

_SAFE_URL = re.compile(r"^(https?://|tg://|mailto:)", re.IGNORECASE)
_LANGUAGE = re.compile(r"[\w+#.-]+")
_TAGS = {"bold": "b", "italic": "i", "strike": "s"}
_TAG = re.compile(r"<(/?)([a-z]+)[^>]*>")


def markdown_to_html(text: str) -> str:
    """Telegram HTML (`parse_mode="HTML"`) for a Markdown answer."""
    formatted = rewrite(text, _HTML)
    return formatted if _balanced(formatted) else rewrite(text, _CODE_ONLY)


def _code_block(match: re.Match[str]) -> str:
    body = html.escape(match.group("body").rstrip("\n"))
    language = _LANGUAGE.match(match.group("info").strip())
    if language is None:
        return f"<pre>{body}</pre>"
    return f'<pre><code class="language-{language.group(0)}">{body}</code></pre>'


def _link(match: re.Match[str], kept: Kept) -> str:
    label, url = match.group(1), match.group(2)
    if not _SAFE_URL.match(url):
        return match.group(0)
    return kept.keep(f'<a href="{html.escape(url, quote=True)}">') + label + kept.keep("</a>")


def _emphasis(kind: str, content: str) -> str:
    tag = _TAGS[kind]
    return f"<{tag}>{content}</{tag}>"


# Code blocks only: what is sent when the inline formatting would nest badly.
_CODE_ONLY = MarkupRules(
    code_block=_code_block,
    inline_code=lambda code: f"<code>{html.escape(code)}</code>",
    escape=lambda text: html.escape(text, quote=False),
)
_HTML = replace(
    _CODE_ONLY,
    link=_link,
    heading=lambda heading: f"<b>{heading}</b>",
    bullet="• ",
    emphasis=_emphasis,
)


def _balanced(markup: str) -> bool:
    """Every tag closed in the order it was opened (what Telegram's parser insists on)."""
    open_tags: list[str] = []
    for closing, name in _TAG.findall(markup):
        if not closing:
            open_tags.append(name)
        elif not open_tags or open_tags.pop() != name:
            return False
    return not open_tags
