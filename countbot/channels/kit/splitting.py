"""Splitting a Markdown answer into messages no longer than a platform's limit.

Cuts fall between paragraphs and code blocks first, then between lines, then between words; a
code block that must be cut is closed and reopened with the same fence and language, so every
message renders on its own and no fence is ever broken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
PARAGRAPH_BREAK = "\n\n"


def utf16_len(text: str) -> int:
    """Length as Telegram counts it (an emoji outside the BMP counts two)."""
    return len(text.encode("utf-16-le")) // 2


def truncate(text: str, limit: int) -> str:
    """The longest start of `text` within `limit` UTF-16 units."""
    return _hard_cut(text, limit)[0] if utf16_len(text) > limit else text


@dataclass(frozen=True, slots=True)
class _Block:
    """A paragraph, or a fenced code block with its opening line and closing fence."""

    text: str
    opener: str | None = None
    closer: str = ""
    body: str = ""


def split_markdown(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` UTF-16 units; one piece when it fits."""
    if utf16_len(text) <= limit:
        return [text]
    parts = [part for block in _blocks(text) for part in _fit(block, limit)]
    return _pack(parts, PARAGRAPH_BREAK, limit)


def _blocks(text: str) -> list[_Block]:
    lines = text.split("\n")
    blocks: list[_Block] = []
    paragraph: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            blocks.append(_Block("\n".join(paragraph)))
            paragraph.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence is None:
            if line.strip():
                paragraph.append(line)
            else:
                end_paragraph()
            index += 1
            continue
        end_paragraph()
        marker = fence.group(1)
        end = index + 1
        while end < len(lines) and not _closes(lines[end], marker):
            end += 1
        body = "\n".join(lines[index + 1 : end])
        # An unclosed fence runs to the end of the answer; it gets its closing fence here.
        blocks.append(_Block("\n".join(lines[index : end + 1]), line.strip(), marker, body))
        index = end + 1
    end_paragraph()
    return blocks


def _closes(line: str, marker: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(marker) and set(stripped) == {marker[0]}


def _fit(block: _Block, limit: int) -> list[str]:
    if block.opener is None:
        return _split_plain(block.text, limit, ("\n", " "))
    whole = f"{block.opener}\n{block.body}\n{block.closer}" if block.body else block.text
    if utf16_len(whole) <= limit:
        return [whole]
    room = max(1, limit - utf16_len(block.opener) - utf16_len(block.closer) - 2)
    return [
        f"{block.opener}\n{body}\n{block.closer}"
        for body in _split_plain(block.body, room, ("\n",))
    ]


def _split_plain(text: str, limit: int, separators: tuple[str, ...]) -> list[str]:
    if utf16_len(text) <= limit:
        return [text]
    if not separators:
        return _hard_cut(text, limit)
    separator, finer = separators[0], separators[1:]
    units = [unit for part in text.split(separator) for unit in _split_plain(part, limit, finer)]
    return _pack(units, separator, limit)


def _pack(units: list[str], separator: str, limit: int) -> list[str]:
    """Join consecutive units with `separator` while the result fits (each unit fits alone)."""
    pieces: list[str] = []
    current: str | None = None
    for unit in units:
        if current is not None and utf16_len(current) + utf16_len(separator + unit) <= limit:
            current += separator + unit
            continue
        if current is not None:
            pieces.append(current)
        current = unit
    if current is not None:
        pieces.append(current)
    return [piece for piece in pieces if piece.strip()] or pieces[:1]


def _hard_cut(text: str, limit: int) -> list[str]:
    pieces: list[str] = []
    current, size = "", 0
    for char in text:
        width = 2 if ord(char) > 0xFFFF else 1
        if size + width > limit:
            pieces.append(current)
            current, size = "", 0
        current += char
        size += width
    return [*pieces, current] if current else pieces
