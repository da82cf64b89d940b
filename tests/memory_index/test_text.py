"""Text as the full-text index sees it: ASCII text takes a path that compiles no pattern for the
unsegmented scripts, with the same terms, the same indexed text and the same estimate."""

from __future__ import annotations

import re

from countbot.memory_index import text
from countbot.memory_index.text import estimate_recall_tokens, indexable, query_terms

ASCII = [
    "What's the tide at Dover_Pier in 2024? It was 5.2 m, a record.",
    "hi",
    "the and of",  # stopwords only
    "x 7 __init__ snake_case CamelCase e-mail",
    "",
]


def full_path_terms(value: str) -> list[str]:
    """The terms by the patterns written for every script (the path non-ASCII text takes)."""
    _, run_of, word_of = text._patterns()
    words = [w.lower() for w in word_of.findall(value)]
    kept = [f'"{w}"' for w in words if (len(w) > 1 or w.isdigit()) and w not in text.STOPWORDS]
    assert not run_of.findall(value)
    return list(dict.fromkeys(kept))


def test_ascii_text_gets_what_the_patterns_for_every_script_give() -> None:
    char, run_of, _ = text._patterns()
    for value in ASCII:
        assert query_terms(value) == full_path_terms(value)
        assert indexable(value) == char.sub(r" \1 ", value) == value
        unsegmented = sum(len(run) for run in run_of.findall(value))
        assert estimate_recall_tokens(value) == unsegmented + (len(value) - unsegmented + 3) // 4


def test_unsegmented_scripts_still_become_characters_and_bigrams() -> None:
    assert indexable("see the 牙医 today") == "see the  牙  医  today"
    assert query_terms("Dover 牙医 café") == ['"dover"', '"café"', '"牙 医"']
    assert estimate_recall_tokens("牙医ab") == 2 + 1


def test_ascii_text_compiles_no_pattern_for_the_other_scripts() -> None:
    text._patterns.cache_clear()
    for value in ASCII:
        query_terms(value), indexable(value), estimate_recall_tokens(value)
    assert text._patterns.cache_info().currsize == 0
    assert isinstance(text._ascii_word(), re.Pattern)
