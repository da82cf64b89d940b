"""The gateway end to end: real runtime, real SQLite, litellm talking to the scripted model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from countbot.agent.events import AgentEvent, TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import GatewaySettings
from countbot.gateway.events import SessionEvent
from countbot.gateway.gateway import Gateway, GatewayClosedError, OneLoop
from countbot.gateway.messages import InboundMessage, QueueMode
from countbot.gateway.watchers import Watcher
from countbot.runtime.assembly import Runtime
from tests.support.scripted_model import Reply, ScriptedModelServer

WAIT = 60.0  # an upper bound for a loaded 2-core CI machine; passing tests never wait it out


@pytest.fixture
async def gateway(runtime: Runtime) -> AsyncIterator[Gateway]:
    gw = Gateway(OneLoop(runtime.agent), runtime.sessions, GatewaySettings())
    yield gw
    await gw.close(grace=5)


def msg(content: str, session: str = "s1", mode: QueueMode | None = None) -> InboundMessage:
    return InboundMessage(channel="test", content=content, session_id=session, mode=mode)


async def model_requests(server: ScriptedModelServer, count: int) -> None:
    """Wait until the scripted model has received `count` requests."""
    for _ in range(int(WAIT * 100)):
        if len(server.requests) >= count:
            return
        await asyncio.sleep(0.01)
    raise TimeoutError(f"the model got {len(server.requests)} requests, not {count}")


class Tab:
    """A watcher that records every frame it receives."""

    def __init__(self, gw: Gateway, session: str | None = None) -> None:
        self.watcher = Watcher()
        self.frames: list[dict[str, Any]] = []
        if session is not None:
            gw.hub.subscribe(session, self.watcher)

    async def until(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while True:
                item = await self.watcher.queue.get()
                frame = item.to_frame(self.watcher) if isinstance(item, SessionEvent) else item
                self.frames.append(frame)
                if check(frame):
                    return frame

        return await asyncio.wait_for(wait(), WAIT)

    async def until_type(self, kind: str, count: int = 1) -> dict[str, Any]:
        seen = 0

        def check(frame: dict[str, Any]) -> bool:
            nonlocal seen
            seen += frame["type"] == kind
            return seen >= count

        return await self.until(check)

    def types(self) -> list[str]:
        return [f["type"] for f in self.frames]


async def test_a_turn_streams_numbered_events_and_ends_with_done(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Hello from the gateway", chunks=3))
    tab = Tab(gateway)
    submitted = await gateway.submit(msg("hi"), origin=tab.watcher, client_id="c1")
    done = await tab.until_type("done")
    assert done["content"] == "Hello from the gateway"
    assert tab.frames[0] == {
        "type": "session",
        "queued": False,
        "client_id": "c1",
        "session_id": "s1",
        "seq": tab.frames[0]["seq"],
    }
    assert submitted.session_id == "s1" and not submitted.queued
    seqs = [f["seq"] for f in tab.frames]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert "".join(f["content"] for f in tab.frames if f["type"] == "stream") == done["content"]


async def test_a_message_without_session_starts_a_new_stored_session(
    gateway: Gateway, runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    tab = Tab(gateway)
    submitted = await gateway.submit(
        InboundMessage(channel="web", content="new one"), origin=tab.watcher
    )
    await tab.until_type("done")
    info = await runtime.sessions.get(submitted.session_id)
    assert info is not None and info.channel == "web" and info.title == "new one"


async def test_other_watchers_see_the_message_and_the_whole_stream(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("shared answer"))
    other = Tab(gateway, "s1")
    sender = Tab(gateway)
    await gateway.submit(msg("hello both"), origin=sender.watcher)
    await sender.until_type("done")
    await other.until_type("done")
    assert other.frames[0]["type"] == "user_message"
    assert other.frames[0]["content"] == "hello both"
    assert sender.frames[0]["type"] == "session"
    assert [f["seq"] for f in other.frames] == [f["seq"] for f in sender.frames]
    assert other.frames[1:] == sender.frames[1:]


async def test_sessions_run_concurrently_but_one_turn_at_a_time_each(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    # The first request is slow; a second session's turn must not wait for it.
    model_server.script(Reply.text("slow answer", chunks=4, delay=0.3), Reply.text("quick"))
    slow, quick = Tab(gateway), Tab(gateway)
    await gateway.submit(msg("slow", "a"), origin=slow.watcher)
    await slow.until_type("stream")
    await gateway.submit(msg("quick", "b"), origin=quick.watcher)
    await quick.until_type("done")
    assert "done" not in slow.types()
    await slow.until_type("done")


async def test_followup_waits_for_the_running_turn(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("first answer", chunks=3, delay=0.2), Reply.text("second"))
    tab = Tab(gateway)
    await gateway.submit(msg("one"), origin=tab.watcher)
    await tab.until_type("stream")
    second = await gateway.submit(msg("two", mode="followup"), origin=tab.watcher)
    assert second.queued
    await tab.until_type("done", 2)
    dones = [f["content"] for f in tab.frames if f["type"] == "done"]
    assert dones == ["first answer", "second"]
    acks = [f for f in tab.frames if f["type"] == "session"]
    assert [a["queued"] for a in acks] == [False, True]
    # The second request was built after the first turn ended, with its answer in history.
    last_request = json.dumps(model_server.requests[-1]["messages"])
    assert "first answer" in last_request and "two" in last_request


async def test_steer_skips_tools_not_yet_started_and_reaches_the_next_model_call(
    gateway: Gateway, runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    args = json.dumps({"path": "steered.txt", "content": "x"})
    model_server.script(
        Reply.tool_calls(("write_file", args), chunk_size=2, delay=0.05),
        Reply.text("Understood, I will not write it."),
    )
    tab = Tab(gateway)
    await gateway.submit(msg("write a file"), origin=tab.watcher)
    await model_requests(model_server, 1)  # the turn is past its steering check, streaming
    steered = await gateway.submit(msg("stop, don't write it", mode="steer"), origin=tab.watcher)
    assert steered.queued
    done = await tab.until_type("done")
    assert done["content"] == "Understood, I will not write it."
    assert not (runtime.settings.workspace / "steered.txt").exists()
    records = await runtime.sessions.messages("s1", limit=50)
    results = [r for r in records if r["type"] == "tool_result"]
    assert [r["status"] for r in results] == ["skipped"]
    assert "don't write it" in json.dumps(model_server.requests[-1]["messages"])
    assert tab.types().count("done") == 1


async def test_a_steer_the_turn_never_reads_runs_as_a_followup(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("plain answer", chunks=4, delay=0.2), Reply.text("after"))
    tab = Tab(gateway)
    await gateway.submit(msg("one"), origin=tab.watcher)
    await tab.until_type("stream")
    await gateway.submit(msg("also this", mode="steer"), origin=tab.watcher)
    await tab.until_type("done", 2)
    assert [f["content"] for f in tab.frames if f["type"] == "done"] == ["plain answer", "after"]


async def test_interrupt_cancels_the_running_turn_then_runs_the_message(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("a very slow answer", chunks=6, delay=1.0), Reply.text("new"))
    tab = Tab(gateway)
    await gateway.submit(msg("slow"), origin=tab.watcher)
    await tab.until_type("stream")
    await gateway.submit(msg("never mind", mode="interrupt"), origin=tab.watcher)
    await tab.until_type("done")
    terminal = [f["type"] for f in tab.frames if f["type"] in ("done", "cancelled", "error")]
    assert terminal == ["cancelled", "done"]
    assert tab.frames[-1]["content"] == "new"


async def test_cancel_reaches_the_running_turn(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("this takes forever", chunks=8, delay=1.0))
    tab = Tab(gateway)
    await gateway.submit(msg("slow"), origin=tab.watcher)
    await tab.until_type("stream")
    assert gateway.cancel("s1")
    await tab.until_type("cancelled")
    assert await asyncio.to_thread(model_server.wait_abandoned, 1, 10.0)
    assert not gateway.busy("s1")
    assert not gateway.cancel("s1")


class StuckAgent:
    """An agent whose turn "hang" ignores its cancel token (a stuck hook, a wedged model)."""

    def __init__(self, *, ignore_task_cancel: bool = False) -> None:
        self.ignore_task_cancel = ignore_task_cancel
        self.release = asyncio.Event()

    async def process_message(self, request: TurnRequest) -> AsyncIterator[AgentEvent]:
        message = request.message
        while message == "hang" and not self.release.is_set():
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                if not self.ignore_task_cancel:
                    raise
        yield TurnDone(f"answered {message}")


@pytest.mark.parametrize("ignore_task_cancel", [False, True])
async def test_the_watchdog_ends_a_stuck_turn_and_frees_the_lane(
    runtime: Runtime, ignore_task_cancel: bool
) -> None:
    agent = StuckAgent(ignore_task_cancel=ignore_task_cancel)
    gw = Gateway(
        OneLoop(agent), runtime.sessions, GatewaySettings(turn_deadline=0.2), kill_grace=0.1
    )
    tab = Tab(gw)
    try:
        await gw.submit(msg("hang"), origin=tab.watcher)
        await gw.submit(msg("next"), origin=tab.watcher)
        error = await tab.until_type("error")
        assert (
            "longer than 0.2 s" in error["error"] and not error["retryable"]
        )  # the same request would time out again
        done = await tab.until_type("done")
        assert done["content"] == "answered next"
        assert not gw.busy("s1")
    finally:
        agent.release.set()
        await gw.close(grace=1)
    # The abandoned turn, released late, adds nothing to the stream.
    await asyncio.sleep(0.05)
    assert tab.watcher.queue.empty()


async def test_close_lets_a_running_turn_finish_within_the_grace(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("one two three four", chunks=4, delay=0.3))
    tab = Tab(gateway)
    await gateway.submit(msg("short"), origin=tab.watcher)
    await gateway.submit(msg("queued behind it"), origin=tab.watcher)
    await tab.until_type("stream")
    await gateway.close(grace=10)
    done = await tab.until_type("done")
    assert done["content"] == "one two three four"
    assert len(model_server.requests) == 1  # the queued message did not start a turn
    with pytest.raises(GatewayClosedError):
        await gateway.submit(msg("too late"))


async def test_close_cancels_a_turn_still_running_after_the_grace(
    gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("slow slow slow", chunks=8, delay=1.0))
    tab = Tab(gateway)
    await gateway.submit(msg("slow"), origin=tab.watcher)
    await tab.until_type("stream")
    await gateway.close(grace=0.5)
    await tab.until_type("cancelled")
    with pytest.raises(GatewayClosedError):
        await gateway.submit(msg("too late"))
