"""The scenario matrix: every shared behaviour, on every platform, through its fake (`drivers.py`).

In process (a runtime, gateway and channel manager as the daemon builds them): an allowed user is
answered once even when the platform sends the event twice, a stranger gets a pairing code and
talks once approved, a stranger's picture is neither downloaded nor saved, a long answer arrives
split with its code intact, a picture reaches the model, a due job arrives in the chat, an
approval question is shown in the chat and its answer counts (typed where the chat has no
buttons, and never a stranger's), and stopping while the connection drops is bounded. As a real
`countbot run` process: an event re-delivered after a SIGTERM or a `kill -9` restart is answered
once, an answer a kill cut off arrives once after the restart, and SIGTERM with the connection
dropping at that moment ends the process in time, again and again.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from countbot.channels.manager import SETTLE_GRACE, STOP_BOUND
from countbot.config.secret import SecretStr
from countbot.config.settings import Settings
from countbot.config.structs import replaced
from countbot.store.pairing import PairingStore
from tests.channels.daemon import ChannelDaemon, channel_daemon
from tests.channels.drivers import DRIVERS, Driver
from tests.channels.harness import Bot, running_bot
from tests.channels.loopback import wait_until
from tests.channels.scenarios import (
    PHOTO,
    assert_listing_intact,
    assert_model_saw_photo,
    long_listing,
    run_due_job,
    user_texts,
)
from tests.support.scripted_model import Reply, ScriptedModelServer

SHUTDOWN_ROUNDS = 3


@pytest.fixture(params=sorted(DRIVERS))
async def driver(request: pytest.FixtureRequest) -> AsyncIterator[Driver]:
    kind = DRIVERS[request.param]
    if not kind.available():
        pytest.skip(f"the {kind.name} SDK is not installed (tests/run.sh installs the extras)")
    platform = kind()
    await platform.open()
    try:
        yield platform
    finally:
        await platform.close()


@pytest.fixture
async def bot(settings: Settings, driver: Driver) -> AsyncIterator[Bot]:
    driver.configure(settings)
    async with running_bot(settings, driver.fake, driver.name) as running:  # type: ignore[attr-defined]
        await driver.ready()
        yield running


async def answered(driver: Driver, count: int = 1) -> list[str]:
    """The bot's finished messages in Alice's chat, once there are `count` of them."""
    await wait_until(
        lambda: (
            len(driver.answers()) >= count and not any(t.endswith(" …") for t in driver.answers())
        ),
        f"{count} answer(s) on {driver.name}",
        driver.answers,
    )
    return driver.answers()


# --- in process ------------------------------------------------------------------------------


async def test_an_allowed_user_is_answered_once_though_the_event_came_twice(
    bot: Bot, driver: Driver, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Hello, Alice."))
    event = await driver.says("hello there")
    assert await answered(driver) == ["Hello, Alice."]
    await driver.again(event)
    model_server.script(Reply.text("a second answer"))
    await asyncio.sleep(1.0)  # time to (wrongly) answer again
    assert driver.answers() == ["Hello, Alice."]
    assert len(model_server.requests) == 1
    assert "hello there" in user_texts(model_server.requests[0])


async def test_a_stranger_gets_a_pairing_code_and_talks_once_approved(
    bot: Bot, driver: Driver, model_server: ScriptedModelServer
) -> None:
    await driver.stranger_says("hello?")
    await wait_until(lambda: bool(driver.texts(driver.stranger_chat)), "the pairing code")
    (reply,) = driver.texts(driver.stranger_chat)
    assert f"countbot pairing approve {driver.name}" in reply
    assert model_server.requests == []

    pairing = PairingStore(bot.runtime.db)
    (pending,) = await pairing.pending(time.time())
    assert pending.code in reply
    assert await pairing.approve(driver.name, pending.code, time.time()) is not None
    model_server.script(Reply.text("Welcome!"))
    await driver.stranger_says("hello again")
    await wait_until(
        lambda: driver.texts(driver.stranger_chat)[1:] == ["Welcome!"],
        "the answer (streamed ones finished)",
        lambda: driver.texts(driver.stranger_chat),
    )


async def test_a_strangers_picture_is_never_downloaded(
    bot: Bot, driver: Driver, model_server: ScriptedModelServer, settings: Settings
) -> None:
    """Default deny comes before the files: the pairing reply, and nothing fetched or saved."""
    await driver.stranger_says("look at this", picture=PHOTO)
    await wait_until(lambda: bool(driver.texts(driver.stranger_chat)), "the pairing code")
    assert f"countbot pairing approve {driver.name}" in driver.texts(driver.stranger_chat)[0]
    assert driver.downloads() == 0
    media = settings.workspace / "media"
    assert not media.exists() or list(media.iterdir()) == []
    assert model_server.requests == []


async def test_a_long_answer_is_split_with_the_code_intact(
    bot: Bot, driver: Driver, model_server: ScriptedModelServer
) -> None:
    code, answer = long_listing(max(100, driver.limit // 30))
    model_server.script(Reply.text(answer))
    await driver.says("a long script please")
    await wait_until(lambda: "Run it." in "".join(driver.answers()), "the end of the answer")
    assert_listing_intact(await answered(driver, 2), code, driver.limit, fences=driver.fences)


async def test_a_picture_reaches_the_model(
    bot: Bot, driver: Driver, model_server: ScriptedModelServer, settings: Settings
) -> None:
    model_server.script(Reply.text("A lovely photo."))
    await driver.says("what is this?", picture=PHOTO)
    assert await answered(driver) == ["A lovely photo."]
    assert_model_saw_photo(model_server, settings)


async def test_a_due_job_arrives_in_the_chat(
    bot: Bot, driver: Driver, model_server: ScriptedModelServer
) -> None:
    await run_due_job(bot, model_server, driver.name, driver.me, "Good morning!")
    assert await answered(driver) == ["Good morning!"]


async def test_an_approval_question_is_shown_in_the_chat_and_its_answer_counts(
    settings: Settings, driver: Driver, model_server: ScriptedModelServer
) -> None:
    settings.tools.exec.approval = "always"
    driver.configure(settings)
    # The open door lets Mallory talk, but only the owner may answer a question.
    getattr(settings.channels, driver.name).allow_from.append("*")
    async with running_bot(settings, driver.fake, driver.name) as bot:  # type: ignore[attr-defined]
        await driver.ready()
        command = json.dumps({"command": f"echo from-{driver.name} > proof.txt"})
        model_server.script(Reply.tool_calls(("exec", command)), Reply.text("Done."))
        await driver.says("make the proof file")
        await wait_until(
            lambda: any("Approval needed" in t for t in driver.answers()), "the question"
        )
        (pending,) = bot.runtime.approvals.pending()
        if driver.buttons:
            assert bot.runtime.approvals.answer(pending.asked.id, "once", "web")
        else:
            await _answer_by_reply(driver, pending.asked.id[:6])
        await wait_until(lambda: "Done." in driver.answers(), "the answer", driver.answers)
        assert (settings.workspace / "proof.txt").read_text() == f"from-{driver.name}\n"


async def _answer_by_reply(driver: Driver, code: str) -> None:
    """The question says how to answer it; a stranger's answer is refused, the owner's counts."""
    (question,) = [t for t in driver.answers() if "Approval needed" in t]
    assert f"/approve {code}" in question and f"/deny {code}" in question
    await driver.stranger_says(f"/approve {code}")
    await wait_until(
        lambda: any("Only the owner" in t for t in driver.texts(driver.stranger_chat)),
        "the stranger's answer to be refused",
        lambda: driver.texts(driver.stranger_chat),
    )
    await driver.says(f"/approve {code}")
    await wait_until(lambda: "Approved once" in driver.answers(), "the owner's answer")


async def test_a_token_the_platform_refuses_stops_the_channel_and_says_so(
    settings: Settings, driver: Driver
) -> None:
    if not driver.token_key:
        pytest.skip(f"the {driver.name} fake checks no token")
    driver.configure(settings)
    section = getattr(settings.channels, driver.name)
    wrong = replaced(section, **{driver.token_key: SecretStr("123:not-the-token")})
    setattr(settings.channels, driver.name, wrong)
    async with running_bot(settings, driver.fake, driver.name) as bot:
        state = bot.state()
        assert (state["state"], state["problem"], state["restarts"]) == ("rejected", "rejected", 0)
        assert "rejected the bot token" in state["detail"] and "123:not" not in state["detail"]
        await asyncio.sleep(0.5)  # restart_delay is 0.2 s: a retry would have come by now
        assert bot.state()["state"] == "rejected"


async def test_stopping_while_the_connection_drops_is_bounded(
    settings: Settings, driver: Driver
) -> None:
    driver.configure(settings)
    async with running_bot(settings, driver.fake, driver.name) as bot:  # type: ignore[attr-defined]
        await driver.ready()
        dropping = asyncio.create_task(driver.drop())
        began = time.monotonic()
        await bot.manager.stop()
        assert time.monotonic() - began < SETTLE_GRACE + STOP_BOUND + 1
        assert bot.state()["state"] == "stopped"
        await dropping


# --- as a daemon process ---------------------------------------------------------------------


@pytest.mark.parametrize("how", ["sigterm", "kill -9"])
async def test_an_event_delivered_again_after_a_restart_is_answered_once(
    driver: Driver, settings: Settings, model_server: ScriptedModelServer, tmp_path: Path, how: str
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    async with channel_daemon(driver, settings, tmp_path) as daemon:
        await daemon.start()
        event = await driver.says("hello before the restart")
        assert await answered(driver) == ["answer 1"]
        # Settled a moment after the platform took it (a kill in between would send it again).
        await wait_until(lambda: _owed(daemon) == 0, "the answer to be marked delivered")
        await (daemon.sigterm() if how == "sigterm" else daemon.kill())

        await daemon.start()
        await driver.again(event)
        await driver.says("and after it")
        await wait_until(lambda: len(model_server.requests) >= 2, "the second message's turn")
        assert await answered(driver, 2) == ["answer 1", "answer 2"]
        await asyncio.sleep(1.0)  # time to (wrongly) answer the repeat too
        assert driver.answers() == ["answer 1", "answer 2"]
        asked = [user_texts(r) for r in model_server.requests]
        assert len(asked) == 2 and "after it" in asked[1]


async def test_an_answer_a_kill_cut_off_arrives_once_after_the_restart(
    driver: Driver, settings: Settings, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    model_server.script(Reply.text("The answer that was owed."))
    async with channel_daemon(driver, settings, tmp_path) as daemon:
        await daemon.start()
        driver.hold()  # the platform refuses the bot's messages: the answer stays owed
        await driver.says("answer me even if you crash")
        await wait_until(lambda: _owed(daemon) == 1, "the answer to be owed", daemon.log.copy)
        await daemon.kill()
        driver.release()

        await daemon.start()
        (answer,) = await answered(driver)
        assert answer.startswith("The answer that was owed.")
        await asyncio.sleep(1.0)
        assert len(driver.answers()) == 1 and len(model_server.requests) == 1
        await daemon.sigterm()  # fails past its bound
        await daemon.start()  # a second restart owes nothing any more
        await asyncio.sleep(1.0)
        assert len(driver.answers()) == 1


async def test_sigterm_while_the_connection_drops_always_stops_in_time(
    driver: Driver, settings: Settings, tmp_path: Path
) -> None:
    async with channel_daemon(driver, settings, tmp_path) as daemon:
        for _ in range(SHUTDOWN_ROUNDS):
            await daemon.start()
            dropping = asyncio.create_task(driver.drop())
            await daemon.sigterm()  # fails past the bound
            await dropping
            await driver.recover()


def _owed(daemon: ChannelDaemon) -> int:
    try:
        return daemon.owed()
    except Exception:  # the table is still being created
        return 0
