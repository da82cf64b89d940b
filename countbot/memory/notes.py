"""How a note is filed in MEMORY.md: as a list item under a date heading.

Notes written on the same day gather under one heading while it is still the last one in the
file; after anything else is appended (an overflow summary), the day gets a fresh heading.
"""

from __future__ import annotations

from datetime import date

_LIST_MARKERS = ("- ", "* ", "+ ")


def date_heading(day: date) -> str:
    return f"## {day.isoformat()}"


def add_note(content: str, day: date, note: str) -> str:
    """`content` with `note` filed under `day`'s heading."""
    note = note.strip()
    if not note.startswith(_LIST_MARKERS):
        note = f"- {note}"
    heading = date_heading(day)
    headings = [line.strip() for line in content.splitlines() if line.startswith("## ")]
    if headings and headings[-1] == heading:
        return f"{content.rstrip()}\n{note}\n"
    if not content.strip():
        return f"{heading}\n\n{note}\n"
    return f"{content.rstrip()}\n\n{heading}\n\n{note}\n"
