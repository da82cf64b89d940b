"""Keeping MEMORY.md clean: no second copy of a fact, dated corrections, facts forgotten whole.

Pure text functions, applied inside `MemoryFile.update` so each runs under the file's locks.
"""

from __future__ import annotations

import re
from datetime import date

from countbot.memory.search import split_entries

# Two notes this similar (shared words and CJK characters, Jaccard) say the same thing.
SAME_FACT = 0.85
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_CORRECTION = re.compile(r"\s*_\(corrected \d{4}-\d{2}-\d{2}; was: .*?\)_$", re.DOTALL)


def _tokens(text: str) -> set[str]:
    """Words, with runs of unsegmented scripts split into characters so Chinese compares too."""
    found: set[str] = set()
    for token in _TOKEN.findall(_CORRECTION.sub("", _LIST_MARK.sub("", text)).casefold()):
        if token.isascii():
            found.add(token)
        else:
            found.update(token)
    return found


def repeats(content: str, note: str) -> str | None:
    """The entry of `content` that already says `note` (same words, near enough), or None."""
    wanted = _tokens(note)
    if not wanted:
        return None
    for _start, lines, _heading in split_entries(content.splitlines()):
        text = "\n".join(lines)
        have = _tokens(text)
        if have and len(wanted & have) / len(wanted | have) >= SAME_FACT:
            return text.strip()
    return None


def corrected(old: str, new: str, day: date) -> str:
    """`new` dated as the correction of `old`, so the history of a fact stays visible."""
    if not new.strip():
        return new
    was = " ".join(_CORRECTION.sub("", _LIST_MARK.sub("", old)).split())
    return f"{new.rstrip()} _(corrected {day.isoformat()}; was: {was})_"


def without(content: str, text: str) -> tuple[str, int]:
    """`content` without every entry (list item or paragraph) that holds `text`, and how many."""
    needle = text.casefold().strip()
    if not needle:
        return content, 0
    lines = content.splitlines(keepends=True)
    dropped: set[int] = set()
    count = 0
    for start, entry, _heading in split_entries([line.rstrip("\n") for line in lines]):
        if entry[0].lstrip().startswith("#") or needle not in "\n".join(entry).casefold():
            continue
        dropped.update(range(start - 1, start - 1 + len(entry)))
        count += 1
    return "".join(line for i, line in enumerate(lines) if i not in dropped), count
