"""The built-in tiny model behaves: a greeting gets a plain answer, a file task does not loop.

Properties only, never wording: SmolLM2 135M is tiny. Tools are offered only when the message
asks for them (`agent/toolset.py`), and repeated calls are stopped (`agent/tool_loops.py`).
"""

from __future__ import annotations

import pytest

from tests.local_model.conftest import LocalDaemonFactory, until

pytest.importorskip("xllamacpp", reason="the local extra: pip install -e '.[local]'")

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(300)]


async def test_a_greeting_is_answered_without_a_tool_call(
    start_local_daemon: LocalDaemonFactory,
) -> None:
    async with start_local_daemon() as daemon:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": "hello", "content": "Hello!"})
        done = await until(client, "done")
        assert client.of("tool_start") == [] and done["content"].strip()
        request_tools = daemon.context.runtime.tools.names()
        assert request_tools  # tools exist; the greeting was simply not offered them
        await client.close()


async def test_a_file_request_ends_without_looping(start_local_daemon: LocalDaemonFactory) -> None:
    async with start_local_daemon(max_tokens=192) as daemon:
        client = await daemon.ws()
        content = "Create a file called hello.txt containing hi"
        await client.send({"type": "message", "session_id": "file", "content": content})
        await until(client, "done")
        calls = client.of("tool_start")
        assert len(calls) <= 3  # once it wrote 25 identical files for this request
        assert {call["name"] for call in calls} <= {"write_file"}
        await client.close()
