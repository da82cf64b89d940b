"""The ReAct loop alone (`agent/loop.py`), through the in-memory harness: a scripted model and
tools that are functions, no runtime, store, HTTP or disk (`tests/support/loop_harness.py`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from countbot.agent.cancel import CancelToken
from countbot.agent.context.summary import SUMMARY_INSTRUCTIONS
from countbot.agent.events import (
    AgentEvent,
    TextChunk,
    ToolEnd,
    ToolStart,
    TurnCancelled,
    TurnDone,
    TurnError,
    TurnNotice,
)
from countbot.agent.tool_loops import IDENTICAL_CALLS
from countbot.common.authorship import Said
from countbot.config.settings import AgentSettings
from countbot.llm.types import ChatRequest, SystemMessage, ToolResultMessage, UserMessage
from countbot.tools.base import ToolTransientError
from tests.support.loop_harness import FunctionTool, LoopHarness, ModelReply


def ends(events: list[AgentEvent]) -> list[AgentEvent]:
    return [e for e in events if isinstance(e, TurnDone | TurnCancelled) or e.type == "error"]


def notice_codes(events: list[AgentEvent]) -> list[str]:
    return [e.code for e in events if isinstance(e, TurnNotice)]


def kinds(harness: LoopHarness) -> list[str]:
    return [record["type"] for record in harness.stored()]


async def test_a_plain_answer_streams_and_is_stored() -> None:
    harness = LoopHarness(prompt="You are terse.")
    harness.script(ModelReply.answer("Hello there, friend!", chunks=4))
    events = await harness.turn("hi")
    chunks = [e.content for e in events if isinstance(e, TextChunk)]
    assert len(chunks) == 4 and "".join(chunks) == "Hello there, friend!"
    assert ends(events) == [events[-1]] and events[-1].content == "Hello there, friend!"
    assert kinds(harness) == ["user", "assistant"]
    (request,) = harness.model.requests
    assert request.messages[0] == SystemMessage("You are terse.")
    assert isinstance(request.messages[-1], UserMessage)


async def test_a_tool_call_runs_and_the_model_reads_its_result() -> None:
    lookup = FunctionTool("lookup", lambda args: f"{args['city']}: 21 degrees")
    harness = LoopHarness(tools=[lookup])
    harness.script(
        ModelReply.tool_calls(("lookup", {"city": "Oslo"})), ModelReply.answer("It is 21 there.")
    )
    events = await harness.turn("weather in Oslo?")
    start = next(e for e in events if isinstance(e, ToolStart))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert start.arguments == {"city": "Oslo"} and end.status == "ok"
    assert events[-1] == TurnDone("It is 21 there.", events[-1].usage, events[-1].model)
    result = harness.model.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage) and result.content == "Oslo: 21 degrees"
    assert kinds(harness) == ["user", "assistant", "tool_result", "assistant"]
    assert [r.name for r in harness.tool_calls] == ["lookup"]
    assert harness.tool_calls[0].user_message == "weather in Oslo?"


async def test_idempotent_calls_run_together_and_others_one_after_another() -> None:
    trace: list[str] = []
    both_reading = asyncio.Event()

    async def read(args: dict[str, Any]) -> str:
        trace.append(f"start {args['n']}")
        if sum(step.startswith("start") for step in trace) == 2:
            both_reading.set()
        # Run one after the other, the two reads would never meet: the first goes on alone.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(both_reading.wait(), 5)
        trace.append(f"end {args['n']}")
        return f"done {args['n']}"

    async def write(args: dict[str, Any]) -> str:
        trace.append(f"start {args['n']}")
        for _ in range(50):  # passes of the event loop: a write running beside it starts now
            await asyncio.sleep(0)
        trace.append(f"end {args['n']}")
        return f"done {args['n']}"

    tools = [FunctionTool("read", read, idempotent=True), FunctionTool("write", write)]
    harness = LoopHarness(tools=tools)
    harness.script(
        ModelReply.tool_calls(("read", {"n": 1}), ("read", {"n": 2}), ("write", {"n": 3})),
        ModelReply.tool_calls(("write", {"n": 4}), ("write", {"n": 5})),
        ModelReply.answer("All done."),
    )
    events = await harness.turn("do the work")
    assert trace[:4] == ["start 1", "start 2", "end 1", "end 2"] or trace[:4] == [
        *("start 1", "start 2", "end 2", "end 1")
    ]
    assert trace[4:] == ["start 3", "end 3", "start 4", "end 4", "start 5", "end 5"]
    # Results come back in the order the model asked for them.
    assert [e.result for e in events if isinstance(e, ToolEnd)] == [
        f"done {n}" for n in range(1, 6)
    ]
    assert isinstance(events[-1], TurnDone) and events[-1].content == "All done."


async def test_a_read_that_fails_once_is_retried() -> None:
    attempts: list[int] = []

    def flaky(args: dict[str, Any]) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ToolTransientError("connection reset")
        return "page text"

    harness = LoopHarness(tools=[FunctionTool("fetch", flaky, idempotent=True)])
    harness.script(ModelReply.tool_calls(("fetch", {"url": "u"})), ModelReply.answer("Read it."))
    events = await harness.turn("fetch it")
    (end,) = [e for e in events if isinstance(e, ToolEnd)]
    assert len(attempts) == 2 and end.status == "ok" and end.result == "page text"


async def test_a_failing_tool_is_reported_to_the_model_which_answers() -> None:
    def broken(args: dict[str, Any]) -> str:
        raise ValueError("disk quota exceeded")

    harness = LoopHarness(tools=[FunctionTool("save", broken)])
    harness.script(ModelReply.tool_calls(("save", {"x": 1})), ModelReply.answer("Saving failed."))
    events = await harness.turn("save it")
    (end,) = [e for e in events if isinstance(e, ToolEnd)]
    assert end.status == "error" and "disk quota exceeded" in end.result
    result = harness.model.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert "disk quota exceeded" in result.content
    assert isinstance(events[-1], TurnDone) and events[-1].content == "Saving failed."


async def test_a_stop_while_the_model_writes_ends_the_turn_once() -> None:
    harness = LoopHarness()
    harness.script(ModelReply.stalled("Once upon a time"))
    token = CancelToken()
    events: list[AgentEvent] = []
    async for event in harness.run("tell me a story", cancel_token=token):
        events.append(event)
        if isinstance(event, TextChunk):
            token.cancel()
    assert ends(events) == [events[-1]] and isinstance(events[-1], TurnCancelled)
    assert kinds(harness) == ["user", "assistant", "note"]
    assert harness.stored()[1]["stop_reason"] == "cancelled"
    assert harness.stored()[1]["text"] == "Once upon a time"


async def test_a_stop_while_a_tool_runs_stops_it_and_ends_the_turn_once() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def endless(args: dict[str, Any]) -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "never"

    harness = LoopHarness(tools=[FunctionTool("build", endless)])
    harness.script(ModelReply.tool_calls(("build", {"target": "all"}), ("build", {"target": "x"})))
    token = CancelToken()

    async def press_stop_once_it_runs() -> None:
        await started.wait()
        token.cancel()

    stop = asyncio.create_task(press_stop_once_it_runs())
    events = await harness.turn("build everything", cancel_token=token)
    await stop
    assert stopped.is_set()
    assert ends(events) == [events[-1]] and isinstance(events[-1], TurnCancelled)
    # The first call was stopped; the second never started.
    assert [e.status for e in events if isinstance(e, ToolEnd)] == ["cancelled"]
    assert len(harness.model.requests) == 1


async def test_the_step_limit_ends_a_turn_with_what_was_written() -> None:
    harness = LoopHarness(
        tools=[FunctionTool("step", lambda args: "ok")], settings=AgentSettings(max_iterations=3)
    )
    harness.model.responder = lambda request: ModelReply.tool_calls(
        ("step", {"n": len(harness.model.requests)}), text=f"step {len(harness.model.requests)}."
    )
    events = await harness.turn("keep going")
    assert notice_codes(events) == ["step_limit"]
    assert len([e for e in events if isinstance(e, ToolEnd)]) == 3
    assert ends(events) == [events[-1]] and isinstance(events[-1], TurnDone)
    assert events[-1].content == "step 1.\n\nstep 2.\n\nstep 3."
    assert kinds(harness)[-1] == "note" and harness.stored()[-1]["code"] == "step_limit"


async def test_a_model_calling_the_same_tool_again_and_again_is_stopped() -> None:
    tool = FunctionTool("list_dir", lambda args: "a.txt b.txt")
    harness = LoopHarness(tools=[tool])
    harness.model.responder = lambda request: ModelReply.tool_calls(("list_dir", {"path": "."}))
    events = await harness.turn("what is here?")
    assert notice_codes(events) == ["tool_loop"]
    assert len(tool.calls) == 1  # the repeats were answered from the first result, not run
    assert len([e for e in events if isinstance(e, ToolEnd)]) == IDENTICAL_CALLS
    assert ends(events) == [events[-1]] and isinstance(events[-1], TurnDone)


async def test_a_model_failure_ends_the_turn_with_its_error_kept() -> None:
    harness = LoopHarness()
    harness.script(ModelReply.failure("the provider is overloaded", retryable=True))
    events = await harness.turn("hi")
    assert ends(events) == [events[-1]] and isinstance(events[-1], TurnError)
    assert events[-1].retryable and "overloaded" in events[-1].error
    assert kinds(harness) == ["user", "note"]


async def test_an_answer_cut_at_the_output_limit_is_continued_once() -> None:
    harness = LoopHarness()
    harness.script(
        ModelReply.answer("The first half", stop="length"),
        ModelReply.answer(" and the rest.", stop="length"),
    )
    events = await harness.turn("write it all")
    assert notice_codes(events) == ["truncated", "truncated"]  # continuing, then given up
    assert isinstance(events[-1], TurnDone)
    assert events[-1].content == "The first half and the rest."
    assert len(harness.model.requests) == 2  # continued once, not again


async def test_a_small_model_repeating_itself_is_stopped_and_kept_once() -> None:
    harness = LoopHarness(small=True)
    passage = "Hello! How can I help you today? "
    harness.script(ModelReply.answer(passage * 12, chunks=12))
    events = await harness.turn("hello")
    assert isinstance(events[-1], TurnDone) and events[-1].content == passage.strip()
    (notice,) = [e for e in events if isinstance(e, TurnNotice)]
    assert notice.code == "truncated" and notice.details["runaway"]


class Inbox:
    """A `SteeringInbox`: what the user sends while the turn runs."""

    def __init__(self) -> None:
        self.waiting: list[Said] = []

    def pending(self) -> bool:
        return bool(self.waiting)

    def drain(self) -> list[Said]:
        taken, self.waiting = self.waiting, []
        return taken


async def test_a_message_sent_mid_turn_skips_the_rest_and_is_read_next() -> None:
    inbox = Inbox()

    def first(args: dict[str, Any]) -> str:
        inbox.waiting.append(Said("actually, stop after the first"))
        return "first done"

    tools = [FunctionTool("first", first), FunctionTool("second", lambda args: "second done")]
    harness = LoopHarness(tools=tools)
    harness.script(
        ModelReply.tool_calls(("first", {}), ("second", {})), ModelReply.answer("Stopped.")
    )
    events = await harness.turn("do both", steering=inbox)
    statuses = [(e.name, e.status) for e in events if isinstance(e, ToolEnd)]
    assert statuses == [("first", "ok")]  # the second was skipped before it started
    steered = harness.model.requests[1].messages[-1]
    assert isinstance(steered, UserMessage)
    assert "actually, stop after the first" in str(steered.content)
    assert isinstance(events[-1], TurnDone) and events[-1].content == "Stopped."


async def test_history_past_its_limit_is_summarized_before_the_turn() -> None:
    harness = LoopHarness(settings=AgentSettings(max_history=4))

    def reply(request: ChatRequest) -> ModelReply:
        if request.messages[0] == SystemMessage(SUMMARY_INSTRUCTIONS):
            return ModelReply.answer("- the user counted to three")
        return ModelReply.answer("Noted.")

    harness.model.responder = reply
    for number in ("one", "two", "three"):
        assert notice_codes(await harness.turn(number)) == []
    events = await harness.turn("four")
    assert notice_codes(events) == ["summarizing"]
    assert isinstance(events[-1], TurnDone) and events[-1].content == "Noted."
    assert harness.history.summaries["s1"] == "- the user counted to three"
    sent = str(harness.model.requests[-1].messages)
    assert "the user counted to three" in sent and "text='one'" not in sent
