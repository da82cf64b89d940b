"""ToolRegistry: lookup, validation, timeout, cancellation, retries, masking and paging."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

import pytest

from countbot.common.masking import SecretMasker
from countbot.llm.types import ToolCall
from countbot.tools.base import Tool, ToolContext, ToolResult, ToolTransientError
from countbot.tools.paging import ReadResultTool
from countbot.tools.registry import ToolRegistry
from tests.execution.exec_support import RecordingApprover, make_exec, probed_sandbox
from tests.tools.proc import is_running, read_pid


class EchoTool(Tool):
    name: ClassVar[str] = "echo"
    description: ClassVar[str] = "Echo text after an optional delay."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "delay": {"type": "number"}},
        "required": ["text"],
        "additionalProperties": False,
    }

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(args.get("delay", 0))
        return ToolResult(args["text"])


class SleepyTool(Tool):
    name: ClassVar[str] = "sleepy"
    description: ClassVar[str] = "Sleeps far too long."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    timeout = 0.2

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(30)
        return ToolResult("woke up")


class FlakyTool(Tool):
    name: ClassVar[str] = "flaky"
    description: ClassVar[str] = "Fails transiently a few times, then works."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def __init__(self, failures: int, *, idempotent: bool) -> None:
        self.failures = failures
        self.idempotent = idempotent  # type: ignore[misc]
        self.calls = 0

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls += 1
        if self.calls <= self.failures:
            raise ToolTransientError("service busy")
        return ToolResult("done")


class BrokenTool(Tool):
    name: ClassVar[str] = "broken"
    description: ClassVar[str] = "Always raises."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise RuntimeError("disk on fire")


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def call(name: str, arguments: dict[str, Any] | None = None, **extra: Any) -> ToolCall:
    return ToolCall(f"call-{name}", name, "{}", arguments if arguments is not None else {}, **extra)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext("s1", tmp_path)


async def test_unknown_tool_names_the_available_ones(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    result = await registry.execute(call("ech0"), ctx)
    assert result.status == "error"
    assert "'ech0'" in result.content and "echo" in result.content


async def test_unparsable_arguments_quote_the_error_and_ask_for_valid_json(
    ctx: ToolContext,
) -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    bad = ToolCall("c1", "echo", '{"text": "hi"', None, "Expecting '}' at char 13")
    result = await registry.execute(bad, ctx)
    assert result.status == "error"
    assert "Expecting '}' at char 13" in result.content and "valid JSON" in result.content


async def test_arguments_are_validated_against_the_schema(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    missing = await registry.execute(call("echo", {}), ctx)
    wrong_type = await registry.execute(call("echo", {"text": 5}), ctx)
    extra = await registry.execute(call("echo", {"text": "a", "loud": True}), ctx)
    assert missing.status == "error" and "'text' is a required property" in missing.content
    assert wrong_type.status == "error" and "at 'text'" in wrong_type.content
    assert extra.status == "error" and "'loud'" in extra.content


class BadSchemaTool(EchoTool):
    name: ClassVar[str] = "bad_schema"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {"text": {"type": 5}}}


async def test_a_tool_whose_schema_is_not_one_answers_why_at_its_call(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(BadSchemaTool())  # checked at the first call: no jsonschema at start-up
    result = await registry.execute(call("bad_schema", {"text": "hi"}), ctx)
    assert result.status == "error"
    assert "bad_schema cannot be called: its parameter schema is invalid" in result.content


async def test_a_slow_tool_times_out(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(SleepyTool())
    result = await registry.execute(call("sleepy"), ctx)
    assert result.status == "timeout"
    assert "timed out after 0.2 s" in result.content


def exec_registry(workspace: Path) -> ToolRegistry:
    """Exec on the host (the user approves), so the test can see the command's pids."""
    registry = ToolRegistry(masker=SecretMasker())
    registry.register(make_exec(workspace, sandbox=probed_sandbox("off", workspace)))
    return registry


def host_ctx(workspace: Path) -> ToolContext:
    return ToolContext("s1", workspace, approver=RecordingApprover("once"))


BACKGROUND_SLEEP = "sleep 30 & echo $! > sleep.pid; wait"


async def test_user_cancel_kills_the_running_subprocess(tmp_path: Path) -> None:
    ctx = host_ctx(tmp_path)
    registry = exec_registry(tmp_path)
    running = asyncio.create_task(
        registry.execute(call("exec", {"command": BACKGROUND_SLEEP}), ctx)
    )
    pid = await read_pid(tmp_path / "sleep.pid")
    assert is_running(pid)
    ctx.cancelled.set()
    result = await running
    assert result.status == "cancelled"
    assert not is_running(pid)


async def test_cancelling_the_awaiting_task_kills_the_subprocess_and_propagates(
    tmp_path: Path,
) -> None:
    ctx = host_ctx(tmp_path)
    registry = exec_registry(tmp_path)
    running = asyncio.create_task(
        registry.execute(call("exec", {"command": BACKGROUND_SLEEP}), ctx)
    )
    pid = await read_pid(tmp_path / "sleep.pid")
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert not is_running(pid)


async def test_a_call_made_after_cancel_does_not_run(ctx: ToolContext, tmp_path: Path) -> None:
    registry = exec_registry(tmp_path)
    ctx.cancelled.set()
    result = await registry.execute(call("exec", {"command": "touch ran"}), ctx)
    assert result.status == "cancelled"
    assert not (tmp_path / "ran").exists()


