"""The daemon runs every surface: Telegram and scheduled jobs next to the web UI, one gateway."""

from __future__ import annotations

from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import ALICE
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon


async def test_telegram_chat_is_answered_and_watched_from_the_web(
    daemon_with_telegram: Daemon, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    daemon = daemon_with_telegram
    model_server.script(Reply.text("Hello from your own assistant.", chunks=3))
    fake_telegram.user_says("hi there")
    answers = await fake_telegram.wait_for_messages(ALICE)
    assert answers[-1] == "Hello from your own assistant."
    web = await daemon.ws()  # the web UI opens the Telegram chat's session and replays it
    await web.send({"type": "subscribe", "session_id": f"telegram:{ALICE}", "last_seq": 0})
    done = await web.until("done")
    assert done["content"] == "Hello from your own assistant."
    await web.close()
    async with daemon.http() as http:
        states = (await http.get("/api/channels")).json()["channels"]
    telegram = next(s for s in states if s["name"] == "telegram")
    assert telegram["enabled"] and telegram["state"] == "running"
    assert fake_telegram.token not in str(states)


async def test_a_job_created_over_rest_runs_and_delivers_to_telegram(
    daemon_with_telegram: Daemon, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Your morning briefing: all quiet."))
    job = {
        "name": "briefing",
        "schedule": {"kind": "cron", "value": "0 8 * * *", "timezone": "Europe/Berlin"},
        "prompt": "Write my morning briefing.",
        "deliver_to": f"telegram:{ALICE}",
    }
    async with daemon_with_telegram.http() as http:
        created = await http.post("/api/cron/jobs", json=job)
        assert created.status_code == 201, created.text
        job_id = created.json()["id"]
        ran = await http.post(f"/api/cron/jobs/{job_id}/run?wait=1")
        assert ran.status_code == 200, ran.text
        runs = (await http.get(f"/api/cron/jobs/{job_id}/runs")).json()
    messages = await fake_telegram.wait_for_messages(ALICE)
    assert "Your morning briefing: all quiet." in messages[-1]
    assert "runs" in runs and runs["runs"][0]["delivered"] is True
    system = model_server.requests[-1]["messages"][0]["content"]
    assert "Safety" in system  # the job's turn got the full system prompt
    assert "scheduled" in str(model_server.requests[-1]["messages"][-1]).lower()


async def test_telegram_without_a_model_gets_the_guidance_and_the_settings_address(
    daemon_with_telegram: Daemon, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    async with daemon_with_telegram.http() as http:
        response = await http.put("/api/settings", json={"model": {"name": ""}})
        assert response.status_code == 200, response.text
    fake_telegram.user_says("hello?")
    [answer] = await fake_telegram.wait_for_messages(ALICE)
    assert answer.startswith("No model is configured yet, so nothing was sent.")
    assert "Choose a model on the Settings page" in answer
    assert f"http://127.0.0.1:{daemon_with_telegram.port}/#/settings" in answer
    assert "Sorry, that failed" not in answer and "model.name" not in answer
    assert model_server.requests == []
