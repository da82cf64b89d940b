"""Two bots on one platform in one real daemon: a second Telegram token is a second account,
bound to its own agent, answering through its own bot only."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.agents.conftest import OWNER, answer_as_agent, seed_houses
from tests.channels.fake_telegram import FakeTelegram, FakeUser
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, write_config

APPROVE = "/api/channels/pairing/approve"
WORK_TOKEN = "987654321:AAWorkBotTokenForTestsOnly_zyxwvutsrq"


def _bot(fake: FakeTelegram, token: str) -> dict[str, Any]:
    return {
        "enabled": True,
        "token": token,
        "allow_from": [str(OWNER)],
        "base_url": fake.base_url,
        "base_file_url": fake.base_file_url,
        "stream_edit_interval": 0.1,
        "poll_timeout": 2,
    }


@pytest.fixture
async def work_bot() -> AsyncIterator[FakeTelegram]:
    """The second bot's Telegram: its own server, its own token."""
    fake = FakeTelegram(token=WORK_TOKEN)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@contextlib.asynccontextmanager
async def two_bots(
    folder: Path, model: ScriptedModelServer, main_bot: FakeTelegram, work_bot: FakeTelegram
) -> AsyncIterator[Daemon]:
    """The daemon whose Telegram has the main bot and account `work` (its token kept in
    secrets.yaml), the account bound to agent `work`; account `spare` has no token."""
    config = write_config(folder, model)
    data = yaml.safe_load(config.read_text())
    secret = "channels.telegram.accounts.work.token"
    work = {**_bot(work_bot, "${secret:" + secret + "}")}
    data["channels"] = {
        "telegram": {
            **_bot(main_bot, main_bot.token),
            "accounts": {"work": work, "spare": {"enabled": True}},
        }
    }
    data["agents"] = {
        "others": {"work": {"workspace": str(folder / "ws-work")}},
        "bindings": [{"agent": "work", "channel": "telegram", "account": "work"}],
    }
    data["memory"] = {"embeddings": "off"}
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    (folder / "secrets.yaml").write_text(yaml.safe_dump({secret: WORK_TOKEN}), encoding="utf-8")
    seed_houses(folder, folder)
    settings = load_settings(config)
    model.responder = answer_as_agent
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            yield Daemon(running.port, running.context, settings)


async def test_each_bot_is_answered_by_its_accounts_agent_through_itself(
    tmp_path: Path,
    model_server: ScriptedModelServer,
    fake_telegram: FakeTelegram,
    work_bot: FakeTelegram,
) -> None:
    async with two_bots(tmp_path, model_server, fake_telegram, work_bot) as daemon:
        fake_telegram.user_says("hello", user=FakeUser(OWNER))
        assert await fake_telegram.wait_for_messages(OWNER) == ["answered by main"]
        work_bot.user_says("hello", user=FakeUser(OWNER))
        assert await work_bot.wait_for_messages(OWNER) == ["answered by work"]
        fake_telegram.user_says("again", user=FakeUser(OWNER))
        assert await fake_telegram.wait_for_messages(OWNER, 2) == ["answered by main"] * 2
        # Each answer went out once, through the bot it was written to.
        assert work_bot.chat_messages(OWNER) == ["answered by work"]
        sessions = {s.id for s in await daemon.context.runtime.sessions.list()}
        assert {f"telegram:{OWNER}", f"work@telegram.work:{OWNER}"} <= sessions
        async with daemon.http() as http:
            shown = (await http.get("/api/channels")).json()["channels"]
        account = next(c for c in shown if c["name"] == "telegram.work")
        assert account["state"] == "running" and account["settings"]["token"] != WORK_TOKEN
        assert WORK_TOKEN not in json.dumps(shown)
        spare = next(c for c in shown if c["name"] == "telegram.spare")
        assert spare["state"] == "misconfigured"
        assert spare["detail"].startswith("channels.telegram.accounts.spare.token is not set")


async def test_an_accounts_agent_messages_through_its_own_bot_only(
    tmp_path: Path,
    model_server: ScriptedModelServer,
    fake_telegram: FakeTelegram,
    work_bot: FakeTelegram,
) -> None:
    async with two_bots(tmp_path, model_server, fake_telegram, work_bot):
        own = {"channel": "telegram.work", "chat_id": str(OWNER), "text": "from the work bot"}
        other = {"channel": "telegram", "chat_id": str(OWNER), "text": "through main's bot"}
        calls = [("message", json.dumps(own)), ("message", json.dumps(other))]
        model_server.script(Reply.tool_calls(*calls), Reply.text("sent"))
        work_bot.user_says("tell me twice", user=FakeUser(OWNER))
        replies = await work_bot.wait_for_messages(OWNER, 2)
        assert replies == ["from the work bot", "sent"]
        refused = [
            str(message.get("content"))
            for body in model_server.requests
            for message in body["messages"]
            if message.get("role") == "tool"
        ][1]
        assert "bound to another agent" in refused
        assert fake_telegram.chat_messages(OWNER) == []


async def test_a_stranger_paired_on_one_bot_is_still_a_stranger_to_the_other(
    tmp_path: Path,
    model_server: ScriptedModelServer,
    fake_telegram: FakeTelegram,
    work_bot: FakeTelegram,
) -> None:
    stranger = FakeUser(555, "Mallory", "mallory")
    async with two_bots(tmp_path, model_server, fake_telegram, work_bot) as daemon:
        work_bot.user_says("let me in", user=stranger)
        [offer] = await work_bot.wait_for_messages(stranger.id)
        code = re.search(r"pairing approve telegram\.work ([A-Z0-9]+)", offer)
        assert code is not None
        async with daemon.http() as http:
            body = {"channel": "telegram.work", "code": code[1]}
            assert (await http.post(APPROVE, json=body)).status_code == 200
        work_bot.user_says("hello", user=stranger)
        assert (await work_bot.wait_for_messages(stranger.id, 2))[1] == "answered by work"
        fake_telegram.user_says("hello", user=stranger)
        [refused] = await fake_telegram.wait_for_messages(stranger.id)
        assert "pairing approve telegram " in refused
