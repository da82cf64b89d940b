"""Honest turns against the scripted model: every retry, fallback, cut, loop and stop is told."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from countbot.agent.cancel import CancelToken
from countbot.agent.context.summary import SUMMARY_INSTRUCTIONS
from countbot.agent.events import (
    AgentEvent,
    ToolEnd,
    ToolStart,
    TurnCancelled,
    TurnDone,
    TurnNotice,
)
from countbot.agent.history import AssistantEntry, UserEntry, to_record
from countbot.agent.loop import CONTINUE
from countbot.agent.turn_request import TurnRequest
from countbot.runtime.assembly import Runtime, open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings


async def collect(runtime: Runtime, text: str, **kw: object) -> list[AgentEvent]:
    request = TurnRequest(text, "s1", **kw)  # type: ignore[arg-type]
    return [e async for e in runtime.agent.process_message(request)]


def notices(events: list[AgentEvent], code: str) -> list[TurnNotice]:
    return [e for e in events if isinstance(e, TurnNotice) and e.code == code]


async def test_a_retry_is_told_with_its_attempt_cause_and_delay(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.error(503, "overloaded"), Reply.text("Here now."))
    events = await collect(runtime, "hello?")
    (retry,) = notices(events, "retrying")
    assert retry.transient and retry.details["attempt"] == 1
    assert "overloaded" in retry.details["cause"] and retry.details["delay"] >= 0
    done = events[-1]
    assert isinstance(done, TurnDone) and done.content == "Here now."
    assert done.model == "openai/test-model"


async def test_a_fallback_says_which_model_took_over_and_done_names_it(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    settings.model.fallbacks = ["openai/backup"]
    settings.model.max_retries = 0
    model_server.responder = lambda body: (
        Reply.error(503, "overloaded")
        if body["model"] == "test-model"
        else Reply.text("The backup answers.")
    )
    runtime = await open_runtime(settings)
    try:
        events = await collect(runtime, "hello?")
    finally:
        await runtime.close()
    (switch,) = notices(events, "fallback")
    assert switch.details["model"] == "openai/backup" and not switch.transient
    assert isinstance(events[-1], TurnDone) and events[-1].model == "openai/backup"


async def test_an_answer_cut_at_the_limit_is_continued_once_then_offered(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("The first half", finish="length"), Reply.text(" and the rest."))
    events = await collect(runtime, "tell me everything")
    (continuing,) = notices(events, "truncated")
    assert continuing.details["continuing"] and continuing.transient
    assert isinstance(events[-1], TurnDone)
    assert events[-1].content == "The first half and the rest."
    nudge = model_server.requests[1]["messages"][-1]
    assert nudge["role"] == "user" and CONTINUE in json.dumps(nudge["content"])

    model_server.script(
        Reply.text("Cut", finish="length"), Reply.text("Cut again", finish="length")
    )
    events = await collect(runtime, "and more")
    final = notices(events, "truncated")[-1]
    assert not final.details["continuing"] and "continue" in final.text
    assert len(model_server.requests) == 4  # continued once, never twice
    records = await runtime.sessions.messages("s1", limit=100)
    assert records[-1]["type"] == "note" and records[-1]["code"] == "truncated"


async def test_identical_calls_are_answered_from_the_first_and_stop_as_a_loop(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    write = ("write_file", json.dumps({"path": "a.txt", "content": "hi"}))
    model_server.responder = lambda body: Reply.tool_calls(write)
    events = await collect(runtime, "write a.txt")
    results = [e for e in events if isinstance(e, ToolEnd)]
    assert len(results) == 3 and len(model_server.requests) == 3
    assert "already called write_file" in results[1].result
    (loop,) = notices(events, "tool_loop")
    assert loop.details == {"tool": "write_file", "repeats": 3} and events[-2] is loop
    assert isinstance(events[-1], TurnDone)
    records = await runtime.sessions.messages("s1", limit=100)
    assert records[-1]["type"] == "note" and records[-1]["code"] == "tool_loop"


async def test_failure_after_failure_is_a_loop_too(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    names = iter(range(100))
    model_server.responder = lambda body: Reply.tool_calls(
        ("read_file", json.dumps({"path": f"missing{next(names)}.txt"}))
    )
    events = await collect(runtime, "read my files")
    assert sum(isinstance(e, ToolStart) for e in events) == 5
    assert notices(events, "tool_loop")[0].details["repeats"] == 5


async def test_a_stop_during_the_summary_ends_the_turn_within_a_second(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    runtime = await open_runtime(make_settings(tmp_path, model_server, max_history=4))
    for number in range(6):
        await runtime.sessions.append("s1", to_record(UserEntry(f"question {number}")))
        await runtime.sessions.append("s1", to_record(AssistantEntry(f"answer {number}")))
    model_server.responder = lambda body: (
        Reply.text("- a summary", delay=3.0)
        if body["messages"][0]["content"] == SUMMARY_INSTRUCTIONS
        else Reply.text("Answer.")
    )
    token = CancelToken()
    events: list[AgentEvent] = []
    stopped_at = 0.0
    try:
        async for event in runtime.agent.process_message(
            TurnRequest("one more", "s1", cancel_token=token)
        ):
            events.append(event)
            if isinstance(event, TurnNotice) and event.code == "summarizing":
                await asyncio.sleep(0.3)
                stopped_at = time.monotonic()
                token.cancel()
        ended = time.monotonic() - stopped_at
    finally:
        await runtime.close()
    assert events[0].code == "summarizing" and events[0].transient  # type: ignore[union-attr]
    assert isinstance(events[-1], TurnCancelled) and ended < 1.0
    assert len(model_server.requests) == 1  # the answer was never asked for


async def test_the_system_prompt_says_where_current_facts_come_from_and_stays_the_same(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Hi!"), Reply.text("Hello again."))
    await collect(runtime, "hi")
    await collect(runtime, "hello")
    first, second = (r["messages"][0]["content"] for r in model_server.requests)
    assert first == second  # byte-stable: the provider's prompt cache keeps hitting
    assert "# Current facts" in first and "comes only from a tool" in first


async def test_a_small_models_wall_of_emoji_is_stopped_after_a_few(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    settings.model.tool_calls = "constrained"  # a small model, as the built-in one
    model_server.script(Reply.text("你好！" + "🔥" * 300, chunks=60, delay=0.05))
    runtime = await open_runtime(settings)
    try:
        events = await collect(runtime, "你好！")
    finally:
        await runtime.close()
    (runaway,) = notices(events, "truncated")
    assert runaway.details["runaway"]
    assert isinstance(events[-1], TurnDone) and events[-1].content == "你好！🔥🔥🔥"
    assert model_server.wait_abandoned()  # the wall was not generated to its end


async def test_a_small_model_repeating_itself_is_stopped_and_never_continued(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    settings.model.tool_calls = "constrained"  # a small model, as the built-in one
    greeting = "Hello! How can I help you today? "
    model_server.script(
        Reply.text(greeting * 12, chunks=24, delay=0.05), Reply.text("Cut", finish="length")
    )
    runtime = await open_runtime(settings)
    try:
        events = await collect(runtime, "Hello!")
        cut = await collect(runtime, "Tell me a long story")
        records = await runtime.sessions.messages("s1", limit=100)
    finally:
        await runtime.close()
    (runaway,) = notices(events, "truncated")
    assert runaway.details["runaway"] and "repeating itself" in runaway.text
    assert isinstance(events[-1], TurnDone) and events[-1].content == greeting.strip()
    assert events[-1].usage.prompt_tokens > 0 < events[-1].usage.completion_tokens  # estimated
    assert model_server.wait_abandoned()  # the repetition was not generated to its end
    answers = [r for r in records if r["type"] == "assistant"]
    assert answers[0]["text"] == greeting.strip() and answers[0]["stop_reason"] == "repetition"
    (final,) = notices(cut, "truncated")
    assert not final.details["continuing"] and len(model_server.requests) == 2


async def test_an_answer_a_filter_stopped_says_so_and_offers_a_retry(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("", finish="content_filter"))
    events = await collect(runtime, "Say something rude.")
    (notice,) = notices(events, "empty_answer")
    assert notice.details == {"reason": "filter", "retry": True}
    assert notice.text.startswith("The provider's content filter stopped the answer.")
    assert "Send your message again to retry." in notice.text
    assert isinstance(events[-1], TurnDone) and events[-1].content == ""
    window = await runtime.sessions.load_window("s1", 10)
    assert [r.get("code") for r in window.records if r["type"] == "note"] == ["empty_answer"]
