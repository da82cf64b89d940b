"""OneBot message parsing and QQ's plain-text rendering, without a connection."""

from __future__ import annotations

from countbot.channels.kit.plaintext import markdown_to_plain
from countbot.channels.qq.events import segments


def test_cq_strings_become_the_same_segments_as_arrays() -> None:
    parsed = segments(
        "[CQ:reply,id=42][CQ:at,qq=10001] 1&#91;2&#93; &amp; [CQ:image,file=a.jpg,url=http://h/a&#44;b]"
    )
    assert parsed == [
        {"type": "reply", "data": {"id": "42"}},
        {"type": "at", "data": {"qq": "10001"}},
        {"type": "text", "data": {"text": " 1[2] & "}},
        {"type": "image", "data": {"file": "a.jpg", "url": "http://h/a,b"}},
    ]
    assert segments([{"type": "text", "data": {"text": "hi"}}, "junk", {"type": "x"}]) == [
        {"type": "text", "data": {"text": "hi"}}
    ]


def test_markdown_becomes_readable_plain_text() -> None:
    text = "# Plan\n\n- **bold** and _soft_\n- `a*b*c`\n\n```py\nx = 2 * 3 * 4\n```\n[site](https://a.b)"
    assert markdown_to_plain(text) == (
        "Plan\n\n• bold and soft\n• a*b*c\n\nx = 2 * 3 * 4\nsite (https://a.b)"
    )