async def test_idempotent_tools_are_retried_with_backoff(ctx: ToolContext) -> None:
    sleep = RecordingSleep()
    registry = ToolRegistry(max_retries=3, retry_delay=0.5, sleep=sleep)
    flaky = FlakyTool(failures=2, idempotent=True)
    registry.register(flaky)
    result = await registry.execute(call("flaky"), ctx)
    assert result.status == "ok" and result.content == "done"
    assert flaky.calls == 3
    assert sleep.delays == [0.5, 1.0]


async def test_retries_stop_at_max_retries(ctx: ToolContext) -> None:
    sleep = RecordingSleep()
    registry = ToolRegistry(max_retries=2, retry_delay=1.0, sleep=sleep)
    flaky = FlakyTool(failures=10, idempotent=True)
    registry.register(flaky)
    result = await registry.execute(call("flaky"), ctx)
    assert result.status == "error" and "service busy" in result.content
    assert flaky.calls == 3
    assert sleep.delays == [1.0, 2.0]


async def test_tools_that_are_not_idempotent_are_never_retried(ctx: ToolContext) -> None:
    sleep = RecordingSleep()
    registry = ToolRegistry(sleep=sleep)
    flaky = FlakyTool(failures=1, idempotent=False)
    registry.register(flaky)
    result = await registry.execute(call("flaky"), ctx)
    assert result.status == "error" and "service busy" in result.content
    assert flaky.calls == 1 and sleep.delays == []


async def test_a_nonzero_exit_is_a_normal_result_and_not_retried(tmp_path: Path) -> None:
    registry = exec_registry(tmp_path)
    command = "echo run >> runs.txt; exit 7"
    result = await registry.execute(call("exec", {"command": command}), host_ctx(tmp_path))
    assert result.status == "ok" and "exit code 7" in result.content
    assert (tmp_path / "runs.txt").read_text() == "run\n"


async def test_an_exception_becomes_an_error_result_without_traceback(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(BrokenTool())
    result = await registry.execute(call("broken"), ctx)
    assert result.status == "error"
    assert "disk on fire" in result.content and "Traceback" not in result.content


async def test_secrets_in_output_are_masked(ctx: ToolContext) -> None:
    registry = ToolRegistry(masker=SecretMasker(["configured-secret-1"]))
    registry.register(EchoTool())
    text = "keys: sk-abcdefghijklmnopqrstuvwx and configured-secret-1"
    result = await registry.execute(call("echo", {"text": text}), ctx)
    assert "abcdefghijklmnop" not in result.content
    assert "configured-secret-1" not in result.content
    assert "sk-a…****" in result.content


async def test_long_results_are_paged_through_read_result(ctx: ToolContext) -> None:
    registry = ToolRegistry(page_size=1000)
    registry.register(EchoTool())
    registry.register(ReadResultTool(registry))
    text = "".join(f"line {i:05d}\n" for i in range(250))  # 2,750 characters
    first = await registry.execute(call("echo", {"text": text}), ctx)
    assert first.status == "ok"
    assert first.content.startswith(text[:1000])
    assert "page 1 of 3" in first.content and "read_result" in first.content
    result_id = first.content.split('result_id="')[1].split('"')[0]

    pages = [first.content[:1000]]
    for page in (2, 3):
        args = {"result_id": result_id, "page": page}
        result = await registry.execute(call("read_result", args), ctx)
        assert result.status == "ok"
        pages.append(result.content.split("\n\n[page ")[0])
    assert "".join(pages) == text
    assert "last page" in result.content

    beyond = await registry.execute(call("read_result", {"result_id": result_id, "page": 4}), ctx)
    assert beyond.status == "error" and "pages 1 to 3" in beyond.content
    other_session = ToolContext("s2", ctx.workspace)
    stolen = await registry.execute(
        call("read_result", {"result_id": result_id, "page": 2}), other_session
    )
    assert stolen.status == "error"


async def test_without_read_result_long_results_are_truncated_with_a_notice(
    ctx: ToolContext,
) -> None:
    registry = ToolRegistry(page_size=100)
    registry.register(EchoTool())
    result = await registry.execute(call("echo", {"text": "x" * 250}), ctx)
    assert result.content == "x" * 100 + "\n\n[truncated: the first 100 of 250 characters]"


async def test_concurrent_calls_get_their_own_results_in_order(ctx: ToolContext) -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    calls = [
        ToolCall(f"c{i}", "echo", "{}", {"text": f"answer {i}", "delay": (5 - i) * 0.01})
        for i in range(5)
    ]
    results = await asyncio.gather(*(registry.execute(c, ctx) for c in calls))
    assert [r.content for r in results] == [f"answer {i}" for i in range(5)]
    assert all(r.duration_ms > 0 for r in results)


def test_registration_specs_and_lookup() -> None:
    registry = ToolRegistry()
    registry.register(EchoTool())
    specs = registry.specs()
    assert registry.specs() is specs  # cached
    registry.register(BrokenTool())
    assert [s.name for s in registry.specs()] == ["echo", "broken"]
    assert registry.specs()[0].parameters == EchoTool.parameters
    assert registry.names() == ["echo", "broken"]
    assert isinstance(registry.get("echo"), EchoTool) and registry.get("nope") is None
    with pytest.raises(ValueError, match="already registered"):
        registry.register(EchoTool())


async def test_a_secret_across_the_cut_of_a_truncated_result_is_masked(ctx: ToolContext) -> None:
    secret = "configured-secret-value-0123456789"
    registry = ToolRegistry(masker=SecretMasker([secret]), page_size=100)
    registry.register(EchoTool())
    result = await registry.execute(call("echo", {"text": "x" * 90 + secret + "y" * 200}), ctx)
    assert result.content.startswith("x" * 90 + "conf…****y")
    assert "onfigur" not in result.content and "0123" not in result.content
    assert result.content.endswith("[truncated: the first 100 of 299 characters]")
