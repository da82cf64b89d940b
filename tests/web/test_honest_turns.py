"""Honest turns on every surface: the web socket, Telegram, a cron delivery and `chat -m`.

A turn stopped at its step limit shows what the model wrote, then the notice; retries and the
answering model are visible; an identical call repeated is stopped as a loop; a Stop during the
summary at a turn's start ends the turn at once.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path

from countbot.agent.context.summary import SUMMARY_INSTRUCTIONS
from countbot.agent.history import AssistantEntry, UserEntry, to_record
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import ALICE
from tests.cli.test_chat import run, write_config
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon

STEPS = 2


def busy_model(model_server: ScriptedModelServer) -> None:
    """A model that says a little and lists another folder every time, never finishing."""
    folders = itertools.count()
    model_server.responder = lambda body: Reply.tool_calls(
        ("list_dir", json.dumps({"path": f"f{next(folders)}"})), text="Still looking."
    )


async def test_the_web_socket_shows_retries_the_step_limit_and_the_answering_model(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    client = await daemon.ws()
    model_server.script(Reply.error(503, "overloaded"), Reply.text("Fine, thanks."))
    await client.send({"type": "message", "session_id": "s1", "content": "how are you?"})
    done = await client.until("done")
    (retry,) = client.of("notice")
    assert retry["code"] == "retrying" and retry["details"]["attempt"] == 1
    assert retry["transient"] and "overloaded" in retry["details"]["cause"]
    assert done["content"] == "Fine, thanks." and done["model"] == "openai/test-model"

    daemon.settings.agent.max_iterations = STEPS
    busy_model(model_server)
    await client.send({"type": "message", "session_id": "s1", "content": "find my file"})
    done = await client.until("done", 2)
    notice = client.frames[client.frames.index(done) - 1]
    assert notice["type"] == "notice" and notice["code"] == "step_limit"
    assert notice["details"] == {"steps": STEPS} and not notice["transient"]
    assert done["content"] == "Still looking.\n\nStill looking."
    await client.close()


async def test_telegram_and_a_cron_delivery_get_the_partial_answer_then_the_notice(
    daemon_with_telegram: Daemon, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    daemon_with_telegram.settings.agent.max_iterations = STEPS
    busy_model(model_server)
    fake_telegram.user_says("find my file")
    answer = (await fake_telegram.wait_for_messages(ALICE))[-1]
    assert answer.startswith("Still looking.\n\nStill looking.")
    assert f"I stopped after {STEPS} steps without finishing" in answer

    job = {
        "name": "search",
        "schedule": {"kind": "cron", "value": "0 8 * * *"},
        "prompt": "Find my file.",
        "deliver_to": f"telegram:{ALICE}",
    }
    async with daemon_with_telegram.http() as http:
        created = await http.post("/api/cron/jobs", json=job)
        assert created.status_code == 201, created.text
        ran = await http.post(f"/api/cron/jobs/{created.json()['id']}/run?wait=1")
        assert ran.status_code == 200, ran.text
    messages = await fake_telegram.wait_for_messages(ALICE, count=2)
    delivered = messages[-1]
    assert delivered.startswith("Still looking.") and "I stopped after" in delivered


def test_chat_m_prints_the_partial_answer_then_the_loop_notice(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server)
    write = ("write_file", json.dumps({"path": "a.txt", "content": "hi"}))
    model_server.responder = lambda body: Reply.tool_calls(write, text="Writing.")
    result = run("chat", "-m", "write a.txt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip()
    assert lines.startswith("Writing.\n\nWriting.\n\nWriting.")
    assert lines.endswith("choosing a stronger model may help.")
    assert "kept calling write_file" in lines
    assert len(model_server.requests) == 3  # the loop was cut short, not run to 25 steps


async def test_stop_during_a_summary_ends_the_turn_within_a_second_over_the_socket(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    sessions = daemon.context.runtime.sessions
    for number in range(daemon.settings.agent.max_history // 2 + 1):  # one past the window
        await sessions.append("long", to_record(UserEntry(f"question {number}")))
        await sessions.append("long", to_record(AssistantEntry(f"answer {number}")))
    model_server.responder = lambda body: (
        Reply.text("- a summary", delay=5.0)
        if body["messages"][0]["content"] == SUMMARY_INSTRUCTIONS
        else Reply.text("Answer.")
    )
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "long", "content": "one more"})
    notice = await client.until("notice")
    assert notice["code"] == "summarizing" and notice["transient"]
    # The summary's call is the daemon's first, which opens the HTTP client (in a worker
    # thread) first: stop it once it is in flight.
    for _ in range(100):
        if model_server.requests:
            break
        await asyncio.sleep(0.05)
    asked = time.monotonic()
    await client.send({"type": "cancel", "session_id": "long"})
    await client.until("cancelled")
    assert time.monotonic() - asked < 1.0
    assert not client.of("done") and len(model_server.requests) == 1  # no answer was asked for
    await client.close()
