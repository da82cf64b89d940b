"""The token worker is started ahead of need, through a real daemon: a session whose requests
near their budget starts it in the background, so the request that first needs exact counts
does not wait for its start; a short session never starts it (an idle daemon stays small)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from countbot.agent.context.tokens import bound, request_budget
from countbot.llm.token_process import TokenProcess
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import WAIT, Daemon, DaemonFactory

WINDOW = 65_536
LINE = "Tide tables for the week. "  # 26 bytes, 6 tokens
AHEAD = "starting the token worker ahead of need"


async def turn(daemon: Daemon, session: str, content: str) -> None:
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": session, "content": content})
    await client.until("done")
    await client.close()


async def started(tokens: TokenProcess) -> int:
    """The worker's pid once its start ahead of need is over."""
    async with asyncio.timeout(WAIT):
        await tokens.settled()
    assert tokens.pid is not None
    return tokens.pid


async def test_a_long_session_finds_the_worker_started_and_a_short_one_never_starts_it(
    start_daemon: DaemonFactory,
    model_server: ScriptedModelServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    requests: list[dict[str, Any]] = []
    seen_pids: list[int | None] = []

    async with start_daemon(model={"context_window": WINDOW}) as daemon:
        parts = await daemon.context.runtime.turn_parts()
        tokens = parts.ports.loops.tokens

        def play(body: dict[str, Any]) -> Reply:
            requests.append(body)
            seen_pids.append(tokens.pid)
            return Reply.text("Noted.")

        model_server.responder = play
        settings = daemon.settings
        budget = request_budget(WINDOW, settings.agent.context_budget, settings.model.max_tokens)
        # Half the budget: past half the room the system prompt and tools leave, yet within it
        # by its upper bound (so the first request fits uncounted); two of them are not.
        half = LINE * (budget // 2 // len(LINE) + 1)
        assert bound(half) * 2 > budget

        with caplog.at_level(logging.DEBUG, "countbot.llm.token_process"):
            for _ in range(3):
                await turn(daemon, "short", "hi, what's the tide today?")
            assert tokens.pid is None and AHEAD not in caplog.text

            await turn(daemon, "long", half)
            assert AHEAD in caplog.text  # the request fit uncounted and started the worker
            pid = await started(tokens)
            await turn(daemon, "long", half)  # over the budget by its bound: counted

    # The request that needed counts was counted by the worker started before it.
    assert seen_pids[-1] == pid
    # Counted exactly, both messages fit whole (by their upper bound they would not).
    users = [m["content"] for m in requests[-1]["messages"] if m["role"] == "user"]
    assert len(users) == 2 and all(text.endswith(half) for text in users)
