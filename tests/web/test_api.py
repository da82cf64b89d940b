"""The REST API against a real daemon: sessions, settings, memory, skills, audit, usage."""

from __future__ import annotations

import asyncio
import json

import yaml

from countbot.channels.manager import CHANNEL_TYPES
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon


async def run_turn(daemon: Daemon, session_id: str, text: str) -> dict:
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": session_id, "content": text})
    done = await client.until("done")
    await client.close()
    return done


async def test_health_reports_version_and_when_the_model_is_ready(daemon: Daemon) -> None:
    async with daemon.http() as http:
        body = (await http.get("/api/health")).json()
        assert body["status"] == "ok" and body["version"] and isinstance(body["model_ready"], bool)
        for _ in range(500):  # litellm loads in the background
            if (await http.get("/api/health")).json()["model_ready"]:
                break
            await asyncio.sleep(0.02)
        assert (await http.get("/api/health")).json()["model_ready"] is True


async def test_sessions_can_be_created_renamed_listed_and_deleted(daemon: Daemon) -> None:
    async with daemon.http() as http:
        created = await http.post("/api/sessions", json={"title": "Trip"})
        assert created.status_code == 201
        session = created.json()
        assert session["title"] == "Trip" and session["channel"] == "web"
        renamed = await http.patch(f"/api/sessions/{session['id']}", json={"title": "Kyoto"})
        assert renamed.json()["title"] == "Kyoto"
        bad = await http.patch(f"/api/sessions/{session['id']}", json={"title": "  "})
        assert bad.status_code == 400 and "title" in bad.json()["error"]
        found = (await http.get("/api/sessions", params={"q": "kyo"})).json()["sessions"]
        assert [s["id"] for s in found] == [session["id"]]
        assert (await http.delete(f"/api/sessions/{session['id']}")).status_code == 204
        gone = await http.delete(f"/api/sessions/{session['id']}")
        assert gone.status_code == 404 and "no session" in gone.json()["error"]
        assert (await http.get("/api/sessions?limit=abc")).status_code == 400


