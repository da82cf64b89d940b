"""Spending limits end to end: real runtime, scripted model reporting large usage, real SQLite."""

from __future__ import annotations

import dataclasses
import json

from countbot.agent.events import TurnDone, TurnNotice
from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import Settings
from countbot.runtime.assembly import open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings
from tests.support.wire_tokens import wire_tokens


def big(reply: Reply, prompt_tokens: int) -> Reply:
    """`reply`, reporting `prompt_tokens` used (a real model's prompt is that large)."""
    return dataclasses.replace(reply, usage=(prompt_tokens, 0))


def budgeted(tmp_path, model_server: ScriptedModelServer, **limits: float) -> Settings:
    """Settings with these `budget.*` limits, the model reporting 20,000 tokens a call."""
    settings = make_settings(tmp_path, model_server)
    for key, value in limits.items():
        setattr(settings.budget, key, value)
    reply = big(Reply.text("fine"), 20_000)
    model_server.responder = lambda body: reply
    return settings


async def answer(settings: Settings, text: str, session: str = "s1") -> str:
    runtime = await open_runtime(settings)
    try:
        events = [e async for e in runtime.agent.process_message(TurnRequest(text, session))]
    finally:
        await runtime.close()
    assert isinstance(events[-1], TurnDone)
    return events[-1].content


async def test_daily_tokens_warn_stop_before_the_call_and_survive_a_restart(
    tmp_path, model_server: ScriptedModelServer
) -> None:
    settings = budgeted(tmp_path, model_server, daily_tokens=50_000)
    assert await answer(settings, "one") == "fine"
    assert await answer(settings, "two") == "fine"
    third = await answer(settings, "three")  # 40,000 used: a warning, once
    assert third.startswith("fine") and "Budget warning: 80% of today's token budget" in third
    fourth = await answer(settings, "four")  # each answer opens a new runtime: a restart
    assert fourth.startswith("Budget reached") and "budget.daily_tokens" in fourth
    assert "resets at local midnight" in fourth
    assert len(model_server.requests) == 3  # the crossing call was never made
    assert (await answer(settings, "five")).startswith("Budget reached")
    assert len(model_server.requests) == 3
    settings.budget.daily_tokens = 1_000_000  # raised: the next turn runs
    assert await answer(settings, "six") == "fine"


async def test_session_tokens_limit_one_conversation_not_the_others(
    tmp_path, model_server: ScriptedModelServer
) -> None:
    settings = budgeted(tmp_path, model_server, session_tokens=21_000)
    assert await answer(settings, "one", "a") == "fine"
    assert "budget.session_tokens" in await answer(settings, "two", "a")
    assert await answer(settings, "one", "b") == "fine"
    assert len(model_server.requests) == 2


async def test_turn_tokens_stop_a_long_tool_loop_between_calls(
    tmp_path, model_server: ScriptedModelServer
) -> None:
    settings = budgeted(tmp_path, model_server, turn_tokens=8_000)
    (settings.workspace).mkdir(parents=True, exist_ok=True)
    model_server.script(
        big(Reply.tool_calls(("list_dir", '{"path": "."}')), 6_000), Reply.text("never sent")
    )
    text = await answer(settings, "look around")
    assert text.startswith("Budget reached") and "budget.turn_tokens" in text
    assert len(model_server.requests) == 1
    runtime = await open_runtime(settings)
    try:
        records = await runtime.sessions.messages("s1")
    finally:
        await runtime.close()
    assert [r["type"] for r in records] == ["user", "assistant", "tool_result", "note"]


async def test_a_call_whose_upper_bound_passes_a_limit_is_counted_before_it_is_refused(
    tmp_path, model_server: ScriptedModelServer
) -> None:
    """The budget checks a call by its upper bound (a byte a token) and counts it, in the token
    worker, only when that bound would stop it: a call that fits when counted is made."""
    settings = budgeted(tmp_path, model_server, turn_tokens=12_000)
    settings.model.context_window = 128_000  # the window never needs the count: the limit does
    text = "Tide tables for the week. " * 400  # 10,400 bytes, 2,402 tokens
    assert await answer(settings, text) == "fine"
    (body,) = model_server.requests
    assert wire_tokens(body) < 12_000 < len(json.dumps(body, ensure_ascii=False).encode())


async def test_daily_cost_uses_the_model_map_prices(
    tmp_path, model_server: ScriptedModelServer
) -> None:
    settings = budgeted(tmp_path, model_server, daily_cost=0.005)  # $0.003 a call:
    settings.model.name = "openai/gpt-4o-mini"  # $0.15 per million input tokens
    assert await answer(settings, "one") == "fine"
    assert await answer(settings, "two") == "fine"
    third = await answer(settings, "three")
    assert third.startswith("Budget reached") and "used of $0.01" in third
    assert "budget.daily_cost" in third and len(model_server.requests) == 2


async def test_unknown_prices_count_tokens_only(
    tmp_path, model_server: ScriptedModelServer
) -> None:
    settings = budgeted(tmp_path, model_server, daily_cost=0.000001)  # test-model: no price
    assert await answer(settings, "one") == "fine"
    assert await answer(settings, "two") == "fine"


async def test_economy_model_answers_past_its_share_and_says_so_once(
    tmp_path, model_server: ScriptedModelServer
) -> None:
    settings = budgeted(tmp_path, model_server, daily_tokens=200_000, economy_share=0.25)
    settings.model.economy = "openai/cheap-model"
    runtime = await open_runtime(settings)
    try:

        async def turn(text: str, session: str = "s1") -> list:
            request = TurnRequest(text, session)
            return [e async for e in runtime.agent.process_message(request)]

        for text in ("one", "two", "three"):  # 60,000 tokens: past a quarter of it
            await turn(text)
        fourth, fifth, elsewhere = await turn("four"), await turn("five"), await turn("x", "s2")
        stored = await runtime.sessions.load_window("s1", 100)
    finally:
        await runtime.close()
    models = [body["model"] for body in model_server.requests]
    assert models == ["test-model"] * 3 + ["cheap-model"] * 3
    notices = [e for e in fourth if isinstance(e, TurnNotice)]
    assert [n.code for n in notices] == ["economy"] and "cheap-model" in notices[0].text
    assert isinstance(fourth[-1], TurnDone) and fourth[-1].model == "openai/cheap-model"
    assert not any(isinstance(e, TurnNotice) for e in fifth)  # once in the conversation
    assert [e.code for e in elsewhere if isinstance(e, TurnNotice)] == ["economy"]
    assert [r.get("code") for r in stored.records if r["type"] == "note"] == ["economy"]
    settings.budget.daily_tokens = 120_000  # 120,000 used: the limit still stops as before
    assert (await answer(settings, "six")).startswith("Budget reached")
