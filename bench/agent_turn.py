"""How much time CountBot's own code adds to a warm turn, against the same model calls made raw.

Runs the real runtime (SQLite store, tools, context builder, memory index, model provider) against
the scripted OpenAI-compatible server with zero latency, for a plain answer and a one-tool turn, at
session histories of 10, 1,000 and 10,000 messages. Each measured turn is followed at once by its
floor: the very model calls the turn made (same messages and tools, read back from the server),
replayed raw (a bare httpx stream on the direct path, `litellm.acompletion` on the litellm path).
Pairing them makes the difference, CountBot's own time, robust to a machine whose load changes
while the bench runs. Prints medians of the turn, the floor and the own time (wall and CPU) beside
issue 27's target, and, when both paths ran, the direct path's CPU per turn as a share of
litellm's.

With `--embeddings`, each history also gets two rows with the runtime as the daemon opens it by
default (the offline model in the memory index's vector worker, started and warm, the prefill
embedded before measuring; an earlier session as long as the history beside it, as recall leaves
out the turn's own): "plain turn, embeddings on" says "hi" as the other rows do (auto-recall
finds nothing to look for in a greeting and searches nothing), "topic turn, embeddings on" asks
about a topic (each turn another of `TOPICS`), so auto-recall's search waits for the worker's
embedding of the message and its search of the vectors (nothing stored is about it: no block is
added). And the worker's part alone, timed from the daemon's side (a request with no model work,
a search) and inside a worker of the bench's own (the query's embedding, the vector search), for
the topics' messages.

    python bench/agent_turn.py [--turns 60] [--paths direct litellm] [--embeddings]
        [--histories 10 1000 10000] [--rows plain tool hi topic]

`--histories` and `--rows` run only some of them (a 10,000-history row with embeddings spends
minutes embedding its prefill): `hi` and `topic` are the two rows with embeddings on.
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
# The `--embeddings` rows time the model in this process too: on one BLAS thread, as the worker.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from countbot.agent.events import ToolEnd, TurnDone
from countbot.agent.history import AssistantEntry, UserEntry, to_record
from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import Settings
from countbot.llm.litellm_import import load_litellm
from countbot.memory.cited import KINDS
from countbot.memory_index.assembly import INDEX_FILE
from countbot.memory_index.embeddings import offline_embedder
from countbot.memory_index.index_db import Filters
from countbot.memory_index.search import CANDIDATES, RECALL_CANDIDATES
from countbot.memory_index.vector_process import worker_setup
from countbot.runtime.assembly import Runtime, open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

HISTORIES = (10, 1_000, 10_000)
PLAIN, TOOL, EMBEDDED = "plain turn", "one-tool turn", "plain turn, embeddings on"
SEARCHED = "topic turn, embeddings on"
VECTOR_KINDS = (EMBEDDED, SEARCHED)
# `--rows`' names for the kinds of row.
ROWS = {"plain": PLAIN, "tool": TOOL, "hi": EMBEDDED, "topic": SEARCHED}
WARMUP = 5
# Issue 27: CountBot's own time per warm turn (turn minus floor), whatever the history's length.
OWN_TIME_TARGET_MS = 3.0

T = TypeVar("T")
Replay = Callable[[list[dict]], Awaitable[None]]


@dataclass
class Row:
    """One row's paired samples, in milliseconds."""

    path: str
    kind: str
    history: str
    turn: list[float] = field(default_factory=list)
    turn_cpu: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)
    floor_cpu: list[float] = field(default_factory=list)

    @property
    def session(self) -> str:
        """The session the row's turns run in (auto-recall's search leaves it out)."""
        return f"bench-{self.path}-{self.history}-{self.kind}"

    def own(self) -> float:
        return statistics.median(t - f for t, f in zip(self.turn, self.floor, strict=True))

    def own_cpu(self) -> float:
        return statistics.median(t - f for t, f in zip(self.turn_cpu, self.floor_cpu, strict=True))


