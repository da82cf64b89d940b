"""Keyword search over Markdown notes, by entry (a paragraph, list item or heading).

Plain keyword matching is deliberate: memory is small, the model chooses good keywords, and the
result is predictable without an embedding model or an index to keep in sync.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^\s*#{1,6}\s")
# A line that starts a new entry inside a block: a heading or a list item.
_ENTRY_START = re.compile(r"^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s)")


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """One matching entry: its 1-based line span, text, the heading it sits under, and score."""

    line: int
    end_line: int
    text: str
    heading: str
    score: int


def search_notes(content: str, query: str, limit: int = 10) -> list[MemoryHit]:
    """Entries whose text or heading holds every word of `query`, most occurrences first."""
    words = query.lower().split()
    if not words or limit <= 0:
        return []
    hits: list[MemoryHit] = []
    for start, lines, heading in split_entries(content.splitlines()):
        text = "\n".join(lines)
        # The heading counts, so "2026-05-01 dentist" finds a note filed under that date.
        haystack = f"{heading}\n{text}".lower()
        counts = [haystack.count(word) for word in words]
        if all(counts):
            hits.append(MemoryHit(start, start + len(lines) - 1, text, heading, sum(counts)))
    hits.sort(key=lambda hit: (-hit.score, hit.line))
    return hits[:limit]


def split_entries(lines: list[str]) -> list[tuple[int, list[str], str]]:
    """Split into (first line number, lines, enclosing heading) entries; a heading stands alone."""
    entries: list[tuple[int, list[str], str]] = []
    current: list[str] = []
    start = 0
    heading = ""
    for number, line in enumerate(lines, start=1):
        if current and (not line.strip() or _ENTRY_START.match(line)):
            entries.append((start, current, heading))
            current = []
        if not line.strip():
            continue
        if _HEADING.match(line):
            entries.append((number, [line], heading))
            heading = line.strip()
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        entries.append((start, current, heading))
    return entries
