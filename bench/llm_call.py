"""CPU and wall time per streamed model call with tools, with and without CountBot's settings.

Three paths, measured in the same run and interleaved round by round (so drift on a shared machine
hits all of them alike):

  (a) `litellm.acompletion` with litellm's defaults as installed;
  (b) the same call with CountBot's litellm settings applied (what LiteLLMProvider runs with);
  (c) `LiteLLMProvider.stream` end to end: message conversion, the litellm call, stream
      accumulation, tool-call assembly, usage and cost.

The request is what CountBot's agent sends: its real system prompt and tool schemas, then a
history of N messages ending in a tool exchange. The answer is a short text in 5 chunks plus usage.
The scripted model server runs in a child process, so the CPU time is this process's alone.

    python bench/llm_call.py [--calls 300] [--histories 10 100] [--model openai/gpt-4o-mini]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")

from countbot.agent.events import TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.llm.litellm_import import LITELLM_SETTINGS, OPENAI_HANDLER_SWITCH, load_litellm
from countbot.llm.litellm_provider import LiteLLMProvider
from countbot.llm.openai_format import to_openai_messages, to_openai_tools
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.types import (
    AssistantMessage,
    ChatRequest,
    Message,
    StreamDone,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from countbot.runtime.assembly import open_runtime
from tests.support.scripted_model import (
    Reply,
    ScriptedModelServer,
    model_server_process,
    serve_until_stdin_closes,
)
from tests.support.settings import make_settings

ROOT = Path(__file__).resolve().parent.parent
ANSWER = Reply.text("Hello there, this is a benchmark answer.", chunks=5, usage=(1200, 12))
API_KEY = "sk-bench-0123456789"
ROUNDS = 10
WARMUP = 5
TIMEOUT = 120.0

Config = dict[str, Any]


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class CallPath:
    """One way of making the call, and the litellm configuration it runs under."""

    name: str
    config: Config
    call: Callable[[], Awaitable[None]]


def serve_model() -> None:
    """Child process: the scripted model server, giving every request the same answer."""
    server = ScriptedModelServer(default=ANSWER)

    def answer(body: dict) -> Reply:
        server.reset()  # the log of request bodies would otherwise grow by megabytes a second
        return ANSWER

    server.responder = answer
    serve_until_stdin_closes(server)


def litellm_defaults() -> Config:
    """litellm's own values for what CountBot sets; read before anything configures litellm."""
    import litellm

    values = {name: getattr(litellm, name) for name in LITELLM_SETTINGS}
    return {**values, OPENAI_HANDLER_SWITCH: None}


def current_config() -> Config:
    litellm = load_litellm()
    values = {name: getattr(litellm, name) for name in LITELLM_SETTINGS}
    return {**values, OPENAI_HANDLER_SWITCH: os.environ.get(OPENAI_HANDLER_SWITCH)}


def apply(config: Config) -> None:
    litellm = load_litellm()
    for name, value in config.items():
        if name != OPENAI_HANDLER_SWITCH:
            setattr(litellm, name, value)
        elif value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


async def agent_prompt_and_tools() -> tuple[str, ChatRequest]:
    """The system prompt and tool schemas of one real agent turn (from the runtime's assembly)."""
    with ScriptedModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        runtime = await open_runtime(make_settings(Path(tmp), server))
        try:
            last = None
            async for event in runtime.agent.process_message(TurnRequest("hi", "bench")):
                last = event
            assert isinstance(last, TurnDone), last
            system = server.requests[-1]["messages"][0]["content"]
            return system, ChatRequest((), runtime.tools.specs())
        finally:
            await runtime.close()