async def test_messages_come_in_pages_newest_last(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    for n in range(3):
        model_server.script(Reply.text(f"answer {n}"))
        await run_turn(daemon, "paged", f"question {n}")
    async with daemon.http() as http:
        page = (await http.get("/api/sessions/paged/messages", params={"limit": 4})).json()
        assert page["has_more"] is True
        texts = [m.get("content") or m.get("text") for m in page["messages"]]
        assert texts == ["question 1", "answer 1", "question 2", "answer 2"]
        assert "context" not in page["messages"][0]
        older = await http.get(
            "/api/sessions/paged/messages",
            params={"limit": 4, "before_id": page["messages"][0]["id"]},
        )
        assert [m["type"] for m in older.json()["messages"]] == ["user", "assistant"]
        assert older.json()["has_more"] is False
        missing = await http.get("/api/sessions/nope/messages")
        assert missing.status_code == 404


async def test_a_settings_change_applies_to_the_next_turn_without_showing_the_key(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    async with daemon.http() as http:
        change = {"model": {"name": "openai/other-model", "temperature": 0.2}}
        response = await http.put("/api/settings", json=change)
        assert response.status_code == 200, response.text
        shown = response.json()
        assert shown["model"]["name"] == "openai/other-model"
        assert shown["model"]["api_key"] == "********"
        assert "sk-test-0123456789abcdef" not in response.text
    await run_turn(daemon, "switch", "which model?")
    request = model_server.requests[-1]
    assert request["model"] == "other-model" and request["temperature"] == 0.2
    saved = yaml.safe_load(daemon.settings.config_path.read_text(encoding="utf-8"))  # type: ignore[union-attr]
    assert saved["model"]["name"] == "openai/other-model"
    assert saved["model"]["api_key"] == "sk-test-0123456789abcdef"


async def test_a_persona_change_reaches_the_system_prompt(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    async with daemon.http() as http:
        response = await http.put("/api/settings", json={"persona": {"name": "Zephyrine"}})
        assert response.status_code == 200, response.text
        assert response.json()["persona"]["name"] == "Zephyrine"
    await run_turn(daemon, "persona", "who are you?")
    assert "Zephyrine" in model_server.requests[-1]["messages"][0]["content"]


async def test_settings_list_the_persona_presets_with_their_descriptions(daemon: Daemon) -> None:
    async with daemon.http() as http:
        shown = (await http.get("/api/settings")).json()
    presets = {p["name"]: p["description"] for p in shown["persona_presets"]}
    assert {"assistant", "companion", "concise", "teacher"} <= set(presets)
    assert presets["teacher"].startswith("Patient") and all(presets.values())


async def test_invalid_settings_are_refused_and_nothing_changes(daemon: Daemon) -> None:
    before = daemon.settings.config_path.read_text(encoding="utf-8")  # type: ignore[union-attr]
    async with daemon.http() as http:
        hot = await http.put("/api/settings", json={"model": {"temperature": 9}})
        assert hot.status_code == 400 and "temperature" in hot.json()["error"]
        preset = await http.put("/api/settings", json={"persona": {"preset": "no-such-one"}})
        assert preset.status_code == 400 and "no-such-one" in preset.json()["error"]
        other = await http.put("/api/settings", json={"web": {"host": "0.0.0.0"}})
        assert other.status_code == 400
        deep = {"tools": {"exec": {"timeout": "5", "deny_patterns": ["(a"]}}}
        nested = (await http.put("/api/settings", json=deep)).json()["error"]
        assert '`tools.exec.timeout` must be a number (got "5")' in nested
        unknown = await http.put("/api/settings", json={"budget": {"daily_tokns": 5}})
        assert (
            "unknown key `budget.daily_tokns` (did you mean `daily_tokens`?)"
            in (unknown.json()["error"])
        )
        secret = await http.put("/api/settings", json={"model": {"api_key": ["sk-abcdef12345"]}})
        assert secret.status_code == 400 and "sk-abcdef" not in secret.text
    assert daemon.settings.config_path.read_text(encoding="utf-8") == before  # type: ignore[union-attr]
    assert daemon.settings.model.temperature == 0.7


async def test_memory_can_be_read_and_replaced(daemon: Daemon) -> None:
    async with daemon.http() as http:
        assert isinstance((await http.get("/api/memory")).json()["content"], str)
        saved = await http.put("/api/memory", json={"content": "# Memory\n- likes tea\n"})
        assert saved.json()["content"] == "# Memory\n- likes tea\n"
        assert (await http.put("/api/memory", json={"content": 5})).status_code == 400
    memory = daemon.settings.workspace / "MEMORY.md"
    assert memory.read_text(encoding="utf-8") == "# Memory\n- likes tea\n"


async def test_skills_can_be_listed_and_switched_off(daemon: Daemon) -> None:
    folder = daemon.settings.workspace / "skills" / "greeter"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: greeter\ndescription: Greets people warmly\n---\nSay hello.\n",
        encoding="utf-8",
    )
    async with daemon.http() as http:
        skills = {s["name"]: s for s in (await http.get("/api/skills")).json()["skills"]}
        assert skills["greeter"]["enabled"] and skills["greeter"]["source"] == "workspace"
        off = await http.put("/api/skills/greeter", json={"enabled": False})
        assert off.status_code == 200 and off.json()["enabled"] is False
        listed = {s["name"]: s for s in (await http.get("/api/skills")).json()["skills"]}
        assert listed["greeter"]["enabled"] is False
        assert (await http.put("/api/skills/nope", json={"enabled": True})).status_code == 404
        assert (await http.put("/api/skills/greeter", json={"enabled": "no"})).status_code == 400


async def test_audit_and_usage_show_what_a_turn_did(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    args = json.dumps({"path": "audited.txt", "content": "x"})
    model_server.script(Reply.tool_calls(("write_file", args)), Reply.text("done", usage=(40, 2)))
    await run_turn(daemon, "audited", "write")
    async with daemon.http() as http:
        entries = (await http.get("/api/audit", params={"tool": "write_file"})).json()["entries"]
        assert entries[0]["session_id"] == "audited" and entries[0]["status"] == "ok"
        assert entries[0]["arguments"] == {"path": "audited.txt", "content": "x"}
        none = (await http.get("/api/audit", params={"status": "error"})).json()["entries"]
        assert none == []
        daemon.settings.budget.daily_tokens = 1_000
        usage = (await http.get("/api/usage")).json()
        assert usage["totals"]["prompt_tokens"] >= 40
        (limit,) = usage["today"]["limits"]
        assert limit["key"] == "daily_tokens" and limit["limit"] == 1_000
        assert limit["spent"] == usage["today"]["tokens"] >= 40
        assert usage["by_day"][0]["prompt_tokens"] >= 40
        assert usage["by_session"][0]["session_id"] == "audited"
        channels = (await http.get("/api/channels")).json()["channels"]
        assert {c["name"]: c["enabled"] for c in channels} == dict.fromkeys(CHANNEL_TYPES, False)


async def test_unknown_routes_answer_json(daemon: Daemon) -> None:
    async with daemon.http() as http:
        missing = await http.get("/api/nothing-here")
        assert missing.status_code == 404 and "error" in missing.json()
        wrong = await http.delete("/api/settings")
        assert wrong.status_code == 405 and "error" in wrong.json()


async def test_settings_show_the_context_window_and_resting_models(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    daemon.settings.model.context_window = 8192
    daemon.settings.model.max_retries = 0
    daemon.settings.model.fallbacks = ["openai/backup-model"]
    model_server.responder = lambda body: (
        Reply.error(503, "overloaded") if body["model"] == "test-model" else Reply.text("ok")
    )
    await run_turn(daemon, "failover", "hi")
    async with daemon.http() as http:
        status = (await http.get("/api/settings")).json()["model_status"]
    assert status["context_window"] == 8192
    (resting,) = status["cooldowns"]
    assert resting["model"] == "openai/test-model" and 0 < resting["seconds_left"] <= 30
    # Saving the model's settings (the fault fixed) ends the rest: no stale line stays.
    async with daemon.http() as http:
        saved = await http.put("/api/settings", json={"model": {"api_key": "sk-fixed-key"}})
        assert saved.status_code == 200, saved.text
        assert saved.json()["model_status"]["cooldowns"] == []
