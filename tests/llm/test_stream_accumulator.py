"""Reassembling streamed chunks the way odd providers send them (litellm's own chunk objects)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from countbot.llm.litellm_import import load_litellm
from countbot.llm.stream_accumulator import StreamAccumulator
from countbot.llm.types import ReasoningDelta, TextDelta


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    return load_litellm()


def chunk(litellm: ModuleType, finish: str | None = None, **delta: Any) -> Any:
    from litellm.types.utils import Delta, ModelResponseStream, StreamingChoices

    choice = StreamingChoices(index=0, delta=Delta(**delta), finish_reason=finish)
    return ModelResponseStream(choices=[choice])


def fragment(index: int, call_id: str | None, name: str | None, args: str) -> dict[str, Any]:
    return {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": args},
    }


def test_text_and_reasoning_come_out_as_deltas(litellm: ModuleType) -> None:
    acc = StreamAccumulator()

    deltas = acc.add(chunk(litellm, content="Hi", reasoning_content="greet"))
    deltas += acc.add(chunk(litellm, content=" there"))

    assert deltas == [ReasoningDelta("greet"), TextDelta("Hi"), TextDelta(" there")]
    assert (acc.text, acc.reasoning) == ("Hi there", "greet")


def test_parallel_calls_all_at_index_zero_are_told_apart_by_id(litellm: ModuleType) -> None:
    acc = StreamAccumulator()
    for part in (
        fragment(0, "a1", "read", '{"p": '),
        fragment(0, None, None, '"x"}'),
        fragment(0, "b2", "list", "{}"),
    ):
        acc.add(chunk(litellm, tool_calls=[part]))

    calls = acc.tool_calls()

    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("a1", "read", {"p": "x"}),
        ("b2", "list", {}),
    ]
    assert acc.stop_reason(bool(calls)) == "tool_calls"


def test_repeated_id_and_name_in_every_fragment_do_not_split_a_call(litellm: ModuleType) -> None:
    acc = StreamAccumulator()
    for piece in ('{"q"', ': "cats"', "}"):
        acc.add(chunk(litellm, tool_calls=[fragment(0, "c1", "search", piece)]))

    (call,) = acc.tool_calls()

    assert (call.id, call.name, call.arguments) == ("c1", "search", {"q": "cats"})


def test_missing_id_is_invented_and_nameless_calls_are_dropped(litellm: ModuleType) -> None:
    acc = StreamAccumulator()
    acc.add(chunk(litellm, tool_calls=[fragment(0, None, "now", "")]))
    acc.add(chunk(litellm, tool_calls=[fragment(1, None, None, '{"x": 1}')]))

    calls = acc.tool_calls()

    assert [c.name for c in calls] == ["now"]
    assert calls[0].id.startswith("call_")


def test_stop_reasons(litellm: ModuleType) -> None:
    stopped, cut = StreamAccumulator(), StreamAccumulator()
    stopped.add(chunk(litellm, finish="stop", content="done"))
    cut.add(chunk(litellm, finish="length", content="and then"))

    assert stopped.stop_reason(False) == "stop"
    assert cut.stop_reason(False) == "length"
    assert stopped.stop_reason(True) == "tool_calls"