def with_history(system: str, tools: ChatRequest, count: int) -> ChatRequest:
    """`count` messages after the system prompt: talk, then a tool call and its result."""
    messages: list[Message] = [SystemMessage(system)]
    for i in range(max(0, count - 3) // 2):
        messages.append(UserMessage((TextPart(f"question {i} " * 8),)))
        messages.append(AssistantMessage(f"answer {i} " * 20))
    call = ToolCall("call_1", "list_dir", '{"path": "."}', {"path": "."})
    messages.append(UserMessage((TextPart("What is in this folder?"),)))
    messages.append(AssistantMessage(tool_calls=(call,)))
    messages.append(ToolResultMessage("call_1", "list_dir", "notes/\nMEMORY.md\ntodo.txt"))
    return ChatRequest(tuple(messages), tools.tools)


def litellm_call(model: str, base_url: str, request: ChatRequest) -> Callable[[], Awaitable[None]]:
    """A raw `litellm.acompletion` with the arguments LiteLLMProvider passes."""
    litellm = load_litellm()
    arguments = {
        "model": model,
        "messages": to_openai_messages(request.messages),
        "tools": to_openai_tools(request.tools),
        "stream": True,
        "stream_options": {"include_usage": True},
        "timeout": TIMEOUT,
        "max_retries": 0,
        "api_base": base_url,
        "api_key": API_KEY,
    }

    async def call() -> None:
        chunks = 0
        async for _ in await litellm.acompletion(**arguments):
            chunks += 1
        assert chunks, "no chunks streamed"

    return call


def provider_call(provider: LiteLLMProvider, request: ChatRequest) -> Callable[[], Awaitable[None]]:
    async def call() -> None:
        last = None
        async for event in provider.stream(request):
            last = event
        assert isinstance(last, StreamDone), last

    return call


async def measure(paths: list[CallPath], calls: int) -> dict[str, Samples]:
    """`calls` timed calls per path, in ROUNDS interleaved rounds, each after a short warm-up."""
    samples = {path.name: Samples() for path in paths}
    for _ in range(ROUNDS):
        for path in paths:
            apply(path.config)
            for _ in range(WARMUP):
                await path.call()
            for _ in range(calls // ROUNDS):
                c0, w0 = time.process_time(), time.perf_counter()
                await path.call()
                samples[path.name].wall.append((time.perf_counter() - w0) * 1000)
                samples[path.name].cpu.append((time.process_time() - c0) * 1000)
    return samples


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def table(rows: list[tuple[int, str, Samples, Samples]]) -> None:
    print(
        "| history | path | wall p50 | wall p99 | CPU p50 | CPU p99 "
        "| wall p50 vs (a) | CPU p50 vs (a) |"
    )
    print("|--------:|------|---------:|---------:|--------:|--------:|------:|------:|")
    for history, name, own, base in rows:
        wall, cpu = statistics.median(own.wall), statistics.median(own.cpu)
        print(
            f"| {history:>7} | {name} | {wall:.2f} | {pct(own.wall, 0.99):.2f} | {cpu:.2f} | "
            f"{pct(own.cpu, 0.99):.2f} | {wall / statistics.median(base.wall):.2f} | "
            f"{cpu / statistics.median(base.cpu):.2f} |"
        )


async def bench(base_url: str, model: str, histories: list[int], calls: int) -> None:
    defaults = litellm_defaults()
    load_litellm()
    countbot = current_config()
    system, tools = await agent_prompt_and_tools()
    provider = LiteLLMProvider(
        model, ProviderOptions(api_base=base_url, api_key=API_KEY, request_timeout=TIMEOUT)
    )
    rows = []
    for history in histories:
        request = with_history(system, tools, history)
        raw = litellm_call(model, base_url, request)
        paths = [
            CallPath("(a) litellm defaults", defaults, raw),
            CallPath("(b) litellm + CountBot settings", countbot, raw),
            CallPath("(c) LiteLLMProvider.stream", countbot, provider_call(provider, request)),
        ]
        samples = await measure(paths, calls)
        base = samples[paths[0].name]
        rows += [(history, path.name, samples[path.name], base) for path in paths]
    print(
        f"Python {platform.python_version()}, litellm {version('litellm')}, "
        f"openai {version('openai')}, {os.cpu_count()} cores"
    )
    print(
        f"model {model}; {len(tools.tools)} tools; system prompt {len(system):,} chars; "
        f"answer: 5 text chunks + usage; server in a child process, delay 0"
    )
    print(f"CountBot settings: {countbot}")
    print(f"{calls} calls per row in {ROUNDS} interleaved rounds; times in ms per call\n")
    table(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--histories", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--model", default="openai/gpt-4o-mini")
    args = parser.parse_args()
    if args.model_server:
        serve_model()
        return
    with model_server_process([sys.executable, __file__, "--model-server"], ROOT) as base_url:
        asyncio.run(bench(base_url, args.model, args.histories, args.calls))


if __name__ == "__main__":
    main()
