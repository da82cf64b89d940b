"""Every surface's text passes `InboundMessage`, which repairs invalid Unicode once for all."""

from __future__ import annotations

from countbot.gateway.messages import InboundMessage


def test_a_lone_surrogate_from_any_channel_becomes_a_replacement_character() -> None:
    message = InboundMessage(channel="telegram", content="caf\udce9 \ud83d\ude00 end\ud800")
    assert message.content == "caf\ufffd \U0001f600 end\ufffd"
    message.content.encode("utf-8")  # storable and sendable


def test_valid_text_is_kept_as_it_is() -> None:
    text = "Grüße, 你好 \U0001f600"
    assert InboundMessage(channel="web", content=text).content is text
