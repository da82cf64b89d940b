"""A chat picks its own model among the configured ones; the pick outlives a restart."""

from __future__ import annotations

from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import DaemonFactory

MODELS = {"fallbacks": ["openai/other-model"]}


async def test_a_chat_answers_with_the_model_it_picked_even_after_a_restart(
    start_daemon: DaemonFactory, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("From the other."), Reply.text("Still the other."))
    async with start_daemon(model=MODELS) as daemon:
        async with daemon.http() as http:
            offered = (await http.get("/api/chat/models")).json()["models"]
        assert offered == ["openai/test-model", "openai/other-model"]
        client = await daemon.ws()
        frame = {"type": "message", "session_id": "pick", "model": "openai/other-model"}
        await client.send({**frame, "content": "who are you?"})
        assert (await client.until("done"))["model"] == "openai/other-model"
        await client.send({"type": "message", "session_id": "pick", "content": "and now?"})
        assert (await client.until("done", 2))["model"] == "openai/other-model"
        await client.close()
    assert [r["model"] for r in model_server.requests] == ["other-model", "other-model"]
    model_server.script(Reply.text("After the restart."), Reply.text("A fresh chat."))
    async with start_daemon(model=MODELS) as daemon:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": "pick", "content": "still you?"})
        assert (await client.until("done"))["model"] == "openai/other-model"
        await client.send({"type": "message", "session_id": "new", "content": "hello"})
        assert (await client.until("done", 2))["model"] == "openai/test-model"
        async with daemon.http() as http:
            sessions = (await http.get("/api/sessions")).json()["sessions"]
        await client.close()
    assert {s["id"]: s["model"] for s in sessions} == {"pick": "openai/other-model", "new": None}
    assert [r["model"] for r in model_server.requests[2:]] == ["other-model", "test-model"]


async def test_a_model_that_is_not_configured_is_refused_and_nothing_is_sent(
    start_daemon: DaemonFactory, model_server: ScriptedModelServer
) -> None:
    async with start_daemon(model=MODELS) as daemon:
        client = await daemon.ws()
        await client.send(
            {
                "type": "message",
                "session_id": "greedy",
                "content": "use my key elsewhere",
                "model": "anthropic/claude-opus",
                "client_id": "c1",
            }
        )
        error = await client.until("error")
        await client.close()
        assert error["client_id"] == "c1"
        assert "'anthropic/claude-opus' is not configured" in error["error"]
        assert "openai/test-model, openai/other-model" in error["error"]
        assert await daemon.context.runtime.sessions.get("greedy") is None
    assert model_server.requests == []
