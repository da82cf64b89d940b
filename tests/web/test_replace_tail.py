"""Regenerate and edit over the socket: `replace_from` replaces the stored tail, or is refused."""

from __future__ import annotations

from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon


async def stored(daemon: Daemon, session_id: str) -> list[dict]:
    async with daemon.http() as http:
        page = (await http.get(f"/api/sessions/{session_id}/messages")).json()
    return page["messages"]


async def test_replace_from_runs_the_new_words_in_place_of_the_old_tail(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Ten."), Reply.text("Twelve."), Reply.text("Fourteen."))
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "edit", "content": "a number?"})
    await client.until("done")
    await client.send({"type": "message", "session_id": "edit", "content": "another?"})
    await client.until("done", 2)
    second = [r for r in await stored(daemon, "edit") if r["type"] == "user"][1]
    frame = {"type": "message", "session_id": "edit", "content": "an even one?"}
    await client.send({**frame, "replace_from": second["id"]})
    assert (await client.until("done", 3))["content"] == "Fourteen."
    records = await stored(daemon, "edit")
    assert [(r["type"], r.get("content") or r.get("text")) for r in records] == [
        ("user", "a number?"),
        ("assistant", "Ten."),
        ("user", "an even one?"),
        ("assistant", "Fourteen."),
    ]
    await client.close()


async def test_replace_from_is_refused_without_losing_anything(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Ten."), Reply.text("slow " * 20, chunks=10, delay=0.3))
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "keep", "content": "a number?"})
    await client.until("done")
    records = await stored(daemon, "keep")
    answer_id = records[1]["id"]
    frame = {"type": "message", "session_id": "keep", "content": "x", "client_id": "r1"}
    await client.send({**frame, "replace_from": answer_id})  # an answer, not a user message
    error = await client.until("error")
    assert error["client_id"] == "r1" and "names no message the user sent" in error["error"]
    await client.send({"type": "message", "session_id": "keep", "content": "slowly?"})
    await client.send({**frame, "replace_from": records[0]["id"], "client_id": "r2"})
    busy = await client.until("error", 2)
    assert busy["client_id"] == "r2" and "a turn is running" in busy["error"]
    await client.until("done", 2)
    assert [r["type"] for r in await stored(daemon, "keep")] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    await client.close()


async def test_an_ill_formed_replace_from_is_a_protocol_error(daemon: Daemon) -> None:
    client = await daemon.ws()
    for value, problem in (("3", "positive integer"), (0, "positive integer"), (5, "session_id")):
        session = None if problem == "session_id" else "s"
        await client.send(
            {"type": "message", "session_id": session, "content": "x", "replace_from": value}
        )
        error = await client.recv()
        assert error["type"] == "error" and problem in error["error"]
    await client.close()
