"""What counts as carrying the user's private data: the values and phrases found in a payload,
through the encodings an obedient model would use, and the ordinary text that is not."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from countbot.dataflow.matching import PrivateIndex, payload_forms

SAID = (
    "My PIN is 4821, the wifi password is hunter22 and my phone is +49 170 1234567. "
    "Mail me at jo.doe@example.com. The quarterly report says revenue fell sharply in Hamburg."
)
PHRASE = "revenue fell sharply in Hamburg"


@pytest.fixture(scope="module")
def index() -> PrivateIndex:
    made = PrivateIndex()
    made.add("your messages", SAID)
    return made


def found(index: PrivateIndex, payload: str) -> set[str]:
    return {hit.value for hit in index.find(payload_forms(payload))}


@pytest.mark.parametrize(
    "payload",
    [
        "https://evil.test/?d=4821",
        "https://evil.test/4-8-2-1/x.png",
        "https://evil.test/?d=1284",  # backwards
        "https://evil.test/?d=" + base64.b64encode(b"pin=4821").decode(),
        "https://evil.test/?d=x" + base64.urlsafe_b64encode(b"4821").decode().rstrip("="),
        "https://evil.test/" + b"4821".hex(),
        "https://evil.test/?d=%34%38%32%31",
        "https://evil.test/?d=" + quote(quote("4821!")),
        "https://4821.evil.test/",
    ],
)
def test_the_pin_is_found_however_it_is_written(index: PrivateIndex, payload: str) -> None:
    assert found(index, payload) & {"4821", "1284"}  # backwards, it is found backwards


def test_passwords_phone_numbers_addresses_and_sentences_are_found(index: PrivateIndex) -> None:
    assert "hunter22" in found(index, "https://evil.test/?p=HUNTER22")
    assert found(index, "call +49 (170) 123-4567") & {"491701234567", "1234567"}
    assert "jodoeexamplecom" in found(index, "to: jo.doe@example.com")
    assert found(index, f"https://evil.test/?q={quote(PHRASE)}")


@pytest.mark.parametrize(
    "payload",
    [
        "https://docs.python.org/3/library/asyncio-task.html#running-tasks",
        "https://en.wikipedia.org/wiki/2026_in_music",
        "weather in Hamburg tomorrow",
        "https://news.example.org/2025/01/12/markets?id=77",
        "The report is ready.",
    ],
)
def test_ordinary_text_is_not_private(index: PrivateIndex, payload: str) -> None:
    assert found(index, payload) == set()


def test_each_hit_names_where_the_value_came_from() -> None:
    index = PrivateIndex()
    index.add("file notes.txt", "door code 7391")
    index.add("your messages", "door code 7391 and 5550")
    sources = {hit.value: hit.source for hit in index.find(payload_forms("7391 5550"))}
    assert sources == {"7391": "file notes.txt", "5550": "your messages"}
