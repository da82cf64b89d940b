"""What token-aware context saves, and that fitting a request costs the same at any history length.

1. Prompt tokens: a scripted 10-turn conversation in which four turns read the same 20 KB file,
   run twice in the same process against the scripted server: "before" reproduces the previous
   behaviour (every record of the `max_history` window sent as it is), "after" is the current
   fitting (re-reads answered "unchanged", old results as gists when the budget is tight). The
   tokens are counted from the request bodies the server received, for a large window (gpt-4o,
   128k) and a small one (16k).
2. Time per turn (plain answer, zero-latency model) with 10, 1,000 and 10,000 history entries
   already in the session: medians and the ratio to the 10-entry case.

    python bench/context_cost.py [--turns 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from countbot.agent.context.fit import Fitted
from countbot.agent.events import TurnDone
from countbot.agent.history import AssistantEntry, UserEntry, project, to_record
from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import Settings
from countbot.runtime.assembly import Runtime, open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings
from tests.support.wire_tokens import wire_tokens

READING_TURNS = (1, 3, 6, 9)
HISTORIES = (10, 1_000, 10_000)


def play(body: dict) -> Reply:
    last = body["messages"][-1]
    if last["role"] == "tool":
        return Reply.text("I read the report; it lists the quarterly figures.")
    if "report" in str(last["content"]):
        return Reply.tool_calls(("read_file", '{"path": "report.txt"}'))
    return Reply.text("Sure, noted.")


def use_previous_behaviour(runtime: Runtime) -> None:
    """The record-count window of before: every entry sent as it is, no fitting."""
    keeper = runtime.agent.context

    async def fit(entries, choice, tools, prompt=None):  # type: ignore[no-untyped-def]
        return Fitted(project(list(entries), vision=choice.vision), 0, 0, False)

    keeper.fit = fit  # type: ignore[method-assign]


async def conversation(settings: Settings, server: ScriptedModelServer, before: bool) -> int:
    server.reset()
    server.responder = play
    runtime = await open_runtime(settings)
    try:
        lines = [
            f"Q{i % 4 + 1} line {i}: revenue {i * 37 % 1000} units, cost {i * 11}"
            for i in range(600)
        ]
        (settings.workspace / "report.txt").write_text("\n".join(lines)[:20_000])
        if before:
            use_previous_behaviour(runtime)
        for turn in range(1, 11):
            text = "Read report.txt again." if turn in READING_TURNS else f"Note {turn}: fine."
            events = [e async for e in runtime.agent.process_message(TurnRequest(text, "bench"))]
            assert isinstance(events[-1], TurnDone), events[-1]  # a broken run counts nothing
        return sum(wire_tokens(body) for body in server.requests)
    finally:
        await runtime.close()


async def prompt_tokens(server: ScriptedModelServer) -> None:
    print("Prompt tokens over a 10-turn conversation, four turns reading a 20 KB file")
    print(f"{'window':>16} {'before':>10} {'after':>10} {'saved':>8}")
    for label, window in (("gpt-4o, 128k", None), ("gpt-4o as 16k", 16_384)):
        totals = []
        for before in (True, False):
            with tempfile.TemporaryDirectory() as folder:
                settings = make_settings(Path(folder), server)
                settings.model.name = "openai/gpt-4o"
                settings.model.context_window = window
                totals.append(await conversation(settings, server, before))
        saved = 1 - totals[1] / totals[0]
        print(f"{label:>16} {totals[0]:>10,} {totals[1]:>10,} {saved:>7.0%}")


async def seed(runtime: Runtime, entries: int) -> None:
    """A session that grew to `entries` records, all but the newest 40 already summarized (as a
    long session is: each summary pass happened on the way)."""
    last = 0
    for i in range(entries // 2):
        await runtime.sessions.append("long", to_record(UserEntry(f"question {i}", tokens=12)))
        last = await runtime.sessions.append(
            "long", to_record(AssistantEntry(f"answer {i}", tokens=12))
        )
    if entries > 40:
        await runtime.sessions.mark_summarized("long", last - 40, "- earlier questions answered")


async def turn_times(server: ScriptedModelServer, size: int, turns: int) -> list[float]:
    with tempfile.TemporaryDirectory() as folder:
        runtime = await open_runtime(make_settings(Path(folder), server))
        try:
            await seed(runtime, size)
            times = []
            for i in range(turns + 3):
                started = time.perf_counter()
                async for _ in runtime.agent.process_message(TurnRequest(f"hello {i}", "long")):
                    pass
                if i >= 3:
                    times.append((time.perf_counter() - started) * 1000)
            return times
        finally:
            await runtime.close()


async def time_per_turn(server: ScriptedModelServer, turns: int) -> None:
    print(f"\nTime per turn (plain answer, zero-latency model): best of 3 medians of {turns}")
    print(f"{'history':>10} {'ms/turn':>10} {'vs 10':>8}")
    server.reset()
    server.responder = None
    server.default = Reply.text("ok")
    best = {size: float("inf") for size in HISTORIES}
    for _ in range(3):  # rounds interleave the sizes: the machine is shared
        for size in HISTORIES:
            median = statistics.median(await turn_times(server, size, turns))
            best[size] = min(best[size], median)
    for size in HISTORIES:
        print(f"{size:>10,} {best[size]:>10.1f} {best[size] / best[HISTORIES[0]]:>7.2f}x")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    with ScriptedModelServer() as server:
        await prompt_tokens(server)
        await time_per_turn(server, args.turns)


if __name__ == "__main__":
    asyncio.run(main())
