"""Splitting long answers for a platform's message limit."""

from __future__ import annotations

import re

from countbot.channels.kit.splitting import split_markdown, truncate, utf16_len


def fences_balanced(piece: str) -> bool:
    return len(re.findall(r"^```", piece, re.MULTILINE)) % 2 == 0


def test_a_short_answer_is_one_piece() -> None:
    assert split_markdown("Hello **there**", 4096) == ["Hello **there**"]


def test_pieces_break_between_paragraphs_and_keep_their_order() -> None:
    paragraphs = [f"Paragraph {n}. " + "word " * 30 for n in range(10)]
    pieces = split_markdown("\n\n".join(paragraphs), 400)
    assert all(utf16_len(p) <= 400 for p in pieces)
    assert "\n\n".join(pieces).split("\n\n") == [p for p in paragraphs]


def test_a_long_code_block_is_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"x_{n} = {n}" for n in range(300))
    pieces = split_markdown(f"Intro.\n\n```python\n{code}\n```\n\nOutro.", 500)
    assert all(utf16_len(p) <= 500 and fences_balanced(p) for p in pieces)
    blocks = [p for p in pieces if "```python" in p]
    assert len(blocks) > 2
    bodies = [re.search(r"```python\n(.*?)\n```", p, re.DOTALL) for p in blocks]
    assert "\n".join(b.group(1) for b in bodies if b) == code
    assert pieces[0].startswith("Intro.") and pieces[-1].endswith("Outro.")


def test_an_unclosed_fence_is_closed_in_every_piece() -> None:
    pieces = split_markdown("```\n" + "\n".join(["line"] * 200), 100)
    assert all(p.startswith("```\n") and p.endswith("\n```") for p in pieces)


def test_lines_and_words_longer_than_the_limit_are_cut_without_losing_text() -> None:
    text = "a" * 250 + " " + "b" * 30
    pieces = split_markdown(text, 100)
    assert all(utf16_len(p) <= 100 for p in pieces)
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")


def test_emoji_count_twice_as_telegram_counts_them() -> None:
    text = "😀" * 100
    pieces = split_markdown(text, 50)
    assert [utf16_len(p) for p in pieces] == [50, 50, 50, 50]
    assert truncate(text, 5) == "😀😀"
