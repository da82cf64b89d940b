"""A web page as readable text, in time linear in the page whatever its markup.

html2text (on Python's `html.parser`) gives good Markdown-ish text but rescans from every `<`
of an unfinished construct: a page of `<title<title...` took seconds per 100 KB, growing
quadratically. So the page is first rewritten in one pass into markup that parser reads in one
pass: comments, scripts and styles dropped (their end found with one `find` each), every tag a
complete `<...>` with balanced quotes, every other `<` escaped.
"""

from __future__ import annotations

import re
from html import unescape

import html2text

# A tag candidate, a run of text, or a lone "<": each alternative stops at the next "<" or ">",
# so the scan never backtracks past what it has read.
_TOKENS = re.compile(r"<[^<>]*>|[^<]+|<")
_DROPPED = (("<!--", "-->"), ("<script", "</script"), ("<style", "</style"))
_MAX_TITLE = 300


def page_title(html: str) -> str:
    """The first <title>'s text; plain `find`s, each starting where the last ended."""
    lowered = html.lower()
    start = lowered.find("<title")
    if start < 0:
        return ""
    opened = lowered.find(">", start)
    end = lowered.find("</title", opened) if opened >= 0 else -1
    if end < 0:
        return ""
    return " ".join(unescape(html[opened + 1 : end]).split())[:_MAX_TITLE]


def html_to_text(html: str) -> str:
    """Readable Markdown-ish text of `html`; scripts, styles, comments and images dropped."""
    converter = html2text.HTML2Text()
    converter.body_width = 0
    converter.ignore_images = True
    return converter.handle(well_formed(html))


def well_formed(html: str) -> str:
    """`html` rewritten so every `<` opens a complete tag; linear time."""
    parts: list[str] = []
    for token in _TOKENS.finditer(_without_dropped(html)):
        text = token.group()
        if text[0] != "<":
            parts.append(text)
        elif len(text) == 1 or text[-1] != ">":
            parts.append("&lt;")
        elif text.count('"') % 2 or text.count("'") % 2:
            # An unbalanced quote would make the parser look for its partner far ahead.
            parts.append(text.replace('"', "").replace("'", ""))
        else:
            parts.append(text)
    return "".join(parts)


def _without_dropped(html: str) -> str:
    """`html` without comments, scripts and styles; an unclosed one runs to the end.

    The next place of each opener is remembered and searched again only once passed, so every
    `find` moves forward: one pass over the page in all.
    """
    lowered = html.lower()
    kept: list[str] = []
    position = 0
    following = {opener: lowered.find(opener) for opener, _ in _DROPPED}
    while True:
        for opener, at in following.items():
            if 0 <= at < position:
                following[opener] = lowered.find(opener, position)
        found = [
            (at, opener, closer) for opener, closer in _DROPPED if (at := following[opener]) >= 0
        ]
        if not found:
            kept.append(html[position:])
            return "".join(kept)
        start, opener, closer = min(found)
        kept.append(html[position:start])
        end = lowered.find(closer, start + len(opener))
        if end < 0:
            return "".join(kept)
        position = lowered.find(">", end)
        position = len(html) if position < 0 else position + 1
