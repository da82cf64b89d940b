"""What the first-hour fixes added to the protocol, against a real daemon: notices, the running
turn's replay, the Stop button's truth, and memory saves that check their version."""

from __future__ import annotations

from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon


async def test_notices_carry_status_and_every_session_list_change(daemon: Daemon) -> None:
    tab = await daemon.ws()
    await tab.send({"type": "subscribe_notices"})
    assert await tab.recv() == {
        "type": "status",
        "model_configured": True,
        "offline_default": False,
        "config": {"error": "", "restart": []},
    }
    sessions = daemon.context.runtime.sessions
    await sessions.create("s1", channel="telegram")
    await sessions.append("s1", {"type": "user", "content": "hi"})
    await sessions.rename("s1", "Trip")
    await sessions.delete("s1")
    async with daemon.http() as http:
        assert (await http.put("/api/settings", json={"model": {"name": ""}})).status_code == 200
    await tab.until("status", 2)
    changes = [(f["session_id"], f["change"]) for f in tab.of("sessions_changed")]
    assert changes == [("s1", "created"), ("s1", "updated"), ("s1", "renamed"), ("s1", "deleted")]
    assert tab.of("status")[-1]["model_configured"] is False
    # A client that did not ask hears none of it.
    quiet = await daemon.ws()
    await sessions.create("s2")
    await quiet.send({"type": "ping"})
    assert await quiet.recv() == {"type": "pong"}
    await tab.close()
    await quiet.close()


async def test_a_late_subscriber_gets_the_running_turn_so_far(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(
        Reply.text("An earlier answer."),
        Reply.text("one two three four five six", chunks=6, delay=0.5),
    )
    sender = await daemon.ws()
    await sender.send({"type": "message", "session_id": "live", "content": "first"})
    await sender.until("done")
    await sender.send({"type": "message", "session_id": "live", "content": "count"})
    await sender.until("stream", len(sender.of("stream")) + 2)
    async with daemon.http() as http:
        page = (await http.get("/api/sessions/live/messages")).json()
    assert page["running"] is True
    late = await daemon.ws()
    await late.send(
        {"type": "subscribe", "session_id": "live", "last_seq": None, "replay_turn": True}
    )
    done = await late.until("done")
    replayed = [f for f in late.frames if f.get("replay")]
    # The turn from its user message on, nothing of the finished one before it.
    assert replayed[0]["type"] == "user_message" and replayed[0]["content"] == "count"
    text = "".join(f["content"] for f in late.of("stream"))
    assert text == done["content"] == "one two three four five six"
    async with daemon.http() as http:
        assert (await http.get("/api/sessions/live/messages")).json()["running"] is False
    # Nothing runs: nothing is replayed.
    idle = await daemon.ws()
    await idle.send(
        {"type": "subscribe", "session_id": "live", "last_seq": None, "replay_turn": True}
    )
    await idle.send({"type": "ping"})
    assert await idle.recv() == {"type": "pong"}
    for client in (sender, late, idle):
        await client.close()


async def test_a_memory_save_based_on_an_old_version_is_refused_with_the_current_text(
    daemon: Daemon,
) -> None:
    memory = daemon.context.runtime.memory
    await memory.write("- likes tea\n")
    async with daemon.http() as http:
        loaded = await http.get("/api/memory")
        version = loaded.json()["version"]
        assert loaded.headers["etag"] == f'"{version}"'
        await memory.append("- birthday on 3 May")  # the assistant, meanwhile
        stale = await http.put(
            "/api/memory", json={"content": "- likes coffee\n"}, headers={"If-Match": version}
        )
        assert stale.status_code == 409
        current = stale.json()
        assert "birthday on 3 May" in current["content"] and "changed" in current["error"]
        assert await memory.read() == current["content"]  # nothing was lost
        fresh = await http.put(
            "/api/memory",
            json={"content": "- likes coffee\n"},
            headers={"If-Match": f'"{current["version"]}"'},
        )
        assert fresh.status_code == 200 and fresh.json()["content"] == "- likes coffee\n"
        # Without If-Match a save replaces the file as before (scripts, older clients).
        plain = await http.put("/api/memory", json={"content": "- plain\n"})
        assert plain.status_code == 200 and await memory.read() == "- plain\n"
