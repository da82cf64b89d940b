"""Prompt caching on Claude models: a real runtime, litellm, and a fake Anthropic Messages API
that caches prompts by the documented rules and bills what it read and wrote."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from countbot.agent.events import TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.config.secret import SecretStr
from countbot.config.settings import Settings
from countbot.llm.model_info import model_info
from countbot.llm.types import Usage
from countbot.runtime.assembly import open_runtime
from tests.support.anthropic_server import AnthropicServer, blocks, unmarked
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

MODEL = "anthropic/claude-sonnet-4-5"


@pytest.fixture(scope="module")
def anthropic() -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        yield server


def claude_settings(tmp_path: Path, server: AnthropicServer, model_server: ScriptedModelServer):
    settings = make_settings(tmp_path, model_server)
    settings.model.name = MODEL
    settings.model.api_base = server.url
    settings.model.api_key = SecretStr("sk-ant-test-0123456789")
    return settings


def play(body: dict[str, Any]) -> Reply:
    """Reads notes.txt when asked to, then answers."""
    last = body["messages"][-1]["content"][-1]
    if last.get("type") == "tool_result":
        return Reply.text("The notes say to buy milk.")
    if "notes" in json.dumps(last):
        return Reply.tool_calls(("read_file", '{"path": "notes.txt"}'))
    return Reply.text("Noted.")


def marks(body: dict[str, Any]) -> list[str]:
    """Where the request's breakpoints are: "tools", "system" or a message's role."""
    found = ["tools" for tool in body.get("tools", []) if "cache_control" in tool]
    found += ["system" for block in body.get("system", []) if "cache_control" in block]
    for message in body["messages"]:
        found += [message["role"] for b in message["content"] if "cache_control" in b]
    return found


def prefix_to_last_mark(body: dict[str, Any]) -> bytes:
    """The request's blocks up to its last breakpoint, marks removed, as bytes."""
    found = blocks(body)
    last = max(i for i, block in enumerate(found) if "cache_control" in block)
    return json.dumps([unmarked(block) for block in found[: last + 1]]).encode()


async def conversation(
    settings: Settings, *texts: str
) -> tuple[list[TurnDone], list[dict[str, Any]]]:
    runtime = await open_runtime(settings)
    try:
        done = []
        for text in texts:
            events = [e async for e in runtime.agent.process_message(TurnRequest(text, "s1"))]
            assert isinstance(events[-1], TurnDone), events[-1]
            done.append(events[-1])
        usage = await runtime.usage.by_day(1)
    finally:
        await runtime.close()
    return done, usage


async def test_claude_requests_carry_breakpoints_and_reuse_their_prefix(
    tmp_path: Path, anthropic: AnthropicServer, model_server: ScriptedModelServer
) -> None:
    anthropic.reset()
    anthropic.responder = play
    settings = claude_settings(tmp_path, anthropic, model_server)
    (settings.workspace).mkdir(parents=True, exist_ok=True)
    (settings.workspace / "notes.txt").write_text("buy milk\n" * 50)
    done, usage = await conversation(settings, "What do my notes say?", "Thanks!")
    first, after_tool, next_turn = anthropic.requests
    # The tool list, the system prompt, the exchange's opening and (when it is not the
    # opening) the newest message: at most four.
    assert marks(first) == ["tools", "system", "user"]
    assert marks(after_tool) == ["tools", "system", "user", "user"]  # the tool result
    assert after_tool["messages"][-1]["content"][-1]["type"] == "tool_result"
    assert marks(next_turn) == ["tools", "system", "user"]
    # Each request repeats the one before up to its last breakpoint, byte for byte.
    for earlier, later in ((first, after_tool), (after_tool, next_turn)):
        prefix = prefix_to_last_mark(earlier)
        assert json.dumps([unmarked(b) for b in blocks(later)]).encode().startswith(prefix[:-1])
    # So the endpoint read the cache on every request after the first.
    reported = anthropic.usages
    assert reported[0]["cache_read_input_tokens"] == 0
    assert all(u["cache_read_input_tokens"] > 0 for u in reported[1:])
    assert reported[2]["cache_read_input_tokens"] >= sum(
        reported[1][k] for k in ("cache_read_input_tokens", "cache_creation_input_tokens")
    )
    # What it read and wrote is counted in the turn's usage, priced at the cache prices.
    read = sum(u["cache_read_input_tokens"] for u in reported)
    written = sum(u["cache_creation_input_tokens"] for u in reported)
    prompt = read + written + sum(u["input_tokens"] for u in reported)
    turns = done[0].usage + done[1].usage
    assert (turns.cached_tokens, turns.cache_write_tokens) == (read, written)
    assert turns.prompt_tokens == prompt
    price = model_info(MODEL)
    assert turns.cost_usd == pytest.approx(price.cost(turns))
    uncached = price.cost(Usage(prompt, turns.completion_tokens))
    assert turns.cost_usd < uncached
    (today,) = usage  # and in the usage the Usage page shows
    assert (today["cached_tokens"], today["cache_write_tokens"]) == (read, written)
    assert today["cost_usd"] == pytest.approx(turns.cost_usd)


async def test_caching_off_sends_no_breakpoints(
    tmp_path: Path, anthropic: AnthropicServer, model_server: ScriptedModelServer
) -> None:
    anthropic.reset()
    settings = claude_settings(tmp_path, anthropic, model_server)
    settings.model.prompt_caching = False
    await conversation(settings, "Hello")
    (body,) = anthropic.requests
    assert marks(body) == [] and anthropic.usages[0]["cache_read_input_tokens"] == 0


async def test_other_providers_get_the_same_bytes_as_before(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    settings.model.provider_path = "litellm"
    model_server.default = Reply.text("fine")
    await conversation(settings, "Hello", "Again")
    first, second = model_server.requests
    assert "cache_control" not in json.dumps(model_server.requests)
    assert second["messages"][: len(first["messages"])] == first["messages"]
