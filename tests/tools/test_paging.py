"""ResultPages: long results are kept for paging, the oldest are forgotten first."""

from __future__ import annotations

from countbot.tools.paging import ResultPages


def result_id(first_page: str) -> str:
    return first_page.split('result_id="')[1].split('"')[0]


def test_short_content_is_returned_unchanged_and_not_stored() -> None:
    pages = ResultPages(10)
    assert pages.first_page("short", "s1") == "short"


def test_the_least_recently_used_result_is_evicted() -> None:
    pages = ResultPages(10, max_entries=2)
    first = result_id(pages.first_page("a" * 25, "s1"))
    second = result_id(pages.first_page("b" * 25, "s1"))
    assert pages.page(first, 2, "s1").content.startswith("a" * 10)  # first is now the freshest
    third = result_id(pages.first_page("c" * 25, "s1"))
    assert pages.page(second, 2, "s1").status == "error"
    assert "Run the original tool again" in pages.page(second, 2, "s1").content
    assert pages.page(first, 3, "s1").content.startswith("a" * 5 + "\n\n[page 3 of 3")
    assert pages.page(third, 2, "s1").status == "ok"


def test_stored_characters_are_bounded_but_the_newest_result_stays() -> None:
    pages = ResultPages(10, max_chars=50)
    old = result_id(pages.first_page("a" * 40, "s1"))
    huge = result_id(pages.first_page("b" * 100, "s1"))
    assert pages.page(old, 2, "s1").status == "error"
    assert pages.page(huge, 10, "s1").status == "ok"
