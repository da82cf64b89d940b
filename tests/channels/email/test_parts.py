"""The email channel's pure parts: whose From header to believe, and HTML mail as text."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from countbot.channels.email.trust import vouched
from countbot.text.html_text import html_to_text


def _with(*results: str) -> EmailMessage:
    message = EmailMessage()
    for result in results:
        message["Authentication-Results"] = result
    return message


@pytest.mark.parametrize(
    ("results", "authserv", "trusted"),
    [
        (["mx.test; dmarc=pass header.from=example.com"], "mx.test", True),
        (["mx.test; dkim=pass header.d=example.com"], "mx.test", True),
        (["mx.test; dkim=pass header.d=mail.example.com"], "mx.test", False),  # not its parent
        (["mx.test; spf=pass smtp.mailfrom=bounce@example.com"], "mx.test", True),
        (["mx.test; spf=pass smtp.mailfrom=x@evil.test"], "mx.test", False),
        (["mx.test; dkim=fail header.d=example.com; spf=softfail"], "mx.test", False),
        (["evil.test; dkim=pass header.d=example.com"], "mx.test", False),  # another server
        (["mx.test; dkim=fail", "mx.other; dkim=pass header.d=example.com"], None, False),
        (["mx.test; dkim=pass header.d=example.com", "evil; spf=fail"], None, True),  # topmost
        ([], None, False),
    ],
)
def test_the_receiving_server_must_vouch_for_the_sender(
    results: list[str], authserv: str | None, trusted: bool
) -> None:
    assert vouched(_with(*results), "alice@example.com", authserv) is trusted


def test_a_subdomain_sender_is_covered_by_its_parent_domains_signature() -> None:
    message = _with("mx.test; dkim=pass header.d=example.com")
    assert vouched(message, "alice@mail.example.com", "mx.test")


def test_html_mail_reads_as_text() -> None:
    html = (
        "<html><head><style>p{}</style></head><body><h1>Hi</h1><p>See <a href='https://x.test'>"
        "this</a> &amp; that</p><ul><li>one</li><li>two</li></ul><script>x()</script></body>"
    )
    assert html_to_text(html) == "# Hi\n\nSee [this](https://x.test) & that\n\n- one\n- two"
