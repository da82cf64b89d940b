"""How much time CountBot's own code adds to a turn, against the raw litellm call as the floor.

Runs the real runtime (SQLite store, tools, context builder, litellm) against the scripted
OpenAI-compatible server with zero latency, for a plain answer and a one-tool turn, at session
histories of 10, 1,000 and 10,000 messages, once per model path (`model.provider_path`: litellm,
then direct). Prints medians and p99s of wall time and CPU time per turn, the time added over the
same call(s) made raw in the same run (raw litellm for the litellm path, a bare httpx stream for
the direct path), and the direct path's CPU per turn as a share of litellm's.

    python bench/agent_turn.py [--turns 60] [--paths litellm direct]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")

from countbot.agent.events import TurnDone
from countbot.agent.history import AssistantEntry, UserEntry, to_record
from countbot.agent.turn_request import TurnRequest
from countbot.llm.litellm_import import load_litellm
from countbot.runtime.assembly import Runtime, open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

HISTORIES = (10, 1_000, 10_000)
WARMUP = 5
# Issue 27: CountBot's own time per warm turn (turn minus floor), whatever the history's length.
OWN_TIME_TARGET_MS = 3.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(
    turns: int, action: Callable[[], Awaitable[None]]
) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of `turns` runs of `action`, after a warm-up."""
    for _ in range(WARMUP):
        await action()
    walls, cpus = [], []
    for _ in range(turns):
        c0, w0 = time.process_time(), time.perf_counter()
        await action()
        walls.append((time.perf_counter() - w0) * 1000)
        cpus.append((time.process_time() - c0) * 1000)
    return walls, cpus


def script_like(server: ScriptedModelServer, body: dict) -> None:
    """Script the answer the turn got to the request `body`: a tool call when it offered tools."""
    if body.get("tools"):
        server.script(Reply.tool_calls(("list_dir", '{"path": "."}')))
    else:
        server.script(Reply.text("Hello there, this is a benchmark answer.", chunks=3))


async def raw_replay(server: ScriptedModelServer, bodies: list[dict], turns: int) -> list[float]:
    """Wall ms of the same model calls a turn made (same messages and tools), made raw."""
    litellm = load_litellm()

    async def calls() -> None:
        for body in bodies:
            script_like(server, body)
            kwargs = {"tools": body["tools"]} if body.get("tools") else {}
            stream = await litellm.acompletion(
                model="openai/test-model",
                api_base=server.base_url,
                api_key="sk-bench",
                messages=body["messages"],
                stream=True,
                stream_options={"include_usage": True},
                temperature=body.get("temperature"),
                max_tokens=body.get("max_tokens"),
                **kwargs,
            )
            async for _ in stream:
                pass

    walls, _ = await measure(turns, calls)
    return walls


async def raw_httpx_replay(
    server: ScriptedModelServer, bodies: list[dict], turns: int
) -> list[float]:
    """Wall ms of the same model calls made with a bare httpx stream: the direct path's floor,
    since that path is an httpx client itself (litellm's own overhead would flatter it)."""
    import httpx

    async with httpx.AsyncClient(trust_env=False) as client:

        async def calls() -> None:
            for body in bodies:
                script_like(server, body)
                url = server.base_url + "/chat/completions"
                async with client.stream("POST", url, json=body) as reply:
                    async for _ in reply.aiter_lines():
                        pass

        walls, _ = await measure(turns, calls)
    return walls


async def prefill(runtime: Runtime, session: str, count: int, window: int) -> None:
    """`count` messages of history, summarized up to the last `window` as the loop keeps it."""
    last_id = 0
    for i in range(count // 2):
        await runtime.sessions.append(session, to_record(UserEntry(f"question {i} " * 8)))
        last_id = await runtime.sessions.append(
            session, to_record(AssistantEntry(f"answer {i} " * 20, model="test-model"))
        )
    if count > window:
        await runtime.sessions.mark_summarized(session, last_id - window, "- earlier talk")


async def agent_turns(
    runtime: Runtime, server: ScriptedModelServer, session: str, tool: bool, turns: int
) -> tuple[list[float], list[float]]:
    async def turn() -> None:
        if tool:
            server.script(Reply.tool_calls(("list_dir", '{"path": "."}')))
        server.script(Reply.text("Hello there, this is a benchmark answer.", chunks=3))
        last = None
        async for event in runtime.agent.process_message(TurnRequest("hi", session)):
            last = event
        assert isinstance(last, TurnDone), last

    return await measure(turns, turn)


async def main(turns: int, paths: list[str]) -> None:
    rows = []
    with ScriptedModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            settings = make_settings(Path(tmp) / path, server)
            settings.model.provider_path = path  # type: ignore[assignment]
            runtime = await open_runtime(settings)
            window = settings.agent.max_history - 10
            for history in HISTORIES:
                for tool in (False, True):
                    session = f"bench-{history}-{int(tool)}"
                    await prefill(runtime, session, history, window)
                    wall, cpu = await agent_turns(runtime, server, session, tool, turns)
                    bodies = server.requests[-(2 if tool else 1) :]
                    replay = raw_httpx_replay if path == "direct" else raw_replay
                    floor = await replay(server, bodies, turns)
                    kind = "one-tool turn" if tool else "plain turn"
                    rows.append((path, kind, f"{history:,}", wall, cpu, floor))
            await runtime.close()
    print(f"turns per row: {turns} (after {WARMUP} warm-up), model server latency: 0")
    print(
        "floor: the same model calls (same messages and tools) made raw: with litellm for the "
        "litellm path, with a bare httpx stream for the direct path"
    )
    print(
        "| path | turn | history | turn p50 ms | turn p99 ms | CPU p50 ms | floor p50 ms "
        "| added p50 ms | turn/floor | added within target |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    cpu_by = {}
    for path, kind, history, wall, cpu, floor in rows:
        turn50, floor50 = statistics.median(wall), statistics.median(floor)
        within = "yes" if turn50 - floor50 <= OWN_TIME_TARGET_MS else "NO"
        cpu_by[(path, kind, history)] = statistics.median(cpu)
        print(
            f"| {path} | {kind} | {history} | {turn50:.2f} | {pct(wall, 0.99):.2f} | "
            f"{statistics.median(cpu):.2f} | {floor50:.2f} | {turn50 - floor50:.2f} | "
            f"{turn50 / floor50:.2f} | {within} |"
        )
    print(
        f"\ntarget: added (CountBot's own time) at most {OWN_TIME_TARGET_MS:g} ms per turn, "
        "flat from 10 to 10,000 history entries"
    )
    if {"litellm", "direct"} <= set(paths):
        print("\n| turn | history | CPU p50 ms litellm | CPU p50 ms direct | direct / litellm |")
        print("|---|---|---|---|---|")
        for path, kind, history, *_ in rows:
            if path == "direct":
                old, new = cpu_by[("litellm", kind, history)], cpu_by[("direct", kind, history)]
                print(f"| {kind} | {history} | {old:.2f} | {new:.2f} | {new / old:.2f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--paths", nargs="+", default=["litellm", "direct"])
    arguments = parser.parse_args()
    asyncio.run(main(arguments.turns, arguments.paths))
