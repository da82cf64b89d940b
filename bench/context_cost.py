"""What token-aware context saves, what prompt caching saves, what recall costs, and that
fitting a request costs the same at any history length.

1. Prompt tokens: two scripted 10-turn conversations, run in the same process against the
   scripted server: "same file" reads the same 20 KB file in turns 1, 3, 6 and 9; "four files"
   reads four different 20 KB files in turns 2, 4, 6 and 8. "before" reproduces the record-count
   window (every record sent as it is), "after" is the current fitting (re-reads answered
   "unchanged", finished exchanges' long results cut to head and tail, gists when the budget is
   tight). The tokens are counted from the request bodies the server received (gpt-4o's
   tokenizer), for a large window (gpt-4o, 128k) and a small one (16k); the answers of both runs
   are compared. The workspace's MEMORY.md holds 40 dated notes, a few about reports, so
   auto-recall adds blocks; their share of the prompt tokens is counted from the bodies too.
2. Price on a Claude model: the same conversations sent through litellm to the fake Anthropic
   Messages API (`tests/support/anthropic_server.py`, which caches by the API's rules and counts
   a token per four characters of a block), with `model.prompt_caching` on and off, priced from
   the model map for claude-sonnet-4-5 (cache reads at a tenth of the input price, writes at
   1.25 times). "recall" here is the usage table's own count of the recall blocks' tokens
   (an estimate, `Usage.recall_tokens`) over the prompt tokens.
3. Time per turn (plain answer, zero-latency model) with 10, 1,000 and 10,000 history entries
   already in the session: medians and the ratio to the 10-entry case.

    python bench/context_cost.py [--turns 30]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from countbot.agent.context.fit import Fitted
from countbot.agent.context.keeper import ContextKeeper
from countbot.agent.events import TurnDone
from countbot.agent.history import AssistantEntry, UserEntry, project, to_record
from countbot.agent.turn_request import TurnRequest
from countbot.config.secret import SecretStr
from countbot.config.settings import Settings
from countbot.llm.token_counter import count_text
from countbot.runtime.assembly import Runtime, open_runtime
from tests.support.anthropic_server import AnthropicServer
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings
from tests.support.wire_tokens import wire_tokens

CLAUDE = "anthropic/claude-sonnet-4-5"
HISTORIES = (10, 1_000, 10_000)
# The recall block as the model reads it (inside its authorship marker, when it has one).
RECALLED = re.compile(
    r"(?:<external [^>]*>\n)?\[Recalled from memory.*?\[End of recalled memory\](?:\n</external>)?",
    re.DOTALL,
)


def same_file(turn: int) -> str:
    return "Read report.txt again." if turn in (1, 3, 6, 9) else f"Note {turn}: fine."


def four_files(turn: int) -> str:
    return f"Read q{turn // 2}.txt please." if turn in (2, 4, 6, 8) else f"Note {turn}: fine."


CONVERSATIONS: dict[str, Callable[[int], str]] = {"same file": same_file, "four files": four_files}


def last_said(body: dict[str, Any]) -> tuple[bool, str]:
    """Whether the request ends with a tool result, and the last message's text (OpenAI's
    format or Anthropic's)."""
    last = body["messages"][-1]
    content = last["content"]
    if isinstance(content, str):
        return last["role"] == "tool", content
    blocks = [block for block in content if isinstance(block, dict)]
    tool = last["role"] == "tool" or any(b.get("type") == "tool_result" for b in blocks)
    return tool, " ".join(str(b.get("text", "")) for b in blocks)


def play(body: dict[str, Any]) -> Reply:
    tool, text = last_said(body)
    if tool:
        return Reply.text("I read the report; it lists the quarterly figures.")
    asked = re.search(r"Read (\S+\.txt)", text)
    if asked:
        return Reply.tool_calls(("read_file", json.dumps({"path": asked.group(1)})))
    return Reply.text("Sure, noted.")


def write_workspace(workspace: Path) -> None:
    """The report files, and MEMORY.md with dated notes (a few about reports: recall finds them)."""
    workspace.mkdir(parents=True, exist_ok=True)
    for number, name in enumerate(("report", "q1", "q2", "q3", "q4")):
        lines = [
            f"{name.upper()} line {i}: revenue {(i * 37 + number) % 1000} units, cost {i * 11}"
            for i in range(700)
        ]
        (workspace / f"{name}.txt").write_text("\n".join(lines)[:20_000])
    topics = ["the garden", "a dentist visit", "the car", "a birthday", "the quarterly report"]
    notes = [
        f"- 2026-0{1 + i % 9}-1{i % 10}: Note about {topics[i % len(topics)]}: item {i} is fine."
        for i in range(40)
    ]
    (workspace / "MEMORY.md").write_text("# Memory\n\n" + "\n".join(notes) + "\n")


