"""Markdown (as models write it) to Slack's mrkdwn.

Slack reads `&`, `<` and `>` as markup (`<@U123>` pings someone, `<!channel>` everyone), so every
one of them in the answer is escaped before any markup is added: model output can never mention
or link on its own. Code is cut out first and put back with only those escapes; links keep only
http(s) and mailto targets.
"""

from __future__ import annotations

import re

from countbot.channels.door import Kept, MarkupRules, escape_entities, rewrite

_SAFE_URL = re.compile(r"^(https?://|mailto:)[^|<>\s]+$", re.IGNORECASE)
_MARKS = {"bold": "*", "italic": "_", "strike": "~"}


def _link(match: re.Match[str], kept: Kept) -> str:
    label, url = match.group(1), match.group(2)
    if not _SAFE_URL.match(url):
        return match.group(0)
    return kept.keep(f"<{url.replace('&', '&amp;')}|{escape_entities(label)}>")


MRKDWN = MarkupRules(
    code_block=lambda m: f"```\n{escape_entities(m.group('body').rstrip())}\n```",
    inline_code=lambda code: f"`{escape_entities(code)}`",
    escape=escape_entities,
    link=_link,
    heading=lambda heading: f"*{heading}*",
    bullet="• ",
    emphasis=lambda kind, content: f"{_MARKS[kind]}{content}{_MARKS[kind]}",
    sealed=True,
)


def markdown_to_mrkdwn(text: str) -> str:
    """Slack mrkdwn for a Markdown answer."""
    return rewrite(text, MRKDWN)
