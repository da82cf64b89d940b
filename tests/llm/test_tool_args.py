"""Tool-call arguments: parsed, repaired when a model slips, or explained when beyond repair."""

from __future__ import annotations

import json

import pytest

from countbot.llm.tool_args import parse_tool_call, wire_arguments
from countbot.llm.types import ToolCall


def test_valid_json_is_parsed_and_raw_kept_verbatim() -> None:
    raw = '{"path":  "a.txt"}'

    call = parse_tool_call("call_1", "read_file", raw)

    assert call == ToolCall("call_1", "read_file", raw, {"path": "a.txt"}, None)


def test_empty_arguments_mean_no_arguments() -> None:
    assert parse_tool_call("c", "now", "").arguments == {}
    assert parse_tool_call("c", "now", "  ").parse_error is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"path": "a.txt",}', {"path": "a.txt"}),
        ('{"path": "a.txt"', {"path": "a.txt"}),
        ("{'path': 'a.txt'}", {"path": "a.txt"}),
        ('{"cmd": "ls" "cwd": "/tmp"}', {"cmd": "ls", "cwd": "/tmp"}),
    ],
)
def test_common_slips_are_repaired(raw: str, expected: dict[str, str]) -> None:
    call = parse_tool_call("c", "t", raw)

    assert (call.arguments, call.parse_error, call.arguments_raw) == (expected, None, raw)


@pytest.mark.parametrize(
    "raw",
    [
        "path=a.txt",
        "<args>a.txt</args>",
        "[1, 2]",
        "42",
        # Cut off mid-call: repairing would invent content (an empty or half-written file).
        '{"path": "x.txt", "content": ',
        '{"path": "x.txt", "content": "first half of the te',
    ],
)
def test_unrepairable_arguments_are_kept_raw_with_an_actionable_error(raw: str) -> None:
    call = parse_tool_call("c", "t", raw)

    assert call.arguments is None
    assert call.arguments_raw == raw
    assert call.parse_error is not None
    assert "JSON object" in call.parse_error


def test_wire_arguments_resend_valid_raw_and_repair_broken() -> None:
    valid = ToolCall("c", "t", '{"a":1}')
    broken = ToolCall("c", "t", '{"a": 1,}')
    hopeless = ToolCall("c", "t", "a=1")

    assert wire_arguments(valid) == '{"a":1}'
    assert json.loads(wire_arguments(broken)) == {"a": 1}
    assert wire_arguments(hopeless) == "{}"
