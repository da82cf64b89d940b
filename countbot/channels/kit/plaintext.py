"""Markdown to readable plain text, for platforms that show no markup (QQ through OneBot).

Code keeps every character (fences are dropped, the body stays), links show their address,
headings and emphasis lose their markers, bullets become `•`.
"""

from __future__ import annotations

import re

from countbot.channels.kit.markdown_syntax import Kept, MarkupRules, as_is, rewrite


def _link(match: re.Match[str], kept: Kept) -> str:
    label, url = match.group(1), match.group(2)
    return url if label.strip() == url else f"{label} ({url})"


PLAIN = MarkupRules(
    code_block=lambda m: m.group("body").rstrip("\n"),
    inline_code=as_is,
    link=_link,
    heading=as_is,
    bullet="• ",
    emphasis=lambda kind, content: content,
)


def markdown_to_plain(text: str) -> str:
    """What a reader should see of a Markdown answer on a platform without markup."""
    return rewrite(text, PLAIN)