class _Unfitted(ContextKeeper):
    """The record-count window of before: every entry sent as it is, no fitting."""

    async def fit(self, entries, choice, tools, prompt, *, exact=False):  # type: ignore[no-untyped-def]
        return Fitted(project(list(entries), vision=choice.vision), 0, 0, False)


def use_previous_behaviour(runtime: Runtime) -> None:
    keeper = runtime.agent.context
    kept = {f.name: getattr(keeper, f.name) for f in dataclasses.fields(keeper) if f.init}
    runtime.agent.context = _Unfitted(**kept)


async def conversation(settings: Settings, turns: Callable[[int], str], before: bool) -> list[str]:
    """The answers of a 10-turn conversation (the requests are on the server)."""
    write_workspace(settings.workspace)
    runtime = await open_runtime(settings)
    try:
        if before:
            use_previous_behaviour(runtime)
        answers = []
        for turn in range(1, 11):
            request = TurnRequest(turns(turn), "bench")
            events = [e async for e in runtime.agent.process_message(request)]
            assert isinstance(events[-1], TurnDone), events[-1]  # a broken run counts nothing
            answers.append(events[-1].content)
        return answers
    finally:
        await runtime.close()


def recall_tokens(body: dict[str, Any]) -> int:
    """Tokens of the recall blocks a chat-completions request holds."""
    total = 0
    for message in body["messages"]:
        content = message.get("content")
        texts = (
            [content] if isinstance(content, str) else [p.get("text", "") for p in content or ()]
        )
        for text in texts:
            total += sum(count_text(block, body["model"]) for block in RECALLED.findall(text))
    return total


async def prompt_tokens(server: ScriptedModelServer) -> None:
    print("Prompt tokens over 10-turn conversations (gpt-4o's tokenizer, from the request bodies)")
    print(
        f"{'conversation':>13} {'window':>14} {'before':>9} {'after':>9} {'saved':>6}"
        f" {'recall':>7} {'answers':>8}"
    )
    for name, turns in CONVERSATIONS.items():
        for label, window in (("gpt-4o, 128k", None), ("gpt-4o as 16k", 16_384)):
            totals, answers, recall = [], [], 0
            for before in (True, False):
                server.reset()
                server.responder = play
                with tempfile.TemporaryDirectory() as folder:
                    settings = make_settings(Path(folder), server)
                    settings.model.name = "openai/gpt-4o"
                    settings.model.context_window = window
                    answers.append(await conversation(settings, turns, before))
                totals.append(sum(wire_tokens(body) for body in server.requests))
                recall = sum(recall_tokens(body) for body in server.requests)
            saved = 1 - totals[1] / totals[0]
            same = "same" if answers[0] == answers[1] else "DIFFER"
            print(
                f"{name:>13} {label:>14} {totals[0]:>9,} {totals[1]:>9,} {saved:>5.0%}"
                f" {recall / totals[1]:>6.1%} {same:>8}"
            )


async def claude_price(server: AnthropicServer, model_server: ScriptedModelServer) -> None:
    print(f"\nThe same conversations priced for {CLAUDE} (fake Messages API, its token counts)")
    print(
        f"{'conversation':>13} {'caching':>8} {'prompt':>9} {'read':>9} {'written':>8}"
        f" {'recall':>7} {'cost $':>8} {'saved':>6}"
    )
    for name, turns in CONVERSATIONS.items():
        costs = []
        for caching in (False, True):
            server.reset()
            server.responder = play
            with tempfile.TemporaryDirectory() as folder:
                settings = make_settings(Path(folder), model_server)
                settings.model.name = CLAUDE
                settings.model.api_base = server.url
                settings.model.api_key = SecretStr("sk-ant-bench-0123456789")
                settings.model.prompt_caching = caching
                write_workspace(settings.workspace)
                runtime = await open_runtime(settings)
                try:
                    for turn in range(1, 11):
                        request = TurnRequest(turns(turn), "bench")
                        events = [e async for e in runtime.agent.process_message(request)]
                        assert isinstance(events[-1], TurnDone), events[-1]
                    totals = await runtime.usage.totals()
                finally:
                    await runtime.close()
            costs.append(totals["cost_usd"])
            saved = f"{1 - costs[1] / costs[0]:>5.0%}" if caching else ""
            print(
                f"{name:>13} {'on' if caching else 'off':>8} {totals['prompt_tokens']:>9,}"
                f" {totals['cached_tokens']:>9,} {totals['cache_write_tokens']:>8,}"
                f" {totals['recall_tokens'] / totals['prompt_tokens']:>6.1%}"
                f" {totals['cost_usd']:>8.4f} {saved:>6}"
            )


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
    with ScriptedModelServer() as server, AnthropicServer() as claude:
        await prompt_tokens(server)
        await claude_price(claude, server)
        await time_per_turn(server, args.turns)


if __name__ == "__main__":
    asyncio.run(main())
