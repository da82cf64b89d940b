"""The built-in tiny model (SmolLM2 135M) on everyday requests, as a new user would try it.

Each request runs as a whole agent turn through the runtime (tool selection, constrained tool
calls, loop detection, the bounded answer), in a fresh session. Reported per request: tool calls,
whether a greeting or question got a plain answer (text, no tool call) and whether a workspace
task had its effect (checked in the workspace and MEMORY.md), tokens and seconds; then the counts
per kind; then twenty everyday requests, ten in English and ten in Chinese (read, show, what's
in, summarize, list, delete, remember, remind, compose a text, create a file): the tool each
was offered and the first it called. The model is pulled and verified first, into
~/.cache/countbot-bench/models.

    python bench/small_model.py [--rounds 1] [--threads 0]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.agent.events import ToolStart, TurnDone, TurnError
from countbot.agent.toolset import select_tools
from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import Settings
from countbot.local_model.catalogue import DEFAULT_MODEL, find
from countbot.local_model.pull import pull
from countbot.runtime.assembly import Runtime, open_runtime
from countbot.scheduler.assembly import JobsFeature

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


# Everyday requests in both languages and the tool each should make the model call first (None:
# compose the text, call nothing). Files they name are in the workspace.
EVERYDAY: list[tuple[str, str, str | None]] = [
    ("en", "Read notes.txt", "read_file"),
    ("en", "Show me report.md", "read_file"),
    ("en", "What's in notes.txt?", "read_file"),
    ("en", "Summarize report.md", "read_file"),
    ("en", "List the files in my workspace", "list_dir"),
    ("en", "Delete old.txt", "exec"),
    ("en", "Remember that my sister's birthday is May 3", "memory_write"),
    ("en", "Remind me to call mom every day at 6pm", "cron"),
    ("en", "Write one sentence about cats.", None),
    ("en", "Create a file called todo.txt containing buy bread", "write_file"),
    ("zh", "读一下 notes.txt", "read_file"),
    ("zh", "给我看看 report.md", "read_file"),
    ("zh", "notes.txt 里有什么？", "read_file"),
    ("zh", "总结一下 report.md", "read_file"),
    ("zh", "列出工作区里的文件", "list_dir"),
    ("zh", "删除 old.txt", "exec"),
    ("zh", "记住我妹妹的生日是5月3日", "memory_write"),
    ("zh", "每天下午6点提醒我给妈妈打电话", "cron"),
    ("zh", "写一首关于猫的短诗", None),
    ("zh", "创建一个文件 todo.txt，内容是买面包", "write_file"),
]
READING = ("read_file", "list_dir")
WRITING = frozenset({"write_file", "edit_file", "exec", "memory_write", "memory_forget"})
# Pictographs and symbols: a wall of them is the tiny model's failure mode on a greeting.
EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf]")


@dataclass
class Outcome:
    kind: str
    text: str
    calls: int
    ok: bool
    tokens: int
    seconds: float
    ended: str
    answer: str = ""
    first_tool: str | None = None
    offered: tuple[str, ...] = ()


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
    first = calls[0].name if calls else None
    return Outcome(kind, text, len(calls), ok, tokens, seconds, ended, answer, first)


def offered(runtime: Runtime, text: str) -> tuple[str, ...]:
    """What the turn offers the small model for `text` (the loop's own selection)."""
    chosen = select_tools(runtime.agent.tools, text, small=True, budget=0, cost=lambda spec: 0)
    return tuple(spec.name for spec in chosen)


async def everyday(runtime: Runtime) -> list[Outcome]:
    """The everyday requests: ok when the first tool called is the expected one (or, for a text
    to compose, none and an answer)."""
    outcomes = []
    for language, text, expected in EVERYDAY:
        outcome = await run(runtime, language, text, None)
        outcome.ok = outcome.first_tool == expected and (expected or outcome.answer.strip())
        outcome.offered = offered(runtime, text)
        outcomes.append(outcome)
    return outcomes


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    entry = find(DEFAULT_MODEL)
    assert entry is not None
    await asyncio.to_thread(pull, entry, CACHE)
    outcomes: list[Outcome] = []
    daily: list[Outcome] = []
    with tempfile.TemporaryDirectory() as folder:
        for round_number in range(args.rounds):
            settings = Settings()
            settings.model.name = f"local/{DEFAULT_MODEL}"
            settings.model.temperature = 0.0
            settings.model.local.models_dir = CACHE
            settings.model.local.threads = args.threads
            base = Path(folder) / f"round{round_number}"
            settings.workspace, settings.data_dir = base / "ws", base / "data"
            runtime = await open_runtime(settings, features=[JobsFeature()])  # `cron`
            ws = settings.workspace
            (ws / "notes.txt").write_text("buy milk\n")
            (ws / "report.md").write_text("# Report\nSales grew 11% in Lisbon.\n")
            try:
                for kind, text, check in REQUESTS:
                    outcomes.append(await run(runtime, kind, text, check))
                (ws / "old.txt").write_text("old\n")
                daily.extend(await everyday(runtime))
            finally:
                await runtime.close()
    report(outcomes)
    report_everyday(daily)


def report(outcomes: list[Outcome]) -> None:
    print(f"SmolLM2 135M (built-in), temperature 0; {len(outcomes)} turns")
    print(f"{'kind':<9} {'request':<46} {'tools':>5} {'ok':>4} {'tokens':>7} {'s':>6} ended")
    for o in outcomes:
        mark = "yes" if o.ok else "no"
        print(
            f"{o.kind:<9} {o.text[:46]:<46} {o.calls:>5} {mark:>4} {o.tokens:>7,}"
            f" {o.seconds:>6.1f} {o.ended}"
        )
    greetings = [o for o in outcomes if o.kind == "greeting"]
    walls = sum(len(EMOJI.findall(o.answer)) > 3 for o in greetings)
    longest = max(len(o.answer) for o in greetings)
    print(f"greetings: longest answer {longest} characters, {walls} with over 3 emoji")
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


def report_everyday(outcomes: list[Outcome]) -> None:
    print("\nEveryday requests: the first tool the model called, and what it was offered")
    print(f"{'lang':<5} {'request':<40} {'offered':<22} {'called':<13} {'ok':>3} {'s':>6}")
    for o in outcomes:
        mark = "yes" if o.ok else "no"
        shown = ",".join(o.offered) or "-"
        print(
            f"{o.kind:<5} {o.text[:40]:<40} {shown[:22]:<22} {o.first_tool or '-':<13}"
            f" {mark:>3} {o.seconds:>6.1f}"
        )
    for language in ("en", "zh"):
        group = [o for o in outcomes if o.kind == language]
        expected = [e for lang, _, e in EVERYDAY if lang == language]
        reading = [o for o, e in zip(group, expected, strict=True) if e in READING]
        only_writing = sum(bool(o.offered) and set(o.offered) <= WRITING for o in reading)
        print(
            f"{language}: right tool {sum(bool(o.ok) for o in group)}/{len(group)}; reading "
            f"requests offered only writing tools: {only_writing}/{len(reading)}"
        )


if __name__ == "__main__":
    asyncio.run(main())
