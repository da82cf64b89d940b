"""Token counts through a real daemon: made in the token worker, never in the daemon's process
(tiktoken's load would hold the event loop's GIL); a worker that dies mid-turn is started again,
and one that hangs costs the turn its exactness only (upper bounds stand in; the log says so)."""

from __future__ import annotations

import json
import logging
import os
import signal
from typing import Any

import pytest

from countbot.agent.context.tokens import bound, request_budget
from countbot.llm.token_counter import encoding
from tests.support.loop_watch import RESPONSIVE, LoopWatch
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.wire_tokens import wire_tokens
from tests.web.conftest import Daemon, DaemonFactory

# Room for the message and the file it reads only when counted exactly, beside the daemon's own
# prompt and tool schemas (which grow as it gains tools: the margin is ~1,300 tokens).
WINDOW = 20_480
TEXT = "Tide tables for the week. " * 500  # 13,000 bytes, ~3,000 tokens


async def tide_turn(
    daemon: Daemon, model_server: ScriptedModelServer, signum: int
) -> tuple[list[dict[str, Any]], str]:
    """A turn with a long message whose model reads a long file; `signum` reaches the token
    worker between the two (after it counted the message, before it counts the file)."""
    parts = await daemon.context.runtime.turn_parts()  # the daemon builds them at a first turn
    settings, tokens = daemon.settings, parts.ports.loops.tokens
    (settings.workspace / "tides.txt").write_text(TEXT)
    requests: list[dict[str, Any]] = []

    def play(body: dict[str, Any]) -> Reply:
        requests.append(body)
        if len(requests) > 1:
            return Reply.text("Read.")
        assert tokens.pid is not None
        os.kill(tokens.pid, signum)
        return Reply.tool_calls(("read_file", json.dumps({"path": "tides.txt"})))

    model_server.responder = play
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "tides", "content": TEXT})
    done = await client.until("done")
    await client.close()
    return requests, done["content"]


def budget_of(daemon: Daemon) -> int:
    settings = daemon.settings
    return request_budget(WINDOW, settings.agent.context_budget, settings.model.max_tokens)


async def test_a_turn_counts_in_the_worker_and_outlives_its_death(
    start_daemon: DaemonFactory, model_server: ScriptedModelServer
) -> None:
    loads = encoding.cache_info()
    async with start_daemon(model={"context_window": WINDOW}) as daemon:
        assert bound(TEXT) > budget_of(daemon)  # only counting lets the message go whole
        async with LoopWatch() as watch:
            requests, answer = await tide_turn(daemon, model_server, signal.SIGKILL)

    assert answer == "Read."
    assert encoding.cache_info() == loads  # the daemon's process never built a tokenizer
    assert TEXT in requests[0]["messages"][-1]["content"]
    assert requests[1]["messages"][-1]["content"] == TEXT  # counted by a new worker
    assert watch.worst < RESPONSIVE  # coarse: bench/hostile_inputs.py measures the stall


async def test_a_hung_worker_leaves_upper_bounds_and_a_log_line(
    start_daemon: DaemonFactory,
    model_server: ScriptedModelServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with start_daemon(model={"context_window": WINDOW}) as daemon:
        with caplog.at_level(logging.WARNING, "countbot.llm.token_process"):
            requests, answer = await tide_turn(daemon, model_server, signal.SIGSTOP)
        budget = budget_of(daemon)

    assert answer == "Read."
    assert "token counts unavailable" in caplog.text
    # The message keeps its count; the file's result, fitted by its upper bound, is cut, and
    # the request stays within its budget.
    assert TEXT in requests[1]["messages"][1]["content"]
    result = requests[1]["messages"][-1]
    assert result["role"] == "tool" and TEXT not in result["content"]
    assert wire_tokens(requests[1]) <= budget
