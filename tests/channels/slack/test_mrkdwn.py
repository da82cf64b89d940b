"""Markdown to Slack mrkdwn: formatting carried over, and nothing in an answer can ping or link."""

from __future__ import annotations

import pytest

from countbot.channels.slack.mrkdwn import markdown_to_mrkdwn


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**bold** and *it* and ~~gone~~", "*bold* and _it_ and ~gone~"),
        ("ping <!channel> & <@U1>", "ping &lt;!channel&gt; &amp; &lt;@U1&gt;"),
        ("[x](javascript:alert(1))", "[x](javascript:alert(1))"),
        ("```python\nif a < b:\n    pass\n```", "```\nif a &lt; b:\n    pass\n```"),
        ("- one\n- `two <b>`", "• one\n• `two &lt;b&gt;`"),
    ],
)
def test_markdown_becomes_safe_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert markdown_to_mrkdwn(markdown) == mrkdwn
