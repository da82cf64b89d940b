"""Auto-recall in a turn while the vector worker is slow or failing: its search starts with the
turn's opening and is joined later, so a turn cancelled meanwhile must leave the worker in
step, and a worker that fails must leave the turn answered with what full-text finds."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from countbot.agent.events import AgentEvent, TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.runtime.assembly import Runtime, open_runtime
from tests.memory_index.test_daemon import user_text
from tests.memory_index.test_embeddings import WAIT, EmbeddingServer
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

NOTES = "- The plumber comes on Friday\n- Lunch with Ana on Monday\n"
QUESTION = "When does the plumber come?"


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer() as running:
        yield running


async def _runtime(tmp_path: Path, model_server: ScriptedModelServer, url: str) -> Runtime:
    """A runtime as the daemon opens it, its vectors from the endpoint, MEMORY.md embedded."""
    settings = make_settings(tmp_path, model_server)
    settings.memory.embeddings = "endpoint"
    settings.memory.embeddings_url = url
    settings.memory.embeddings_model = "m"
    settings.workspace.mkdir(parents=True)
    (settings.workspace / "MEMORY.md").write_text(NOTES, encoding="utf-8")
    runtime = await open_runtime(settings, memory_vectors=True)
    await runtime.memory_index.catch_up()
    await asyncio.wait_for(runtime.memory_index.vectors_ready(), WAIT)
    return runtime


async def _events(runtime: Runtime, message: str, session_id: str) -> list[AgentEvent]:
    request = TurnRequest(message, session_id)
    return [event async for event in runtime.agent.process_message(request)]


async def test_a_turn_cancelled_while_its_recall_waits_leaves_the_worker_in_step(
    tmp_path: Path, model_server: ScriptedModelServer, server: EmbeddingServer
) -> None:
    runtime = await _runtime(tmp_path, model_server, server.url)
    vectors = runtime.memory_index.vectors
    try:
        assert vectors is not None and vectors.pid is not None
        pid, asked = vectors.pid, len(server.calls)
        server.held.add("m")  # the worker's embedding of the message waits on the endpoint
        turn = asyncio.create_task(_events(runtime, "Who do I have lunch with?", "first"))
        for _ in range(int(WAIT / 0.01)):
            if len(server.calls) > asked:
                break
            await asyncio.sleep(0.01)
        assert len(server.calls) > asked  # the search reached the worker
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        server.release()
        model_server.script(Reply.text("On Friday."))
        events = await _events(runtime, QUESTION, "second")
        assert isinstance(events[-1], TurnDone)
        assert len(model_server.requests) == 1  # the cancelled turn never called the model
        assert "The plumber comes on Friday" in user_text(model_server.requests[0])
        (recall,) = await runtime.memory_index.recalls("second")
        # Found by meaning too: the worker answered this search, not the abandoned one's.
        assert recall["hits"][0]["similarity"] is not None
        assert vectors.pid == pid  # never killed: still warm
        assert await runtime.memory_index.recalls("first") == []
    finally:
        server.release()
        await runtime.close()


async def test_a_failing_vector_worker_leaves_the_turn_answered_with_full_text_recall(
    tmp_path: Path, model_server: ScriptedModelServer, server: EmbeddingServer
) -> None:
    runtime = await _runtime(tmp_path, model_server, server.url)
    try:
        server.failing.add("m")  # the worker cannot embed the message: it answers an error
        model_server.script(Reply.text("On Friday."))
        events = await _events(runtime, QUESTION, "s1")
        assert isinstance(events[-1], TurnDone) and events[-1].content == "On Friday."
        assert "The plumber comes on Friday" in user_text(model_server.requests[-1])
        (recall,) = await runtime.memory_index.recalls("s1")
        assert [hit["similarity"] for hit in recall["hits"]] == [None]  # by its words alone
    finally:
        await runtime.close()
