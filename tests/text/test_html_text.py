"""The shared HTML-to-text converter: structure, links, code, tables, entities, what is dropped,
and hostile markup converted in linear time (measured in bench/hostile_inputs.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from countbot.text.html_text import html_text_steps, html_to_text, page_title


def test_headings_paragraphs_and_line_breaks() -> None:
    html = "<h1>Tides</h1><h3>Today</h3><p>High  at\n <b>06:12</b>.<br>Low at <em>noon</em>.</p>"
    assert html_to_text(html) == "# Tides\n\n### Today\n\nHigh at **06:12**.\nLow at _noon_."


def test_lists_nest_and_number() -> None:
    html = "<ul><li>one</li><li>two<ol start='3'><li>a</li><li>b</li></ol></li></ul><p>after</p>"
    assert html_to_text(html) == "- one\n- two\n  3. a\n  4. b\n\nafter"


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ('<a href="https://x.test/a?b=1">the page</a>', "[the page](https://x.test/a?b=1)"),
        ('<a href="mailto:a@x.test">write</a>', "[write](mailto:a@x.test)"),
        ('<a href="/relative">more</a>', "more"),
        ('<a href="javascript:alert(1)">click</a>', "click"),
        ('<a href="data:text/html,x">d</a>', "d"),
        ('go <a href="https://x.test"><img src="i.png"></a> on', "go on"),
    ],
)
def test_links_keep_only_web_and_mail_addresses(html: str, text: str) -> None:
    assert html_to_text(html) == text


def test_code_is_kept_verbatim() -> None:
    html = (
        "<p>Run <code>a  &lt;b&gt;</code>:</p><pre><code>def f():\n    return 1\n\n\nx = 2"
        "</code></pre><p>done</p>"
    )
    assert html_to_text(html) == (
        "Run `a  <b>`:\n\n```\ndef f():\n    return 1\n\n\nx = 2\n```\n\ndone"
    )


def test_tables_become_rows() -> None:
    html = (
        "<table><tr><th>Port</th><th>Tide</th></tr><tr><td>Brest</td><td>06:12</td></tr>"
        "<tr><td>Cork</td><td>07:40</td></tr></table>"
    )
    assert html_to_text(html) == (
        "| Port | Tide |\n| --- | --- |\n| Brest | 06:12 |\n| Cork | 07:40 |"
    )


def test_entities_are_decoded() -> None:
    assert html_to_text("<p>Fish &amp; chips &eacute;t&eacute; &#169; &#x263A; &nbsp;</p>") == (
        "Fish & chips été © ☺"
    )


def test_hidden_content_is_dropped() -> None:
    html = (
        "<html><head><title>T</title><meta name=x><style>p{color:red}</style></head><body>"
        "<script>alert('x')</script><noscript>enable js</noscript><template><p>t</p></template>"
        "<svg><text>drawn</text></svg><!-- note --><p>seen</p><script>unclosed"
    )
    assert html_to_text(html) == "seen"


def test_a_missing_head_end_still_shows_the_body() -> None:
    assert html_to_text("<head><title>T</title><body><p>body text</p>") == "body text"


def test_page_title_is_the_first_titles_text() -> None:
    assert page_title("<title> Tide &amp;\n Times </title><title>x</title>") == "Tide & Times"


def test_characters_whose_lowercase_is_longer_do_not_shift_the_cuts() -> None:
    # "İ".lower() is two characters: offsets found in a str.lower() copy landed past the tags.
    assert html_to_text("İİİİ<script>hidden</script><p>seen</p>") == "İİİİ\n\nseen"
    assert page_title("İİİİİİ<title>Tide</title>") == "Tide"


def test_comments_scripts_and_styles_are_cut_out_in_steps() -> None:
    # 285,000 empty comments were one step of 1.5 s; each step now cuts out a few hundred.
    steps, page = 0, "<!---->" * 50_000 + "<style></style><script></script>" * 10_000
    work = html_text_steps(page)
    while True:
        try:
            next(work)
        except StopIteration as done:
            assert done.value == ""
            break
        steps += 1
    assert steps >= 60_000 // 1_000


def test_a_link_open_across_a_long_page_loses_only_its_brackets() -> None:
    # Its "[" would pin every part written after it; no reader follows a link that long.
    text = html_to_text('<a href="https://x.test/">' + "<p>para" * 5_000 + "</a><p>end")
    assert "[" not in text and "](https://x.test/)" not in text
    assert text.count("para") == 5_000 and text.endswith("end")
    assert html_to_text('<p><a href="https://x.test/">short</a>') == "[short](https://x.test/)"


@pytest.mark.parametrize(
    "html",
    [
        "<title<" * 20_000,
        "<html><title>" * 12_000,
        "<div>" * 30_000 + "deep",
        "<ul>" * 10_000 + "<li>x" * 10_000,
        '<a href="https://x.test">' * 10_000 + "</a>" * 10_000,
        "<p a='" * 20_000,
        "<pre>" * 10_000 + "code",
        "<td>" * 30_000,
        "<!---->" * 30_000,
        "<p>İ" * 30_000,
    ],
)
def test_hostile_markup_gives_bounded_text(html: str) -> None:
    # Output within a constant factor of the input; the time is measured by the benchmark.
    assert len(html_to_text(html)) <= 4 * len(html)


def test_deep_lists_are_indented_no_further_than_the_cap() -> None:
    text = html_to_text("<ul><li>top" + "<ul>" * 50 + "<li>deep</li>")
    assert text == "- top\n" + " " * 14 + "- deep"


def test_web_fetch_and_the_email_channel_never_load_html2text() -> None:
    code = (
        "import sys, countbot.web_access.web_fetch, countbot.channels.email.mail_in;"
        "print('html2text' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, check=True
    )
    assert result.stdout.strip() == "False"