async def timed(action: Awaitable[T]) -> tuple[T, float, float]:
    """`action`'s result, and the wall and CPU milliseconds of awaiting it."""
    c0, w0 = time.process_time(), time.perf_counter()
    result = await action
    return result, (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000


ANSWER = Reply.text("Hello there, this is a benchmark answer.", chunks=3)
TOOL_CALL = Reply.tool_calls(("list_dir", '{"path": "."}'))
TOOL_QUESTION = "list the files in the workspace"
# Messages auto-recall searches for (content words), about nothing the prefill holds: the topic
# rows' turns ask them in turn, one each, so the worker's memory of a query's pieces
# (memory_index/use_query.py) is only as warm as a user's own earlier words would make it.
TOPICS = (
    "what did we decide about the garden plan",
    "remind me which hotel we booked in Lisbon",
    "how much did the new bicycle tyres cost",
    "when is the next dentist appointment for Mia",
    "which recipe did I like for the lentil soup",
    "what was the name of the plumber who fixed the boiler",
    "did we ever settle the argument about the car insurance",
    "where did I put the spare keys for the cellar",
    "what did the landlord say about the broken window",
    "summarize the notes from the budget meeting in March",
    "which podcast episode about volcanoes did you recommend",
    "how long should sourdough proof in a cold kitchen",
    "what time does the ferry to the island leave on Sundays",
    "who is organizing the neighbourhood cleanup this spring",
    "what were the symptoms the vet asked us to watch for",
    "remind me of my passport renewal deadline",
    "what did my brother want for his birthday",
    "which laptop charger fits the old ThinkPad",
    "how did the tomato seedlings do after the frost",
    "what is the wifi password at the cottage",
    "recap the plot of the novel my book club is reading",
    "did the electrician quote include the garage sockets",
    "what colour paint did we choose for the hallway",
    "when does the swimming course for beginners start",
    "what was wrong with the dishwasher last winter",
    "list the chores we split for the weekend",
    "which train connection works best to visit grandma",
    "what did the accountant need for the tax return",
    "how many vacation days do I have left this year",
    "what is the gate code for the parking garage",
    "which museum exhibition closes at the end of the month",
    "what did we pay for the piano lessons last term",
    "remind me about the knitting pattern with the cables",
    "how do I reset the router when the lights blink orange",
    "what flowers did the florist suggest for the wedding",
    "where did we camp during the rainy weekend in Wales",
    "what was the score of the chess tournament final",
    "which moisturizer did the dermatologist recommend",
    "how often should the aquarium filter be cleaned",
    "what did the mechanic say about the brake pads",
    "我们上次说的搬家日期是哪天",
    "帮我回忆一下装修预算的结论",
    "周末爬山的路线定了吗",
    "妈妈的体检报告有什么问题",
    "那家火锅店的地址在哪里",
    "孩子的钢琴老师叫什么名字",
    "去年春节我们给亲戚准备了什么礼物",
    "公司年会的节目安排好了吗",
    "what did we conclude about switching electricity providers",
    "which board game did the kids enjoy most at the party",
    "how much flour goes into the pancake batter",
    "what was the verdict on the leaking roof gutter",
    "remind me which insurance covers the phone screen",
    "when did we last service the lawn mower",
    "what did the teacher say at the parents evening",
    "which hiking boots did I return and why",
    "how did we solve the printer paper jam",
    "what are the opening hours of the recycling centre",
    "which streaming subscription did we cancel",
    "what did the physiotherapist suggest for my knee",
    "where is the warranty card for the washing machine",
    "what did we plan for the anniversary dinner",
    "which spices were missing for the curry",
    "how much rent did we agree on for the studio",
)
MESSAGES = {TOOL: TOOL_QUESTION}


def answer(body: dict) -> Reply:
    """The scripted model, for turns and floors alike: a tool call when the request offers tools
    and ends with the one-tool rows' question, else the answer (to a summary's request too)."""
    messages = body.get("messages") or [{}]
    asks = body.get("tools") and messages[-1].get("role") == "user"
    return TOOL_CALL if asks and TOOL_QUESTION in json.dumps(messages[-1]) else ANSWER


def litellm_replay(server: ScriptedModelServer) -> Replay:
    """The litellm path's floor: the same calls with raw `litellm.acompletion`."""
    litellm = load_litellm()

    async def calls(bodies: list[dict]) -> None:
        for body in bodies:
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

    return calls


def httpx_replay(server: ScriptedModelServer, client: object) -> Replay:
    """The direct path's floor: the same calls as a bare httpx stream (that path is an httpx
    client itself; litellm's own overhead would flatter it)."""

    async def calls(bodies: list[dict]) -> None:
        for body in bodies:
            url = server.base_url + "/chat/completions"
            async with client.stream("POST", url, json=body) as reply:  # type: ignore[attr-defined]
                async for _ in reply.aiter_lines():
                    pass

    return calls


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


def message(kind: str, turn: int) -> str:
    """What the `turn`th turn of a row of `kind` says."""
    return TOPICS[turn % len(TOPICS)] if kind == SEARCHED else MESSAGES.get(kind, "hi")


async def one_turn(
    runtime: Runtime, server: ScriptedModelServer, session: str, kind: str, turn: int
) -> list[dict]:
    """Run the `turn`th turn of `kind`; returns the request bodies it sent (a summary's call
    included)."""
    sent = len(server.requests)
    request = TurnRequest(message(kind, turn), session)
    events = [event async for event in runtime.agent.process_message(request)]
    assert isinstance(events[-1], TurnDone), events[-1]
    assert (kind == TOOL) == any(isinstance(event, ToolEnd) for event in events), events
    return server.requests[sent:]


async def paired(
    row: Row, turns: int, runtime: Runtime, server: ScriptedModelServer, replay: Replay
) -> None:
    """`turns` warm turns in `row`'s session, each followed by its floor."""
    session, kind = row.session, row.kind
    for turn in range(WARMUP):
        await replay(await one_turn(runtime, server, session, kind, turn))
    # A long session's history starts the token worker ahead of need (a child process loading
    # its tables for ~0.5 s): measured turns begin once it is ready, as in a warm daemon.
    await runtime.parts.ports.loops.tokens.settled()
    for turn in range(WARMUP, WARMUP + turns):
        bodies, wall, cpu = await timed(one_turn(runtime, server, session, kind, turn))
        row.turn.append(wall)
        row.turn_cpu.append(cpu)
        _, wall, cpu = await timed(replay(bodies))
        row.floor.append(wall)
        row.floor_cpu.append(cpu)


async def run_path(
    path: str,
    turns: int,
    server: ScriptedModelServer,
    tmp: Path,
    kinds: tuple[str, ...],
    histories: tuple[int, ...],
) -> tuple[list[Row], list[str]]:
    """Every row of one provider path, each on a runtime and data folder of its own (so one
    row's sessions are not in the next one's memory index); and the worker's part per history
    for the rows with embeddings on."""
    import httpx

    rows, worker_rows = [], []
    async with httpx.AsyncClient(trust_env=False) as client:
        replay = httpx_replay(server, client) if path == "direct" else litellm_replay(server)
        for history in histories:
            for kind in kinds:
                row = Row(path, kind, f"{history:,}")
                settings = make_settings(tmp / f"{path}-{history}-{kind}", server)
                settings.model.provider_path = path  # type: ignore[assignment]
                vectors = kind in VECTOR_KINDS
                runtime = await open_runtime(settings, memory_vectors=vectors)
                session = row.session
                window = settings.agent.max_history - 10
                await prefill(runtime, session, history, window)
                if vectors:  # memory beyond the turn's session, for recall to search
                    await prefill(runtime, f"{session}-earlier", history, window)
                await runtime.memory_index.catch_up()  # the prefill indexed, as in a warm daemon
                if vectors:  # ... and embedded, the worker started and warm
                    await asyncio.wait_for(embedded(runtime), 3600)
                await paired(row, turns, runtime, server, replay)
                if kind == SEARCHED:
                    worker_rows.append(await worker_part(runtime, settings, row, turns))
                rows.append(row)
                await runtime.close()
    return rows, worker_rows


async def embedded(runtime: Runtime) -> None:
    """Until every entry has its vector: the embedder's first idle moment (`vectors_ready`) may
    come while the follower still indexes a long history, and a turn's search would then wait
    behind the worker's batches."""
    while True:
        status = await runtime.memory_index.status()
        if status["vectors_ready"] and status["vectors"] == status["entries"]:
            return
        await asyncio.sleep(0.2)


async def worker_part(runtime: Runtime, settings: Settings, row: Row, rounds: int) -> str:
    """One table row: the vector worker's part of a turn, from the daemon's side (a request that
    does no model work: the pipe's round trip; the search auto-recall sends, which leaves out the
    turn's own session; one over every vector) and inside a worker of the bench's own on the
    same index file (the query's embedding alone, the vector search alone)."""
    vectors = runtime.memory_index.vectors
    assert vectors is not None
    everything, recall = Filters(KINDS), Filters(KINDS, exclude_session=row.session)

    async def median_ms(call: Callable[[], Awaitable[object]]) -> float:
        return statistics.median([(await timed(call()))[1] for _ in range(rounds)])

    pipe = await median_ms(vectors.stats)
    asked = iter(range(len(TOPICS), 3 * len(TOPICS) + 2 * rounds))  # past what the turns asked
    recall_ms = await median_ms(
        lambda: vectors.search(
            message(SEARCHED, next(asked)), recall, RECALL_CANDIDATES, first_only=True
        )
    )
    full_ms = await median_ms(
        lambda: vectors.search(message(SEARCHED, next(asked)), everything, CANDIDATES)
    )
    embed_ms, search_ms, count = await asyncio.to_thread(in_worker, settings, rounds)
    return (
        f"| {row.history} | {count:,} | {pipe:.2f} | {recall_ms:.2f} | {full_ms:.2f} "
        f"| {embed_ms:.2f} | {search_ms:.2f} |"
    )


def in_worker(settings: Settings, rounds: int) -> tuple[float, float, int]:
    """Medians of the query's embedding and of auto-recall's vector search over every vector, in a
    `Worker` of the bench's own (as the child holds it), and how many vectors it holds."""
    from countbot.memory_index.vector_worker import Worker

    worker = Worker(**worker_setup(settings.data_dir / INDEX_FILE, offline_embedder()))
    everything = Filters(KINDS).wanted()
    worker.search("hi", everything, CANDIDATES)  # the model loaded
    embed, search = [], []
    for turn in range(rounds):
        topic = message(SEARCHED, turn)
        w0 = time.perf_counter()
        worker.query(topic, first_only=True)  # as auto-recall's search reads it
        w1 = time.perf_counter()
        worker.query(topic, first_only=True)  # again, its pieces now known
        w2 = time.perf_counter()
        worker.search(topic, everything, RECALL_CANDIDATES, first_only=True)  # and the search
        embed.append((w1 - w0) * 1000)
        search.append((time.perf_counter() - w2 - (w2 - w1)) * 1000)
    return statistics.median(embed), statistics.median(search), worker.stats()["rows"]


def report(rows: list[Row], turns: int) -> None:
    print(f"turns per row: {turns} (after {WARMUP} warm-up), model server latency: 0")
    print(
        "floor: the same model calls each turn made, replayed raw right after it: a bare httpx "
        "stream for the direct path, litellm for the litellm path; own = turn - floor, per pair"
    )
    print(
        "| path | turn | history | turn p50 ms | floor p50 ms | own p50 ms | own CPU p50 ms "
        f"| turn CPU p50 ms | own within {OWN_TIME_TARGET_MS:g} ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        own = row.own()
        print(
            f"| {row.path} | {row.kind} | {row.history} | {statistics.median(row.turn):.2f} | "
            f"{statistics.median(row.floor):.2f} | {own:.2f} | {row.own_cpu():.2f} | "
            f"{statistics.median(row.turn_cpu):.2f} | "
            f"{'yes' if own <= OWN_TIME_TARGET_MS else 'NO'} |"
        )
    print(
        f"\ntarget (issue 27): own time at most {OWN_TIME_TARGET_MS:g} ms per warm turn, "
        "flat from 10 to 10,000 history entries"
    )
    cpu = {(r.path, r.kind, r.history): statistics.median(r.turn_cpu) for r in rows}
    if {"litellm", "direct"} <= {r.path for r in rows}:
        print("\n| turn | history | CPU p50 ms litellm | CPU p50 ms direct | direct / litellm |")
        print("|---|---|---|---|---|")
        for row in rows:
            if row.path == "direct":
                old, new = (
                    cpu[("litellm", row.kind, row.history)],
                    cpu[row.path, row.kind, row.history],
                )
                print(f"| {row.kind} | {row.history} | {old:.2f} | {new:.2f} | {new / old:.2f} |")


def report_worker(worker_rows: list[str]) -> None:
    print(
        "\nthe vector worker's part (medians, ms): from the daemon's side, a request with no "
        "model work (the pipe), auto-recall's search (its own session left out) and a search "
        "over every vector (memory_search's 50 candidates); inside a worker of the bench's own, "
        "the query's embedding and auto-recall's vector search over every vector (a paired "
        "difference)"
    )
    print(
        "| history | vectors | pipe round trip | recall's search | search over all "
        "| embedding alone | search alone |"
    )
    print("|---|---|---|---|---|---|---|")
    print("\n".join(worker_rows))


async def main(
    turns: int,
    paths: list[str],
    embeddings: bool,
    histories: tuple[int, ...],
    only: list[str] | None,
) -> None:
    rows, worker_rows = [], []
    kinds = (PLAIN, TOOL, *VECTOR_KINDS) if embeddings else (PLAIN, TOOL)
    if only:
        kinds = tuple(kind for kind in kinds if kind in {ROWS[name] for name in only})
    with ScriptedModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = answer
        for path in paths:
            found, worker = await run_path(path, turns, server, Path(tmp), kinds, histories)
            rows.extend(found)
            worker_rows.extend(worker)
    report(rows, turns)
    if worker_rows:
        report_worker(worker_rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--paths", nargs="+", default=["direct"])
    parser.add_argument(
        "--embeddings", action="store_true", help="add the turns with the offline embedder"
    )
    parser.add_argument("--histories", nargs="+", type=int, default=list(HISTORIES))
    parser.add_argument(
        "--rows", nargs="+", choices=sorted(ROWS), help="only these rows (hi, topic: --embeddings)"
    )
    arguments = parser.parse_args()
    asyncio.run(
        main(
            arguments.turns,
            arguments.paths,
            arguments.embeddings,
            tuple(arguments.histories),
            arguments.rows,
        )
    )
