"""The Markdown models write, as patterns every channel's renderer shares.

Each platform turns these into its own markup (Telegram HTML) or strips them (plain-text
platforms); keeping the patterns in one place means every channel reads the answer alike.
"""

from __future__ import annotations

import re

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
