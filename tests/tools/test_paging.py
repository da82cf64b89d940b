"""ResultPages: long results are kept for paging, the oldest are forgotten first; a result is
masked only as far as its pages are read, and a secret across a page's cut is masked whole."""

from __future__ import annotations

from countbot.common.cooperative import finish
from countbot.common.masking import MaskedText, SecretMasker
from countbot.tools.paging import ResultPages

SECRET = "configured-secret-value-0123456789"


def first_page(pages: ResultPages, content: str, masker: SecretMasker | None = None) -> str:
    return finish(pages.first_page_steps(MaskedText(masker, content), "s1"))


def page(pages: ResultPages, result_id: str, number: int) -> str:
    result = finish(pages.page_steps(result_id, number, "s1"))
    assert result.status == "ok", result.content
    return result.content


def result_id(first: str) -> str:
    return first.split('result_id="')[1].split('"')[0]


def test_short_content_is_returned_unchanged_and_not_stored() -> None:
    pages = ResultPages(10)
    assert first_page(pages, "short") == "short"


def test_the_least_recently_used_result_is_evicted() -> None:
    pages = ResultPages(10, max_entries=2)
    first = result_id(first_page(pages, "a" * 25))
    second = result_id(first_page(pages, "b" * 25))
    assert page(pages, first, 2).startswith("a" * 10)  # first is now the freshest
    third = result_id(first_page(pages, "c" * 25))
    gone = finish(pages.page_steps(second, 2, "s1"))
    assert gone.status == "error" and "Run the original tool again" in gone.content
    assert page(pages, first, 3).startswith("a" * 5 + "\n\n[page 3 of 3")
    assert page(pages, third, 2).startswith("c" * 10)


def test_stored_characters_are_bounded_but_the_newest_result_stays() -> None:
    pages = ResultPages(10, max_chars=50)
    old = result_id(first_page(pages, "a" * 40))
    huge = result_id(first_page(pages, "b" * 100))
    assert finish(pages.page_steps(old, 2, "s1")).status == "error"
    assert page(pages, huge, 10).startswith("b" * 10)


def test_only_the_pages_read_are_masked() -> None:
    masker = SecretMasker([SECRET])
    text = MaskedText(masker, f"{SECRET} " * 60_000)  # 2.1 MB
    pages = ResultPages(30_000)
    first = finish(pages.first_page_steps(text, "s1"))
    assert SECRET not in first and "page 1 of about 70" in first
    assert not text.complete
    page(pages, result_id(first), 2)
    assert not text.complete


def test_a_secret_across_the_cut_of_a_page_is_masked_whole() -> None:
    masker = SecretMasker([SECRET])
    for offset in range(1, len(SECRET)):  # the cut falls inside the secret, at every place
        content = "x" * (100 - offset) + SECRET + " and on " * 40
        pages = ResultPages(100)
        first = first_page(pages, content, masker)
        whole = masker.mask(content)
        assert first.startswith(whole[:100]) and SECRET[:8] not in first
        rest = page(pages, result_id(first), 2)
        assert rest.startswith(whole[100:200]) and SECRET[-8:] not in rest


def test_a_key_body_across_the_cut_is_masked_once_its_end_line_comes() -> None:
    body = "".join(f"{'QUJD' * 16}\n" for _ in range(10))  # base64 lines, BEGIN cut off
    content = "log line\n" * 5 + body + "-----END RSA PRIVATE KEY-----\n" + "after\n" * 40
    pages = ResultPages(200)
    first = first_page(pages, content, SecretMasker())
    assert "QUJD" not in first and first.startswith("log line\n" * 5 + "…****\n-----END")
    assert first.startswith(SecretMasker().mask(content)[:200])
