from __future__ import annotations

from typing import Any

from countbot.common.masking import SecretMasker
from countbot.store.database import Database
from countbot.store.tool_calls import RESULT_LIMIT, ToolCallLog


def call(n: int, **overrides: Any) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "tool_call_id": f"call_{n}",
        "name": "read_file",
        "arguments": {"path": f"notes/{n}.md"},
        "user_message": "summarize my notes",
        "result": f"contents {n}",
        "status": "ok",
        "duration_ms": 12.5,
        "channel": "web",
        "ts": 1_000.0 + n,
        **overrides,
    }


async def test_recorded_calls_come_back_newest_first_with_every_field(db: Database) -> None:
    log = ToolCallLog(db)
    for n in range(3):
        await log.record(call(n))

    calls = await log.query()
    assert [c["tool_call_id"] for c in calls] == ["call_2", "call_1", "call_0"]
    newest = {key: value for key, value in calls[0].items() if key != "id"}
    assert newest == call(2)


async def test_filters_combine(db: Database) -> None:
    log = ToolCallLog(db)
    await log.record(call(0, name="exec", status="error"))
    await log.record(call(1, name="exec"))
    await log.record(call(2, session_id="s2", name="exec", status="error"))
    await log.record(call(3, status="error"))

    def ids(calls: list[dict[str, Any]]) -> list[str]:
        return [c["tool_call_id"] for c in calls]

    assert ids(await log.query(name="exec")) == ["call_2", "call_1", "call_0"]
    assert ids(await log.query(name="exec", status="error")) == ["call_2", "call_0"]
    assert ids(await log.query(session_id="s1", status="error")) == ["call_3", "call_0"]
    assert ids(await log.query(since=1_002.0)) == ["call_3", "call_2"]
    assert ids(await log.query(limit=1)) == ["call_3"]
    assert await log.query(name="nothing") == []


async def test_long_results_are_truncated_with_a_visible_marker(db: Database) -> None:
    log = ToolCallLog(db)
    await log.record(call(0, result="x" * (RESULT_LIMIT + 500)))

    (stored,) = await log.query()
    assert stored["result"].startswith("x" * RESULT_LIMIT)
    assert stored["result"].endswith("[500 more characters]")


async def test_raw_argument_strings_round_trip(db: Database) -> None:
    log = ToolCallLog(db)
    await log.record(call(0, arguments='{"path": "a.md",'))  # what a model sent, unparseable

    (stored,) = await log.query()
    assert stored["arguments"] == '{"path": "a.md",'


async def test_secrets_are_masked_before_they_are_stored(db: Database) -> None:
    key = "sk-" + "a1B2" * 8
    log = ToolCallLog(db, SecretMasker())
    await log.record(
        call(
            0,
            name="exec",
            arguments={"command": f"curl -H 'Authorization: Bearer {key}' example.test"},
            user_message=f"use my key {key}",
            result=f"echo {key}",
        )
    )

    (stored,) = await log.query()
    assert key not in str(stored)
    assert stored["arguments"]["command"].startswith("curl -H 'Authorization: Bearer ")
