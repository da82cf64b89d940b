"""Fitting history into a budget: gists with pointers that work, cut oversized entries, pairs."""

from __future__ import annotations

import dataclasses
import json

from countbot.agent.context.fit import fit
from countbot.agent.context.memo import IdentityMemo
from countbot.agent.context.tokens import entry_tokens
from countbot.agent.events import TurnDone
from countbot.agent.history import (
    AssistantEntry,
    HistoryEntry,
    NoteEntry,
    ToolResultEntry,
    UserEntry,
)
from countbot.agent.turn_request import TurnRequest
from countbot.llm.token_counter import count_text
from countbot.llm.types import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from countbot.runtime.assembly import Runtime
from countbot.tools.base import ToolContext
from tests.support.scripted_model import Reply, ScriptedModelServer

MODEL = "openai/gpt-4o"


def count(text: str) -> int:
    return count_text(text, MODEL)


def counted(*entries: HistoryEntry) -> list[HistoryEntry]:
    return [dataclasses.replace(e, tokens=entry_tokens(e, count)) for e in entries]


def exchange(n: int, content: str) -> list[HistoryEntry]:
    call = ToolCall(f"c{n}", "exec", json.dumps({"command": f"cat log{n}"}))
    return [
        UserEntry(f"question {n}"),
        AssistantEntry(tool_calls=(call,)),
        ToolResultEntry(f"c{n}", "exec", content),
        AssistantEntry(f"answer {n}"),
    ]


def fitted(entries: list[HistoryEntry], budget: int):
    return fit(entries, budget=budget, fixed=0, count=count, vision=False)


def test_under_budget_nothing_changes() -> None:
    entries = counted(*exchange(1, "small output"))
    result = fitted(entries, 10_000)
    assert not result.overflow and result.gisted == 0
    assert result.messages[2] == ToolResultMessage("c1", "exec", "small output", False)


def test_finished_exchanges_results_keep_head_and_tail_the_current_one_stays_whole() -> None:
    big = "\n".join(f"row {i} of a long listing with some words" for i in range(600))
    entries = counted(*exchange(1, big), *exchange(2, big), *exchange(3, "short"))
    result = fitted(entries, 1_000_000)  # room for everything: shortened all the same
    tools = [m.content for m in result.messages if isinstance(m, ToolResultMessage)]
    for shown, call in zip(tools[:2], ("c1", "c2"), strict=True):
        assert shown.startswith("row 0 of a long listing") and shown.endswith(big[-300:])
        assert f'call read_result with tool_call_id="{call}"' in shown
        assert len(shown) < 2_500
    assert tools[2] == "short" and result.gisted == 0
    again = fitted(counted(*exchange(1, big), *exchange(2, big), *exchange(3, big)), 1_000_000)
    latest = [m.content for m in again.messages if isinstance(m, ToolResultMessage)]
    assert latest[:2] == tools[:2]  # the same bytes in every request: caches keep hitting
    assert latest[2] == big  # the current exchange's result stays whole


def test_old_results_become_gists_with_a_pointer_recent_ones_stay() -> None:
    big = "\n".join(f"row {i} of a long listing with some words" for i in range(600))
    entries = counted(*exchange(1, big), *exchange(2, big), *exchange(3, big))
    total = fitted(entries, 1_000_000).tokens  # the finished exchanges' results shortened
    result = fitted(entries, total - 100)
    tools = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    assert tools[0].content.startswith("[Earlier result of exec(")
    assert 'call read_result with tool_call_id="c1"' in tools[0].content
    assert "row 0 of a long listing" in tools[0].content
    assert "left out" in tools[1].content and tools[2].content == big
    assert result.tokens <= total - 100 and not result.overflow


def test_an_oversized_message_is_cut_and_exchanges_dropped_keep_pairs() -> None:
    book = "word " * 20_000
    entries = counted(*exchange(1, "x" * 4000), UserEntry(book))
    result = fitted(entries, 600)
    assert result.tokens <= 600
    last = result.messages[-1]
    assert isinstance(last, UserMessage) and "too long to send whole" in last.content[0].text
    called = {
        c.id for m in result.messages if isinstance(m, AssistantMessage) for c in m.tool_calls
    }
    answered = {m.tool_call_id for m in result.messages if isinstance(m, ToolResultMessage)}
    assert called == answered


async def test_read_result_reads_a_gisted_result_back_from_the_session(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    text = "\n".join(f"entry {i}" for i in range(2000))
    (runtime.settings.workspace / "data.txt").write_text(text)
    model_server.script(
        Reply.tool_calls(("read_file", '{"path": "data.txt"}')), Reply.text("read it")
    )
    events = [e async for e in runtime.agent.process_message(TurnRequest("read data.txt", "s1"))]
    assert isinstance(events[-1], TurnDone)
    call_id = model_server.requests[1]["messages"][-1]["tool_call_id"]
    ctx = ToolContext("s1", runtime.settings.workspace)
    again = await runtime.tools.execute(
        ToolCall("r1", "read_result", "", {"tool_call_id": call_id}), ctx
    )
    assert again.status == "ok", again.content
    assert "entry 1999" in again.content
    other = await runtime.tools.execute(
        ToolCall("r2", "read_result", "", {"tool_call_id": call_id}),
        ToolContext("s2", runtime.settings.workspace),
    )
    assert other.status == "error"  # another session's results are not readable


def test_messages_remembered_between_requests_are_the_messages_made_afresh() -> None:
    """The keeper keeps each entry's message between requests: a window fitted again (and
    gisted, and with a call whose result is missing) reads exactly as one projected anew."""
    big = "\n".join(f"row {i} of a long listing with some words" for i in range(600))
    call = ToolCall("lost", "exec", "{}")
    entries = counted(
        *exchange(1, big),
        NoteEntry("a note never sent"),
        *exchange(2, "small"),
        AssistantEntry(tool_calls=(call,)),
    )
    made: IdentityMemo[Message] = IdentityMemo()
    shortened = fit(entries, budget=100_000, fixed=0, count=count, vision=False).tokens
    for budget in (100_000, 100_000, shortened - 100):
        fresh = fit(entries, budget=budget, fixed=0, count=count, vision=False)
        kept = fit(entries, budget=budget, fixed=0, count=count, vision=False, made=made)
        assert kept == fresh
    assert kept.gisted == 1 and kept.messages[-1].content == "Error: no result (interrupted)"


def test_a_result_a_later_reread_points_at_stays_whole() -> None:
    big = "\n".join(f"row {i} of a long listing with some words" for i in range(600))

    def read(n: int) -> list[HistoryEntry]:
        call = ToolCall(f"r{n}", "read_file", '{"path": "log.txt"}', {"path": "log.txt"})
        return [
            UserEntry(f"read it {n}"),
            AssistantEntry(tool_calls=(call,)),
            ToolResultEntry(f"r{n}", "read_file", big),
            AssistantEntry(f"read {n}"),
        ]

    before = fitted(counted(*read(1), UserEntry("thanks")), 1_000_000)
    (shortened,) = [m.content for m in before.messages if isinstance(m, ToolResultMessage)]
    assert "left out" in shortened  # nothing refers to it yet
    after = fitted(counted(*read(1), *read(2), UserEntry("thanks")), 1_000_000)
    first, second = [m.content for m in after.messages if isinstance(m, ToolResultMessage)]
    assert first == big and "unchanged since the earlier read (tool call r1)" in second
