"""What the data-flow policy adds to a tool call: `ToolRegistry.execute` with the outbound gate
against the same registry without it (the baseline, measured in the same run).

The tools do nothing, so the difference is the policy alone: a call that sends nothing, and
outbound calls in a turn that read untrusted content and holds about 100 KB of private text (60
user messages, a 40 KB file, USER.md, secrets), with a URL or a 2 KB message as payload. The
first outbound call of a turn also reads the turn's inputs and indexes its private text; that
one-off cost is its own row.

    python bench/outbound_policy.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import string
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.file_tools import median_us
from countbot.dataflow.policy import OutboundPolicy, TurnInputs
from countbot.llm.types import ToolCall
from countbot.tools.base import Egress, Tool, ToolContext, ToolResult
from countbot.tools.registry import ToolRegistry


class Quiet(Tool):
    """A tool that sends nothing and brings nothing."""

    name: ClassVar[str] = "quiet"
    description: ClassVar[str] = "does nothing"
    parameters: ClassVar[dict[str, Any]] = {"type": "object"}

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("ok")


class Send(Quiet):
    """Declares what web_fetch declares, without the network."""

    name: ClassVar[str] = "send"

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress:
        return Egress("url", "news.example.org", str(args["payload"]))


class Page(Quiet):
    """Brings a stranger's text, as web_fetch does."""

    name: ClassVar[str] = "page"
    brings = frozenset({"untrusted"})

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(str(args["text"]))


class Read(Quiet):
    """Brings private text, as read_file does."""

    name: ClassVar[str] = "read"
    brings = frozenset({"private"})

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(str(args["text"]))


def prose(words: int, rng: random.Random) -> str:
    vocabulary = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(3000)
    ]
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def turn_inputs(rng: random.Random) -> TurnInputs:
    messages = [f"{prose(120, rng)} order {rng.randint(10000, 99999)}" for _ in range(60)]
    return TurnInputs(
        owner_words=[*messages, "Please read https://news.example.org/today"],
        request="Please read https://news.example.org/today",
        private=[("USER.md", prose(300, rng)), ("a configured secret", "sk-" + "x" * 40)],
    )


def call(name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall("c", name, "{}", args)


def registry(gate: OutboundPolicy | None) -> ToolRegistry:
    tools = ToolRegistry(gate=gate)
    for tool in (Quiet(), Send(), Page(), Read()):
        tools.register(tool)
    return tools


async def prepared_turn(tools: ToolRegistry, rng: random.Random) -> ToolContext:
    """A turn that read a 40 KB file and a 20 KB page, and already sent once (inputs indexed)."""
    ctx = ToolContext("bench", Path("."))
    await tools.execute(call("read", {"text": prose(6000, rng)}), ctx)
    await tools.execute(call("page", {"text": prose(3000, rng)}), ctx)
    await tools.execute(call("send", {"payload": "https://news.example.org/today"}), ctx)
    return ctx


async def main(calls: int) -> None:
    rng = random.Random(7)
    inputs = turn_inputs(rng)

    async def seed(ctx: ToolContext, *, secrets: bool = True) -> TurnInputs:
        return inputs

    policy = OutboundPolicy(lambda: "ask", seed, lambda record: None)
    plain, gated = registry(None), registry(policy)
    url = "https://news.example.org/2026/11/25/markets-close-higher?utm_source=feed&id=4417"
    message = prose(330, rng)[:2000]
    cases = [
        ("a call that sends nothing", "quiet", {}),
        ("web_fetch of a link (URL)", "send", {"payload": url}),
        ("a 2 KB message", "send", {"payload": message}),
    ]
    rows = []
    for label, name, args in cases:
        base_ctx = await prepared_turn(plain, rng)
        ctx = await prepared_turn(gated, rng)
        planned = call(name, args)
        base = await median_us(calls, lambda c=planned, x=base_ctx: plain.execute(c, x))
        with_policy = await median_us(calls, lambda c=planned, x=ctx: gated.execute(c, x))
        rows.append((label, base, with_policy))
    first = []
    for _ in range(20):
        start = time.perf_counter()
        await prepared_turn(gated, rng)
        first.append((time.perf_counter() - start) * 1e6)
    print(f"median µs per ToolRegistry.execute, {calls} calls; baseline: no gate, same run")
    print(f"{'call':<28} {'baseline':>9} {'policy':>9} {'added':>9} {'ratio':>6}")
    for label, base, with_policy in rows:
        added = with_policy - base
        print(
            f"{label:<28} {base:>9.1f} {with_policy:>9.1f} {added:>9.1f} {with_policy / base:>6.2f}"
        )
    once = statistics.median(first)
    print(f"once per turn, the first outbound call (~100 KB indexed): {once:.0f} µs, median of 20")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    asyncio.run(main(parser.parse_args().calls))
