"""The Markdown models write, as patterns every channel's renderer shares, and the one pass that
rewrites an answer into a platform's markup.

Each platform states how it writes each construct (`MarkupRules`: Telegram HTML, Slack mrkdwn,
Feishu card Markdown, plain text) and `rewrite` applies the rules in the one order that keeps
code verbatim and escapes the rest exactly once; keeping the patterns and the order in one place
means every channel reads the answer alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

FENCED = re.compile(
    r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)(?:^ {0,3}(?P=fence)[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)
# Every span that may fail to close is bounded (`{1,N}`, possessive `+` where the class cannot
# contain the closer): each start then scans at most N characters once, so a line of a
# thousand unclosed `**` or `[` stays linear instead of quadratic.
INLINE_CODE = re.compile(r"`([^`\n]{1,2000}+)`")
LINK = re.compile(r"\[([^\]\n]{1,300}+)\]\(\s{0,20}+([^)\s]{1,1000}+)\s{0,20}+\)")
HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+([^\n]{1,300}?)[ \t#]{0,20}$", re.MULTILINE)
BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+", re.MULTILINE)
# Inline emphasis, outermost first: (pattern with the content as group 1, kind of emphasis).
EMPHASIS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\*\*(?=\S)([^\n]{1,300}?)(?<=\S)\*\*"), "bold"),
    (re.compile(r"(?<!\w)__(?=\S)([^\n]{1,300}?)(?<=\S)__(?!\w)"), "bold"),
    (re.compile(r"~~(?=\S)([^\n]{1,300}?)(?<=\S)~~"), "strike"),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]{1,300}?)(?<=[^\s*])\*(?![\w*])"), "italic"),
    (re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]{1,300}?)(?<=[^\s_])_(?![\w_])"), "italic"),
)
PLACEHOLDER = re.compile("\x00(\\d+)\x00")


class Kept:
    """Fragments cut out of a text (code, finished markup) and put back after formatting."""

    def __init__(self) -> None:
        self._fragments: list[str] = []

    def keep(self, fragment: str) -> str:
        self._fragments.append(fragment)
        return f"\x00{len(self._fragments) - 1}\x00"

    def restore(self, text: str) -> str:
        return PLACEHOLDER.sub(lambda m: self._fragments[int(m.group(1))], text)


def as_is(text: str) -> str:
    return text


def escape_entities(text: str) -> str:
    """`&`, `<` and `>` as entities: what Slack and Feishu cards read as markup (a mention)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@dataclass(frozen=True, slots=True)
class MarkupRules:
    """How one platform writes each Markdown construct; None leaves it as the model wrote it.

    `link` gets the `LINK` match and the `Kept` fragments (what it keeps is not escaped);
    `emphasis` gets the kind ("bold", "italic", "strike") and the content; `bullet` replaces a
    list item's marker. `sealed`: a formatted heading or emphasis is kept whole, so the later
    patterns do not read its own marks again (Slack's `*` is both bold and a Markdown marker).
    """

    code_block: Callable[[re.Match[str]], str]
    inline_code: Callable[[str], str]
    escape: Callable[[str], str] = as_is
    link: Callable[[re.Match[str], Kept], str] | None = None
    heading: Callable[[str], str] | None = None
    bullet: str | None = None
    emphasis: Callable[[str, str], str] | None = None
    sealed: bool = False


def rewrite(text: str, rules: MarkupRules) -> str:
    """`text` (Markdown) in the markup `rules` describe: code is cut out first, the rest escaped
    once, then formatted, and the code put back. NULs are dropped (they mark kept fragments)."""
    kept = Kept()
    seal = kept.keep if rules.sealed else as_is
    text = text.replace("\x00", "")
    text = FENCED.sub(lambda m: kept.keep(rules.code_block(m)), text)
    text = INLINE_CODE.sub(lambda m: kept.keep(rules.inline_code(m.group(1))), text)
    if (link := rules.link) is not None:
        text = LINK.sub(lambda m: link(m, kept), text)
    text = rules.escape(text)
    if (heading := rules.heading) is not None:
        text = HEADING.sub(lambda m: seal(heading(m.group(1))), text)
    if (bullet := rules.bullet) is not None:
        text = BULLET.sub(lambda m: m.group(1) + bullet, text)
    if (emphasis := rules.emphasis) is not None:
        for pattern, kind in EMPHASIS:
            text = pattern.sub(lambda m, kind=kind: seal(emphasis(kind, m.group(1))), text)
    text = kept.restore(text)
    # A sealed span may hold a kept fragment (code in a heading): that is put back too.
    return kept.restore(text) if rules.sealed else text
