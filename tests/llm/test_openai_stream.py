"""The server-sent events' framing, cut from bytes however the network splits them."""

from __future__ import annotations

import pytest

from countbot.llm.openai_stream import EventData

STREAM = (
    b'\xef\xbb\xbfdata: {"a": 1}\n\n: ping\n\ndata: two\ndata: lines\n\nevent: x\n\n'
    b"data: [DONE]\n\n"
)
EVENTS = [b'{"a": 1}', b"two\nlines", b"[DONE]"]


def fed(pieces: list[bytes]) -> list[bytes]:
    events = EventData()
    return [data for piece in pieces for data in events.feed(piece)]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_any_line_ending_in_any_split_gives_the_same_events(ending: bytes) -> None:
    stream = STREAM.replace(b"\n", ending)

    assert fed([stream]) == EVENTS
    assert fed([stream[i : i + 1] for i in range(len(stream))]) == EVENTS
    for cut in range(len(stream)):
        assert fed([stream[:cut], stream[cut:]]) == EVENTS


def test_an_event_the_stream_ends_in_is_dropped() -> None:
    assert fed([b"data: whole\n\ndata: half"]) == [b"whole"]
    assert fed([b"data: whole\n\ndata: no blank line yet\n"]) == [b"whole"]
