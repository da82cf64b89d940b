"""Webhooks through the real daemon: signed deliveries become one turn each, answered in the
owner's chat; everything else is refused before it can reach the model."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import httpx

from countbot.config.settings import Settings
from countbot.triggers.dispatcher import READ_ONLY_TOOLS
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import ALICE
from tests.dataflow.conftest import audit_records
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.triggers.conftest import (
    GITHUB_SECRET,
    ISSUE,
    SECRET,
    DaemonWithTriggers,
    body_of,
    github_headers,
    settled,
    standard_headers,
)


async def test_a_delivery_sent_three_times_is_answered_once_in_telegram(
    trigger_daemon: DaemonWithTriggers,
    model_server: ScriptedModelServer,
    fake_telegram: FakeTelegram,
) -> None:
    model_server.script(Reply.text("Issue #7: the app crashes on start."))
    body = body_of(ISSUE)
    headers = standard_headers(body, delivery="msg_issue_7")
    async with trigger_daemon() as daemon, daemon.http() as http:
        answers = [await http.post("/hooks/issues", content=body, headers=headers) for _ in "123"]
        assert [a.status_code for a in answers] == [202, 200, 200]
        assert len({a.json()["event"] for a in answers}) == 1
        assert await fake_telegram.wait_for_messages(ALICE) == [
            "Issue #7: the app crashes on start."
        ]
        event = await settled(http, answers[0].json()["event"])
        assert (event["status"], event["attempts"]) == ("delivered", 1)
        again = await http.post("/hooks/issues", content=body, headers=headers)
        assert again.status_code == 200
        asked = await audit_records(daemon, "approval")
    assert asked == []  # the ordinary flow ran without a question
    (request,) = model_server.requests
    user = request["messages"][-1]["content"]
    text = user if isinstance(user, str) else " ".join(p.get("text", "") for p in user)
    # The owner's instruction is the message; the payload sits beside it as a stranger's words.
    assert "Summarize this issue" in text
    assert '<external source="what trigger hook:issues received">' in text
    assert "Crash on start" in text
    offered = {tool["function"]["name"] for tool in request.get("tools", ())}
    assert offered <= READ_ONLY_TOOLS
    assert "exec" not in offered and "message" not in offered


async def test_what_is_not_a_signed_delivery_never_reaches_the_model(
    trigger_daemon: DaemonWithTriggers, model_server: ScriptedModelServer
) -> None:
    body = body_of(ISSUE)
    wrong_key = "whsec_" + "QUJD" * 8
    deep = b"[" * 950 + b"]" * 950  # parsed by json, deeper than a recursive walk can follow
    cases = {
        "bad signature": ("/hooks/issues", body, standard_headers(body, secret=wrong_key)),
        "no signature": ("/hooks/issues", body, {"content-type": "application/json"}),
        "stale": ("/hooks/issues", body, standard_headers(body, at=time.time() - 3600)),
        "unknown hook": ("/hooks/nobody", body, standard_headers(body)),
        "github, bad": ("/hooks/github", body, github_headers(body, secret="guess")),
        "github as standard": ("/hooks/github", body, standard_headers(body)),
        "malformed JSON": ("/hooks/issues", b'{"issue": ', standard_headers(b'{"issue": ')),
        "nested too deeply": ("/hooks/issues", deep, standard_headers(deep)),
    }
    async with trigger_daemon() as daemon, daemon.http() as http:
        statuses = {}
        for what, (path, content, headers) in cases.items():
            answer = await http.post(path, content=content, headers=headers)
            statuses[what] = (answer.status_code, answer.json()["error"])
        huge = b"[" + b"0," * (25 * 1024 * 1024) + b"0]"  # 50 MB of valid JSON
        too_big = await http.post("/hooks/issues", content=huge, headers=standard_headers(b"x"))
        wrong_method = await http.get("/hooks/issues")
        events = (await http.get("/api/triggers/events")).json()["events"]
    assert statuses["bad signature"] == (401, "bad signature")
    assert statuses["no signature"][0] == 401 and "missing signature" in statuses["no signature"][1]
    assert statuses["stale"][0] == 401 and "timestamp" in statuses["stale"][1]
    assert statuses["unknown hook"] == (404, "no webhook named 'nobody'")
    assert statuses["github, bad"] == (401, "bad signature")
    assert statuses["github as standard"][0] == 401
    status, error = statuses["malformed JSON"]
    assert status == 400 and "malformed JSON" in error
    assert statuses["nested too deeply"] == (400, "malformed JSON: nested too deeply")
    assert too_big.status_code == 413
    assert wrong_method.status_code == 405
    assert events == [] and model_server.requests == []


async def test_a_github_delivery_is_kept_in_the_triggers_session(
    trigger_daemon: DaemonWithTriggers, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Someone opened issue 7."))
    body = body_of(ISSUE)
    async with trigger_daemon() as daemon, daemon.http() as http:
        answer = await http.post("/hooks/github", content=body, headers=github_headers(body))
        assert answer.status_code == 202
        event = await settled(http, answer.json()["event"])
        history = (await http.get("/api/sessions/trigger:github/messages")).json()
    assert (event["status"], event["answer"]) == ("delivered", "Someone opened issue 7.")
    assert "kept in session trigger:github" in event["detail"]
    assert any("Someone opened issue 7." in str(m) for m in history["messages"])
    assert GITHUB_SECRET not in str(model_server.requests) and SECRET not in str(history)


async def test_each_trigger_spends_its_own_conversation_budget(
    trigger_daemon: DaemonWithTriggers, model_server: ScriptedModelServer
) -> None:
    costly = dataclasses.replace(Reply.text("First issue summarized."), usage=(5_000, 0))
    model_server.script(costly)

    def tight(settings: Settings) -> None:
        settings.budget.session_tokens = 6_000  # one such turn per trigger and day

    async def post(http: httpx.AsyncClient, hook: str, n: int) -> dict:
        body = body_of({**ISSUE, "n": n})
        headers = github_headers(body) if hook == "github" else standard_headers(body)
        answer = await http.post(f"/hooks/{hook}", content=body, headers=headers)
        return await settled(http, answer.json()["event"])

    async with trigger_daemon(configure=tight) as daemon, daemon.http() as http:
        first = await post(http, "issues", 1)
        model_server.script(Reply.text("unused"))
        second = await post(http, "issues", 2)
        other = await post(http, "github", 3)
    assert first["answer"] == "First issue summarized."
    assert second["answer"].startswith("Budget reached")
    assert other["answer"] == "unused"  # the other trigger's session still had its budget
    assert len(model_server.requests) == 2


async def test_a_webhook_added_in_the_web_ui_works_at_once_and_can_be_switched_off(
    trigger_daemon: DaemonWithTriggers, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    model_server.script(Reply.text("A form was sent."))
    body = body_of({"form": "contact", "message": "hello"})
    async with trigger_daemon() as daemon, daemon.http() as http:
        new = {"name": "forms", "prompt": "Summarize this form.", "deliver": "web"}
        made = await http.post("/api/triggers/hooks", json=new)
        assert made.status_code == 201
        secret = made.json()["secret"]
        sent = await http.post(
            "/hooks/forms", content=body, headers=standard_headers(body, secret=secret)
        )
        assert sent.status_code == 202
        event = await settled(http, sent.json()["event"])
        listed = (await http.get("/api/triggers")).json()["triggers"]
        twice = await http.post("/api/triggers/hooks", json=new)
        off = await http.patch("/api/triggers/hooks/forms", json={"enabled": False})
        assert off.status_code == 200
        refused = await http.post(
            "/hooks/forms", content=body, headers=standard_headers(body, secret=secret)
        )
        bad_name = await http.post("/api/triggers/hooks", json={**new, "name": "no spaces"})
    assert event["answer"] == "A form was sent."
    assert {t["name"] for t in listed} == {"issues", "github", "forms"}
    assert twice.status_code == 409 and refused.status_code == 404 and bad_name.status_code == 400
    # The secret went to secrets.yaml; config.yaml names it only.
    assert secret not in (tmp_path / "config.yaml").read_text(encoding="utf-8")
    assert secret in (tmp_path / "secrets.yaml").read_text(encoding="utf-8")
