"""A page read as text, cut into pages that fit a token budget (read one at a time, like
`read_file`'s pages of a long file)."""

from __future__ import annotations

import re

_WIDE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate: a CJK character is about a token, other text about four
    characters a token (close to the tokenizers of the models in use, and never much under)."""
    wide = len(_WIDE.findall(text))
    return wide + (len(text) - wide + 3) // 4


def pages(lines: list[str], budget: int) -> list[list[str]]:
    """`lines` in consecutive runs of at most `budget` tokens (a longer line is cut)."""
    result: list[list[str]] = [[]]
    used = 0
    for line in lines:
        cost = approx_tokens(line) + 1
        if cost > budget:
            line = line[: budget * 2] + "…"
            cost = approx_tokens(line) + 1
        if used + cost > budget and result[-1]:
            result.append([])
            used = 0
        result[-1].append(line)
        used += cost
    return result
