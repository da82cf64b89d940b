"""Keyword search over memory entries: all words must match, best matches first."""

from __future__ import annotations

from countbot.memory.search import search_notes

MEMORY = """\
# Memory

## Preferences
- Prefers metric units
- Likes hiking in the Alps; goes hiking most weekends
  with friends from the hiking club

The user's sister Anna lives in Vienna
and visits in spring.

## 2026-05-01
- Dentist appointment moved to Friday
"""


def test_every_word_must_match_case_insensitively() -> None:
    hits = search_notes(MEMORY, "ANNA vienna")
    assert [(h.line, h.end_line) for h in hits] == [(8, 9)]
    assert hits[0].text.startswith("The user's sister Anna")
    assert search_notes(MEMORY, "anna paris") == []


def test_list_items_are_separate_entries_with_their_continuation_lines() -> None:
    hits = search_notes(MEMORY, "hiking")
    assert [(h.line, h.end_line, h.score) for h in hits] == [(5, 6, 3)]
    assert hits[0].heading == "## Preferences"


def test_more_occurrences_rank_first() -> None:
    hits = search_notes(MEMORY, "in")
    assert hits[0].line == 5  # "hiking in", "hiking", "hiking" -> the most "in"s
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_heading_counts_so_dates_find_their_notes() -> None:
    hits = search_notes(MEMORY, "2026-05-01 dentist")
    assert [h.text for h in hits] == ["- Dentist appointment moved to Friday"]


def test_limit_and_empty_query() -> None:
    assert len(search_notes(MEMORY, "e", limit=2)) == 2
    assert search_notes(MEMORY, "   ") == []
