"""Markdown to Telegram HTML: model output can never inject markup."""

from __future__ import annotations

from countbot.channels.telegram.markup import markdown_to_html


def test_formatting_becomes_telegram_tags() -> None:
    assert markdown_to_html("**bold**, *italic*, _also_ and ~~gone~~") == (
        "<b>bold</b>, <i>italic</i>, <i>also</i> and <s>gone</s>"
    )
    assert markdown_to_html("## Plan\n- one\n* two") == "<b>Plan</b>\n• one\n• two"


def test_html_in_the_answer_is_shown_not_obeyed() -> None:
    html = markdown_to_html('<b onclick="x">hi</b> & <script>alert(1)</script>')
    assert html == '&lt;b onclick="x"&gt;hi&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;'


def test_code_is_kept_verbatim_and_escaped() -> None:
    answer = "Use `a<b && **c**`:\n\n```python\nif x < 1 and y**2:\n    print('<hi>')\n```"
    assert markdown_to_html(answer) == (
        "Use <code>a&lt;b &amp;&amp; **c**</code>:\n\n"
        '<pre><code class="language-python">if x &lt; 1 and y**2:\n'
        "    print(&#x27;&lt;hi&gt;&#x27;)</code></pre>"
    )


def test_only_safe_links_become_links() -> None:
    assert markdown_to_html("[docs](https://example.com/a_b?x=1&y=2)") == (
        '<a href="https://example.com/a_b?x=1&amp;y=2">docs</a>'
    )
    assert markdown_to_html("[click](javascript:alert(1))") == "[click](javascript:alert(1))"


def test_identifiers_with_underscores_and_stars_stay_as_written() -> None:
    assert markdown_to_html("snake_case_name and 2*3*4") == "snake_case_name and 2*3*4"


def test_badly_nested_formatting_falls_back_to_plain_text_with_code() -> None:
    assert markdown_to_html("**a _b** c_ `x`") == "**a _b** c_ <code>x</code>"
