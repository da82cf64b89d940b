"""Notes are filed as list items under a date heading; one heading per day while it is last."""

from __future__ import annotations

from datetime import date

from countbot.memory.notes import add_note

DAY = date(2026, 11, 22)


def test_first_note_in_an_empty_file_gets_a_heading() -> None:
    assert add_note("", DAY, "Likes tea") == "## 2026-11-22\n\n- Likes tea\n"


def test_same_day_notes_share_the_heading() -> None:
    content = add_note("# Memory\n", DAY, "Likes tea")
    content = add_note(content, DAY, "- Dislikes coffee")
    assert content == "# Memory\n\n## 2026-11-22\n\n- Likes tea\n- Dislikes coffee\n"


def test_a_new_day_or_a_later_section_starts_a_new_heading() -> None:
    content = add_note("", DAY, "one")
    content += "\n## Conversation summary\n\n- talked\n"
    content = add_note(content, DAY, "two")
    assert content.count("## 2026-11-22") == 2
    content = add_note(content, date(2026, 11, 23), "three")
    assert content.endswith("## 2026-11-23\n\n- three\n")
