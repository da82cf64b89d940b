"""The `message` tool in real turns: the model sends a workspace file to the Telegram chat it is
talking in, and hears the truth when Telegram refuses."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator

import pytest

from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import Settings
from tests.channels.harness import ALICE, Bot, telegram_bot
from tests.support.scripted_model import Reply, ScriptedModelServer


@pytest.fixture
async def bot(settings: Settings) -> AsyncIterator[Bot]:
    async with telegram_bot(settings) as running:
        yield running


def tool_results(server: ScriptedModelServer) -> list[str]:
    """The tool results the model was shown, in order."""
    seen: dict[str, str] = {}
    for request in server.requests:
        for message in request["messages"]:
            if message["role"] == "tool":
                seen[message["tool_call_id"]] = str(message["content"])
    return list(seen.values())


def send(**arguments: object) -> Reply:
    return Reply.tool_calls(("message", json.dumps(arguments)))


async def test_the_model_sends_a_workspace_file_into_this_chat(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    (settings.workspace / "report.txt").write_text("quarterly numbers")
    model_server.script(send(text="Here it is", files=["report.txt"]), Reply.text("Sent!"))
    bot.fake.user_says("send me the report")

    await bot.fake.wait_for_messages(ALICE, 3)
    (document,) = bot.fake.calls_to("sendDocument")
    assert document.chat_id == str(ALICE) and document.files["document"] == b"quarterly numbers"
    assert bot.fake.chat_messages(ALICE)[0] == "Here it is"
    (result,) = tool_results(model_server)
    assert result.startswith(f"Delivered to telegram:{ALICE}")


async def test_a_refusal_reaches_the_model_as_a_failure(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    (settings.workspace / "big.bin").write_bytes(b"x" * 100)
    bot.fake.refuse("sendDocument", status=400, description="Bad Request: file is too big")
    model_server.script(send(files=["big.bin"]), Reply.text("Telegram refused the file."))
    bot.fake.user_says("send me big.bin")

    await bot.fake.wait_for_messages(ALICE)
    (result,) = tool_results(model_server)
    assert result.startswith(f"Error: not delivered to telegram:{ALICE}")
    assert "file is too big" in result.lower()


async def test_files_outside_the_workspace_never_leave(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    secret = settings.workspace.parent / "outside.txt"
    secret.write_text("not for chat")
    model_server.script(send(files=[str(secret)]), Reply.text("I can't send that."))
    bot.fake.user_says("send me the outside file")

    await bot.fake.wait_for_messages(ALICE)
    (result,) = tool_results(model_server)
    assert result.startswith("Error:") and "outside the workspace" in result
    assert bot.fake.calls_to("sendDocument") == []


async def test_outside_a_chat_the_model_must_name_one(
    bot: Bot, model_server: ScriptedModelServer
) -> None:
    model_server.script(send(text="hello"), Reply.text("Which chat?"))
    await bot.runtime.agent.process_direct(
        TurnRequest("message someone", "web-session", channel="web")
    )

    (result,) = tool_results(model_server)
    assert "name a channel (running: telegram) and a chat_id" in result

    model_server.script(send(text="Reminder!", channel="telegram", chat_id=str(ALICE)))
    model_server.script(Reply.text("Done."))
    await bot.runtime.agent.process_direct(
        TurnRequest("remind alice", "web-session", channel="web")
    )
    assert bot.fake.chat_messages(ALICE) == ["Reminder!"]


async def test_a_hard_linked_or_symlinked_way_out_is_refused(
    bot: Bot, model_server: ScriptedModelServer, settings: Settings
) -> None:
    secret = settings.workspace.parent / "outside.txt"
    secret.write_text("not for chat")
    os.link(secret, settings.workspace / "linked.txt")
    (settings.workspace / "pointer.txt").symlink_to(secret)
    model_server.script(send(files=["linked.txt"]), Reply.text("No."))
    model_server.script(send(files=["pointer.txt"]), Reply.text("No."))
    bot.fake.user_says("send me linked.txt")
    await bot.fake.wait_for_messages(ALICE)
    bot.fake.user_says("send me pointer.txt")
    await bot.fake.wait_for_messages(ALICE, 2)

    linked, pointer = tool_results(model_server)
    assert linked.startswith("Error:") and "hard links" in linked
    assert pointer.startswith("Error:") and "outside the workspace" in pointer
    assert bot.fake.calls_to("sendDocument") == []
