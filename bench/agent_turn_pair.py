"""A warm plain turn's own time, an earlier commit against this tree, paired in one process.

On a loaded machine a row of `bench/agent_turn.py` moves by more than a change gains, run to run.
This bench imports the tree of `--base` (exported with `git archive`, its package renamed
`countbot_base`) beside this one, opens a runtime of each over the same scripted model server,
prefilled alike, and alternates their turns (base, new, new, base, ...), each followed by its
floor (the same model calls replayed as a bare httpx stream), so both halves see the same load.
Own time = turn - floor, per turn; the table gives the medians (wall, and the CPU of every thread
of the process).

    python bench/agent_turn_pair.py --base <commit> [--pairs 200] [--histories 10 1000 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.support.scripted_model import Reply, ScriptedModelServer  # noqa: E402

WARMUP = 5
ANSWER = Reply.text("Hello there, this is a benchmark answer.", chunks=3)
Replay = Callable[[list[dict]], Awaitable[None]]


def export_base(commit: str, folder: Path) -> None:
    """The package, test support and shipped files of `commit` under `folder`, the package as
    `countbot_base` (and `tests` as `tests_base`), its imports rewritten to match."""
    paths = ["countbot", "tests/__init__.py", "tests/support", "personas", "skills", "workspace"]
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, *paths], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "countbot").rename(folder / "countbot_base")
    (folder / "tests").rename(folder / "tests_base")
    package = folder / "countbot_base"
    modules = {p.stem for p in package.iterdir() if p.suffix == ".py" or p.is_dir()}
    modules -= {"__init__", "__pycache__"}
    names = "|".join(sorted(modules, key=len, reverse=True))
    dotted = re.compile(rf"\bcountbot\.({names})\b")  # not "countbot.db", a file name
    for path in folder.rglob("*.py"):
        text = path.read_text()
        new = dotted.sub(r"countbot_base.\1", text)
        new = re.sub(r"\bfrom countbot import\b", "from countbot_base import", new)
        new = re.sub(r"\btests\.support\b", "tests_base.support", new)
        if new != text:
            path.write_text(new)


def tree(package: str, tests: str) -> SimpleNamespace:
    """What the bench uses of one tree."""
    module = importlib.import_module
    return SimpleNamespace(
        open_runtime=module(f"{package}.runtime.assembly").open_runtime,
        TurnRequest=module(f"{package}.agent.turn_request").TurnRequest,
        TurnDone=module(f"{package}.agent.events").TurnDone,
        history=module(f"{package}.agent.history"),
        make_settings=module(f"{tests}.support.settings").make_settings,
    )


async def prefill(side: SimpleNamespace, runtime: Any, count: int, window: int) -> None:
    """`count` messages, summarized up to the last `window` (as `bench/agent_turn.py`)."""
    history, last_id = side.history, 0
    for i in range(count // 2):
        user = history.UserEntry(f"question {i} " * 8)
        await runtime.sessions.append("bench", history.to_record(user))
        answer = history.AssistantEntry(f"answer {i} " * 20, model="test-model")
        last_id = await runtime.sessions.append("bench", history.to_record(answer))
    if count > window:
        await runtime.sessions.mark_summarized("bench", last_id - window, "- earlier talk")


async def turn(side: SimpleNamespace, runtime: Any, server: ScriptedModelServer) -> list[dict]:
    """One plain turn; returns the request bodies it sent."""
    sent = len(server.requests)
    request = side.TurnRequest("hi", "bench")
    events = [event async for event in runtime.agent.process_message(request)]
    assert isinstance(events[-1], side.TurnDone), events[-1]
    return server.requests[sent:]


async def row(
    sides: dict[str, SimpleNamespace],
    history: int,
    pairs: int,
    server: ScriptedModelServer,
    replay: Replay,
    tmp: Path,
) -> dict[str, tuple[list[float], list[float]]]:
    """Own wall and CPU milliseconds of `pairs` alternated turns of each side at `history`."""
    runtimes = {}
    for name, side in sides.items():
        settings = side.make_settings(tmp / f"{name}-{history}", server)
        runtime = runtimes[name] = await side.open_runtime(settings)
        await prefill(side, runtime, history, settings.agent.max_history - 10)
        await runtime.memory_index.catch_up()
        for _ in range(WARMUP):
            await replay(await turn(side, runtime, server))
    own: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in sides}
    for i in range(pairs):
        for name in ("base", "new") if i % 2 == 0 else ("new", "base"):
            c0, w0 = time.process_time(), time.perf_counter()
            bodies = await turn(sides[name], runtimes[name], server)
            c1, w1 = time.process_time(), time.perf_counter()
            await replay(bodies)
            c2, w2 = time.process_time(), time.perf_counter()
            own[name][0].append(((w1 - w0) - (w2 - w1)) * 1000)
            own[name][1].append(((c1 - c0) - (c2 - c1)) * 1000)
    for runtime in runtimes.values():
        await runtime.close()
    return own


async def main(histories: list[int], pairs: int) -> None:
    import httpx

    sides = {"base": tree("countbot_base", "tests_base"), "new": tree("countbot", "tests")}
    print(f"| history | own p50 ms base -> new | own CPU p50 ms base -> new |  ({pairs} pairs)")
    print("|---|---|---|")
    with ScriptedModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = lambda body: ANSWER
        async with httpx.AsyncClient(trust_env=False) as client:

            async def replay(bodies: list[dict]) -> None:
                for body in bodies:
                    url = server.base_url + "/chat/completions"
                    async with client.stream("POST", url, json=body) as reply:
                        async for _ in reply.aiter_lines():
                            pass

            for history in histories:
                own = await row(sides, history, pairs, server, replay, Path(tmp))
                wall = [statistics.median(own[n][0]) for n in ("base", "new")]
                cpu = [statistics.median(own[n][1]) for n in ("base", "new")]
                print(
                    f"| {history:,} | {wall[0]:.2f} -> {wall[1]:.2f} | "
                    f"{cpu[0]:.2f} -> {cpu[1]:.2f} |",
                    flush=True,
                )
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare this tree with")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--histories", type=int, nargs="+", default=[10, 1_000, 10_000])
    arguments = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="countbot-base-"))
    try:
        export_base(arguments.base, folder)
        sys.path.insert(0, str(folder))
        # A helper process the base starts (the token worker) finds its package too.
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(folder)])
        asyncio.run(main(arguments.histories, arguments.pairs))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
