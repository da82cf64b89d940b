"""Turns through the daemon with a real model: streamed, stored, tools, cancel, a crash.

Properties only (structure, storage, order of events), never wording: the model is tiny.
"""

from __future__ import annotations

import asyncio
import os
import signal

import httpx
import pytest

from countbot.local_model.server import LocalServer
from tests.local_model.conftest import MODEL_WAIT, LocalDaemonFactory, until
from tests.web.conftest import Daemon

pytest.importorskip("xllamacpp", reason="the local extra: pip install -e '.[local]'")

# A fresh child reads the ~1.5k-token prompt for 20-30 s on one shared core.
pytestmark = [pytest.mark.local_model, pytest.mark.timeout(300)]


def _server(daemon: Daemon) -> LocalServer:
    server = daemon.context.runtime.models.local.server
    assert server is not None
    return server


async def _decoding(server: LocalServer) -> int | None:
    """Tokens the child's slot has generated for the running request (None when idle)."""
    base = (await server.url()).removesuffix("/v1")
    headers = {"Authorization": f"Bearer {server.api_key}"}
    async with httpx.AsyncClient(trust_env=False, timeout=10.0) as http:
        slot = (await http.get(f"{base}/slots", headers=headers)).json()[0]
    return slot["next_token"][0]["n_decoded"] if slot["is_processing"] else None


async def _until_generating(daemon: Daemon) -> LocalServer:
    """Wait until the child is generating (a tool call streams nothing, so frames cannot say)."""
    async with asyncio.timeout(MODEL_WAIT):
        while daemon.context.runtime.models.local.server is None:  # noqa: ASYNC110
            await asyncio.sleep(0.2)
        server = _server(daemon)
        while not server.running() or not await _decoding(server):  # noqa: ASYNC110
            await asyncio.sleep(0.2)
    return server


async def test_with_no_model_configured_the_built_in_one_answers_and_the_ui_says_so(
    start_local_daemon: LocalDaemonFactory,
) -> None:
    async with start_local_daemon(name="") as daemon:  # no model, no key: the embedded default
        async with daemon.http() as http:
            health = (await http.get("/api/health")).json()
        assert health["model_ready"] is True and health["offline_default"] is True
        client = await daemon.ws()
        content = "What is the capital of France? Answer in one sentence."
        await client.send({"type": "message", "session_id": "real", "content": content})
        done = await until(client, "done")
        streams = client.of("stream")
        assert done["content"].strip() and "".join(f["content"] for f in streams) == done["content"]
        assert len(streams) >= 2  # streamed as it was generated, not in one piece
        assert done["usage"]["completion_tokens"] > 0
        records = await daemon.context.runtime.sessions.messages("real", limit=100)
        assert records[-1]["type"] == "assistant" and records[-1]["text"] == done["content"]
        await client.close()
        child = _server(daemon).pid
    assert child is not None
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # the daemon stopped its model server on the way out


async def test_a_constrained_turn_calls_a_tool_in_the_workspace_then_answers(
    start_local_daemon: LocalDaemonFactory,
) -> None:
    async with start_local_daemon(max_tokens=192) as daemon:
        workspace = daemon.settings.workspace
        before = set(workspace.rglob("*"))
        content = "Use the write_file tool to write the word hi into the file hello.txt."
        # A 135M model is not reliable: its prompt carries the current time, and now and then it
        # rambles inside an argument until max_tokens cuts the call off (an answer saying so).
        # Each attempt is a fresh session; the properties below are checked on the one that
        # called a tool, and at least one of three must.
        for attempt in range(3):
            client = await daemon.ws()
            session = f"tool{attempt}"
            await client.send({"type": "message", "session_id": session, "content": content})
            done = await until(client, "done")
            if client.of("tool_start"):
                break
            await client.close()
        offered = set(daemon.context.runtime.tools.names())
        start, result = client.of("tool_start")[0], client.of("tool_result")[0]
        assert start["name"] in offered and isinstance(start["arguments"], dict)
        assert result["tool_call_id"] == start["tool_call_id"] and result["status"] == "ok"
        kinds = [f["type"] for f in client.frames]
        assert kinds.index("tool_start") < kinds.index("tool_result") < kinds.index("done")
        assert done["content"].strip()  # the model answered after the tool's result
        if start["name"] == "write_file":  # what it chose to do happened in the workspace
            assert set(workspace.rglob("*")) - before
        records = await daemon.context.runtime.tool_calls.query(session_id=session)
        assert records and records[-1]["name"] == start["name"]
        await client.close()


async def test_cancel_stops_the_child_generating(start_local_daemon: LocalDaemonFactory) -> None:
    async with start_local_daemon(max_tokens=2000) as daemon:
        client = await daemon.ws()
        content = "Write a very long story about a lighthouse keeper."
        await client.send({"type": "message", "session_id": "long", "content": content})
        server = await _until_generating(daemon)
        await client.send({"type": "cancel", "session_id": "long"})
        await until(client, "cancelled", timeout=20)
        # The closed connection is what stops llama.cpp: its slot goes idle within moments,
        # not after the 2000 tokens it was allowed.
        async with asyncio.timeout(10):
            while await _decoding(server) is not None:  # noqa: ASYNC110 - another process
                await asyncio.sleep(0.2)
        assert not client.of("done")
        await client.close()


async def test_a_crash_mid_turn_ends_it_with_an_error_and_restarts_the_child(
    start_local_daemon: LocalDaemonFactory,
) -> None:
    async with start_local_daemon(max_tokens=2000) as daemon:
        client = await daemon.ws()
        content = "Write a very long story about a lighthouse keeper."
        await client.send({"type": "message", "session_id": "crash", "content": content})
        server = await _until_generating(daemon)
        crashed = server.pid
        assert crashed is not None
        os.kill(crashed, signal.SIGKILL)
        error = await until(client, "error", timeout=30)
        assert "local model server stopped" in error["error"]
        assert not client.of("done")
        async with asyncio.timeout(60):
            while server.pid in (None, crashed) or not server.running():  # noqa: ASYNC110
                await asyncio.sleep(0.2)
        assert server.restarts == 1
        records = await daemon.context.runtime.sessions.messages("crash", limit=100)
        assert records  # the turn was stored, error and all
        await client.close()
