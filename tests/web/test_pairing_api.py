"""Pairing from the web: a stranger's code is listed, approved over REST, and they get answers."""

from __future__ import annotations

import time

import pytest

from countbot.store.pairing import PairingStore, SenderInfo
from tests.channels.fake_telegram import FakeTelegram, FakeUser
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon

STRANGER = FakeUser(555, "Mallory", "mallory")
EVIL = "http://evil.example"
APPROVE = "/api/channels/pairing/approve"


async def offer_code(daemon: Daemon, sender: SenderInfo) -> str:
    """A pairing code for `sender`, as the channel would have issued it."""
    store = PairingStore(daemon.context.runtime.db)
    code = await store.offer("telegram", sender, lambda: "K7QW3M", time.time())
    assert code is not None
    return code


async def test_a_stranger_approved_from_the_web_is_answered(
    daemon_with_telegram: Daemon, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    daemon = daemon_with_telegram
    fake_telegram.user_says("hello?", user=STRANGER)
    (offer,) = await fake_telegram.wait_for_messages(STRANGER.id)
    async with daemon.http() as http:
        listed = await http.get("/api/channels/pairing")
        assert listed.status_code == 200
        assert fake_telegram.token not in listed.text
        (waiting,) = listed.json()["pending"]
        assert waiting["code"] in offer
        assert waiting["channel"] == "telegram"
        assert waiting["sender"] == {
            "sender_id": "555",
            "username": "mallory",
            "display_name": "Mallory",
        }
        assert waiting["expires_at"] > waiting["created_at"]
        assert listed.json()["paired"] == []

        approved = await http.post(
            APPROVE, json={"channel": "telegram", "code": waiting["code"].lower()}
        )
        assert approved.status_code == 200, approved.text
        assert approved.json()["sender"]["username"] == "mallory"
        after = (await http.get("/api/channels/pairing")).json()
    assert after["pending"] == []
    assert [p["sender"]["sender_id"] for p in after["paired"]] == ["555"]
    assert model_server.requests == [], "a stranger's message reached the model"

    model_server.script(Reply.text("Nice to meet you, Mallory."))
    fake_telegram.user_says("hello again", user=STRANGER)
    messages = await fake_telegram.wait_for_messages(STRANGER.id, 2)
    assert messages[1] == "Nice to meet you, Mallory."
    assert "hello again" in str(model_server.requests[-1]["messages"][-1])


async def test_a_wrong_code_is_not_found_and_pairs_nobody(daemon: Daemon) -> None:
    await offer_code(daemon, SenderInfo("555", "mallory", "Mallory"))
    async with daemon.http() as http:
        wrong = await http.post(APPROVE, json={"channel": "telegram", "code": "ZZZZZZ"})
        assert wrong.status_code == 404
        assert "ZZZZZZ" in wrong.json()["error"]
        listed = (await http.get("/api/channels/pairing")).json()
    assert [r["code"] for r in listed["pending"]] == ["K7QW3M"]
    assert listed["paired"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"code": "K7QW3M"},
        {"channel": "carrier-pigeon", "code": "K7QW3M"},
        {"channel": ["telegram"], "code": "K7QW3M"},
        {"channel": "telegram"},
        {"channel": "telegram", "code": "  "},
        {"channel": "telegram", "code": 123456},
    ],
)
async def test_bad_input_is_refused(daemon: Daemon, body: dict[str, object]) -> None:
    async with daemon.http() as http:
        refused = await http.post(APPROVE, json=body)
    assert refused.status_code == 400
    assert refused.json()["error"]


async def test_an_approval_from_another_origin_is_refused(daemon: Daemon) -> None:
    code = await offer_code(daemon, SenderInfo("555", "mallory", "Mallory"))
    async with daemon.http() as http:
        refused = await http.post(
            APPROVE, json={"channel": "telegram", "code": code}, headers={"Origin": EVIL}
        )
        assert refused.status_code == 403
        listed = (await http.get("/api/channels/pairing")).json()
    assert [r["code"] for r in listed["pending"]] == [code]
    assert listed["paired"] == []
