"""The built-in local model on this machine: speed, CountBot's added time, memory.

Starts the tiny SmolLM2 135M (pulled and verified first, into ~/.cache/countbot-bench/models)
in its xllamacpp child server, then runs, interleaved round by round so drift on a shared
machine hits both alike:

  (a) direct: one streamed request over httpx straight to the child, with exactly the body
      CountBot sent for the same turn (captured from the provider), so the prompts are equal;
  (b) countbot: a whole agent turn (context, constrained request, stream, storage) through the
      runtime, in a fresh session each round so its prompt is the same every time.

Reported: time to the first text (for (a) the reply's first token; for (b) the first character
of the answer, which comes a few tokens later, after the `{"answer": "` that constrained mode
makes the model write), the whole answer, the model's speed (tokens/s after the first token, from
(a)), CountBot's added time over (a), and the RSS of this process (the daemon's runtime) and of
the model's child.

    python bench/local_model.py [--rounds 5] [--max-tokens 32] [--threads 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.agent.events import TextChunk, TurnDone
from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import Settings
from countbot.llm.direct_provider import DirectProvider
from countbot.local_model.catalogue import DEFAULT_MODEL, find
from countbot.local_model.pull import pull
from countbot.runtime.assembly import open_runtime

CACHE = Path.home() / ".cache" / "countbot-bench" / "models"
QUESTION = "What is the capital of France? Answer in one sentence."


@dataclass
class Sample:
    first: float  # seconds to the first streamed text
    total: float  # seconds to the end of the answer
    tokens: int  # completion tokens the server counted

    @property
    def speed(self) -> float:
        """Tokens per second after the first token."""
        return (self.tokens - 1) / (self.total - self.first) if self.total > self.first else 0.0


def rss_mb(pid: int) -> float:
    """Resident memory of a process from /proc, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def direct(url: str, key: str, body: dict[str, Any]) -> Sample:
    """One streamed request straight to the child server."""
    started, first, tokens = time.perf_counter(), None, 0
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx.AsyncClient(timeout=None, trust_env=False) as http,
        http.stream("POST", url, json=body, headers=headers) as reply,
    ):
        async for line in reply.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
            for choice in chunk.get("choices") or ():
                if first is None and (choice.get("delta") or {}).get("content"):
                    first = time.perf_counter() - started
    total = time.perf_counter() - started
    return Sample(first if first is not None else total, total, tokens)


async def turn(runtime: Any, session: str) -> Sample:
    """One whole agent turn; time to the first streamed answer text."""
    started, first, tokens = time.perf_counter(), None, 0
    async for event in runtime.agent.process_message(TurnRequest(QUESTION, session)):
        if first is None and isinstance(event, TextChunk):
            first = time.perf_counter() - started
        if isinstance(event, TurnDone):
            tokens = event.usage.completion_tokens
    total = time.perf_counter() - started
    return Sample(first if first is not None else total, total, tokens)


def capture_bodies() -> list[dict[str, Any]]:
    """Keep every request body the direct provider builds (to replay the same one directly)."""
    bodies: list[dict[str, Any]] = []
    build = DirectProvider._body

    def recording(self: DirectProvider, endpoint: Any, request: Any) -> dict[str, Any]:
        body = build(self, endpoint, request)
        bodies.append(body)
        return body

    DirectProvider._body = recording  # type: ignore[method-assign]
    return bodies


def median(samples: list[Sample], field: str) -> float:
    return statistics.median(getattr(s, field) for s in samples)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    entry = find(DEFAULT_MODEL)
    assert entry is not None
    await asyncio.to_thread(pull, entry, CACHE)
    bodies = capture_bodies()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings()
        settings.model.name = f"local/{DEFAULT_MODEL}"
        settings.model.temperature = 0.0
        settings.model.max_tokens = args.max_tokens
        settings.model.local.models_dir = CACHE
        settings.model.local.threads = args.threads
        settings.workspace, settings.data_dir = Path(folder) / "ws", Path(folder) / "data"
        runtime = await open_runtime(settings)
        try:
            cold = await turn(runtime, "warm-up")  # loads the model, reads the prompt once
            server = runtime.models.local.server
            assert server is not None and server.pid is not None
            url, body = await server.url() + "/chat/completions", bodies[-1]
            ours: list[Sample] = []
            theirs: list[Sample] = []
            for index in range(args.rounds):
                order = ("ours", "direct") if index % 2 == 0 else ("direct", "ours")
                for name in order:
                    if name == "ours":
                        ours.append(await turn(runtime, f"round-{index}"))
                    else:
                        theirs.append(await direct(url, server.api_key, body))
            daemon_mb, model_mb = rss_mb(os.getpid()), rss_mb(server.pid)
            threads = server.options.resolved_threads()
        finally:
            await runtime.close()
    print(
        f"SmolLM2 135M Q4_1, {threads} thread(s), {os.cpu_count()} cores, "
        f"max_tokens {args.max_tokens}, {args.rounds} rounds, medians"
    )
    print(f"cold first turn (model load + {cold.first:.1f} s to first token): {cold.total:.1f} s")
    print()
    print(f"{'path':<34}{'first text':>12}{'whole':>10}{'tokens/s':>10}")
    rows = (("direct request to the child", theirs), ("CountBot turn (agent loop)", ours))
    for name, samples in rows:
        speed = f"{median(samples, 'speed'):>10.1f}" if samples is theirs else ""
        print(
            f"{name:<34}{median(samples, 'first') * 1000:>9.0f} ms"
            f"{median(samples, 'total') * 1000:>7.0f} ms{speed}"
        )
    added_first = median(ours, "first") - median(theirs, "first")
    added_total = median(ours, "total") - median(theirs, "total")
    print(f"{'CountBot added':<34}{added_first * 1000:>9.0f} ms{added_total * 1000:>7.0f} ms")
    print()
    print(
        f"RSS: daemon runtime {daemon_mb:.0f} MB + model child {model_mb:.0f} MB "
        f"= {daemon_mb + model_mb:.0f} MB"
    )


if __name__ == "__main__":
    asyncio.run(main())
