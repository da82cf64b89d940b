"""Markdown (as models write it) to Slack's mrkdwn.

Slack reads `&`, `<` and `>` as markup (`<@U123>` pings someone, `<!channel>` everyone), so every
one of them in the answer is escaped before any markup is added: model output can never mention
or link on its own. Code is cut out first and put back with only those escapes; links keep only
http(s) and mailto targets.
"""

from __future__ import annotations

import re

from countbot.channels.door import (
    BULLET,
    EMPHASIS,
    FENCED,
    HEADING,
    INLINE_CODE,
    LINK,
    Kept,
)

_SAFE_URL = re.compile(r"^(https?://|mailto:)[^|<>\s]+$", re.IGNORECASE)
_MARKS = {"bold": "*", "italic": "_", "strike": "~"}


def escape(text: str) -> str:
    """Text Slack shows as it is (its three control characters escaped)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown_to_mrkdwn(text: str) -> str:
    """Slack mrkdwn for a Markdown answer."""
    kept = Kept()
    text = text.replace("\x00", "")
    text = FENCED.sub(lambda m: kept.keep(f"```\n{escape(m.group('body').rstrip())}\n```"), text)
    text = INLINE_CODE.sub(lambda m: kept.keep(f"`{escape(m.group(1))}`"), text)
    text = LINK.sub(lambda m: _link(m, kept), text)
    text = escape(text)
    text = HEADING.sub(lambda m: kept.keep(f"*{m.group(1)}*"), text)
    text = BULLET.sub("\\1• ", text)
    for pattern, kind in EMPHASIS:
        mark = _MARKS[kind]
        text = pattern.sub(lambda m, mark=mark: kept.keep(f"{mark}{m.group(1)}{mark}"), text)
    return kept.restore(kept.restore(text))


def _link(match: re.Match[str], kept: Kept) -> str:
    label, url = match.group(1), match.group(2)
    if not _SAFE_URL.match(url):
        return match.group(0)
    return kept.keep(f"<{url.replace('&', '&amp;')}|{escape(label)}>")
