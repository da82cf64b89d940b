"""The built-in tiny model (SmolLM2 135M) on everyday requests, as a new user would try it.

Each request runs as a whole agent turn through the runtime (tool selection, constrained tool
calls, loop detection, the bounded answer), in a fresh session. Reported per request: tool calls,
whether a greeting or question got a plain answer (text, no tool call) and whether a workspace
task had its effect (checked in the workspace and MEMORY.md), tokens and seconds; then the counts
per kind. The model is pulled and verified first, into ~/.cache/countbot-bench/models.

    python bench/small_model.py [--rounds 1] [--threads 0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.agent.events import ToolStart, TurnDone, TurnError
from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import Settings
from countbot.local_model.catalogue import DEFAULT_MODEL, find
from countbot.local_model.pull import pull
from countbot.runtime.assembly import Runtime, open_runtime

CACHE = Path.home() / ".cache" / "countbot-bench" / "models"
Check = Callable[[Path, list[ToolStart]], bool]


def wrote(ws: Path, calls: list[ToolStart]) -> bool:
    return (ws / "hello.txt").is_file() and "hi" in (ws / "hello.txt").read_text().lower()


def called(name: str) -> Check:
    return lambda ws, calls: any(call.name == name for call in calls)


def noted(ws: Path, calls: list[ToolStart]) -> bool:
    memory = ws / "MEMORY.md"
    return memory.is_file() and "milk" in memory.read_text().lower()


REQUESTS: list[tuple[str, str, Check | None]] = [
    ("greeting", "Hello!", None),
    ("greeting", "Hi there", None),
    ("greeting", "Good morning!", None),
    ("greeting", "Hey, how are you?", None),
    ("greeting", "Thanks!", None),
    ("question", "What is the capital of France?", None),
    ("question", "How many days are in a week?", None),
    ("question", "What color is the sky on a clear day?", None),
    ("task", "Create a file called hello.txt containing hi", wrote),
    ("task", "List the files in my workspace", called("list_dir")),
    ("task", "Read the file notes.txt", called("read_file")),
    ("task", "Save a note: buy milk", noted),
]


@dataclass
class Outcome:
    kind: str
    text: str
    calls: int
    ok: bool
    tokens: int
    seconds: float
    ended: str


async def run(runtime: Runtime, kind: str, text: str, check: Check | None) -> Outcome:
    """One request in a fresh session of the round's runtime (one model child per round)."""
    calls: list[ToolStart] = []
    answer, tokens, ended = "", 0, "none"
    started = time.perf_counter()
    async for event in runtime.agent.process_message(TurnRequest(text, f"bench-{text}")):
        if isinstance(event, ToolStart):
            calls.append(event)
        elif isinstance(event, TurnDone):
            answer, tokens, ended = event.content, event.usage.total_tokens, "done"
        elif isinstance(event, TurnError):
            ended = "error"
    seconds = time.perf_counter() - started
    ws = runtime.settings.workspace
    ok = check(ws, calls) if check else (not calls and bool(answer.strip()))
    return Outcome(kind, text, len(calls), ok, tokens, seconds, ended)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    entry = find(DEFAULT_MODEL)
    assert entry is not None
    await asyncio.to_thread(pull, entry, CACHE)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as folder:
        for round_number in range(args.rounds):
            settings = Settings()
            settings.model.name = f"local/{DEFAULT_MODEL}"
            settings.model.temperature = 0.0
            settings.model.local.models_dir = CACHE
            settings.model.local.threads = args.threads
            base = Path(folder) / f"round{round_number}"
            settings.workspace, settings.data_dir = base / "ws", base / "data"
            runtime = await open_runtime(settings)
            (settings.workspace / "notes.txt").write_text("buy milk\n")
            try:
                for kind, text, check in REQUESTS:
                    outcomes.append(await run(runtime, kind, text, check))
            finally:
                await runtime.close()
    report(outcomes)


def report(outcomes: list[Outcome]) -> None:
    print(f"SmolLM2 135M (built-in), temperature 0; {len(outcomes)} turns")
    print(f"{'kind':<9} {'request':<46} {'tools':>5} {'ok':>4} {'tokens':>7} {'s':>6} ended")
    for o in outcomes:
        mark = "yes" if o.ok else "no"
        print(
            f"{o.kind:<9} {o.text[:46]:<46} {o.calls:>5} {mark:>4} {o.tokens:>7,}"
            f" {o.seconds:>6.1f} {o.ended}"
        )
    print(f"\n{'kind':<9} {'ok':>7} {'tool calls':>11} {'median tokens':>14} {'median s':>9}")
    for kind, meaning in (("greeting", "plain"), ("question", "plain"), ("task", "effect")):
        group = [o for o in outcomes if o.kind == kind]
        ok = sum(o.ok for o in group)
        tokens = statistics.median(o.tokens for o in group)
        seconds = statistics.median(o.seconds for o in group)
        print(
            f"{kind:<9} {ok:>3}/{len(group):<3} {sum(o.calls for o in group):>11}"
            f" {tokens:>14,.0f} {seconds:>9.1f}   ({meaning})"
        )


if __name__ == "__main__":
    asyncio.run(main())
