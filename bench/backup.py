"""Backups of a large instance: how long `backup create`, `verify` and `restore` take for a store
of 100,000 messages, how big the archive is, and whether a backup made by the daemon (its worker
thread, as `backup.every_hours` runs it) stalls the event loop while turns write.

The stall probe sleeps 2 ms at a time and records how late it wakes; "turns" append a question
and an answer through the store every 10 ms. Both run during a backup in a child process, then
as long without one (the baseline), then during a backup in a worker thread, for a few rounds
side by side, since a shared machine's own stalls are as large as what is measured.

    python bench/backup.py [--messages 100000] [--runs 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from countbot.backup.create import create_backup
from countbot.backup.reading import verify_backup
from countbot.backup.restore import restore_backup
from countbot.backup.source import Instance
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

# fmt: off
WORDS = [
    "the", "meeting", "moved", "to", "thursday", "please", "remind", "me", "about", "invoice",
    "and", "train", "tickets", "what", "did", "we", "decide", "garden", "budget", "summarize",
    "article", "on", "solar", "panels", "book", "a", "table", "for", "four", "call", "dentist",
    "report", "is", "due", "next", "week", "明天", "下午", "开会", "记得",
]
# fmt: on
PER_SESSION = 100
PROBE = 0.002


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


async def make_instance(folder: Path, messages: int) -> Instance:
    """A store of `messages` messages (a question and an answer at a time, 100 a session) written
    through the store's own append, and a workspace with MEMORY.md and a year of notes."""
    data, workspace = folder / "data", folder / "data" / "workspace"
    (workspace / "memory").mkdir(parents=True)
    rng = random.Random(7)
    (workspace / "MEMORY.md").write_text("\n".join(f"- {_text(rng, 12)}" for _ in range(300)))
    for day in range(365):
        (workspace / "memory" / f"2026-{day // 28 % 12 + 1:02d}-{day % 28 + 1:02d}.md").write_text(
            f"- {_text(rng, 20)}\n"
        )
    db = await Database.open(data / "countbot.db")
    sessions = SessionStore(db)
    try:
        for start in range(0, messages, 2000):
            writes = []
            for n in range(start, min(start + 2000, messages)):
                session = f"web:{n // PER_SESSION}"
                if n % 2 == 0:
                    record = {"type": "user", "content": _text(rng, 20)}
                else:
                    record = {"type": "assistant", "text": _text(rng, 70), "tool_calls": []}
                writes.append(sessions.append(session, record))
            await asyncio.gather(*writes)
    finally:
        await db.close()
    config = folder / "config.yaml"
    config.write_text("workspace: data/workspace\ndata_dir: data\n")
    return Instance(config, None, data, workspace, None, None, data / "models")


async def timed_phases(instance: Instance, folder: Path, runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"create": [], "verify": [], "restore": []}
    for run in range(runs):
        archive = folder / f"run{run}.tar.gz"
        start = time.perf_counter()
        await asyncio.to_thread(create_backup, instance, archive)
        times["create"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await asyncio.to_thread(verify_backup, archive)
        times["verify"].append(time.perf_counter() - start)
        start = time.perf_counter()
        await restore_backup(archive, folder / f"restored{run}")
        times["restore"].append(time.perf_counter() - start)
    return times


async def probe(until: asyncio.Event) -> list[float]:
    """How late each 2 ms sleep wakes, in ms."""
    late = []
    while not until.is_set():
        start = time.perf_counter()
        await asyncio.sleep(PROBE)
        late.append((time.perf_counter() - start - PROBE) * 1000)
    return late


async def turns(sessions: SessionStore, until: asyncio.Event) -> list[float]:
    """A question and an answer every 10 ms; each pair's store time, in ms."""
    took, n = [], 0
    while not until.is_set():
        start = time.perf_counter()
        await sessions.append("web:busy", {"type": "user", "content": f"question {n}"})
        await sessions.append("web:busy", {"type": "assistant", "text": f"answer {n}"})
        took.append((time.perf_counter() - start) * 1000)
        n += 1
        await asyncio.sleep(0.01)
    return took


async def in_child(instance: Instance, target: Path) -> None:
    """`countbot backup create` in a child process, as the daemon's schedule runs it."""
    assert instance.config is not None
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "countbot", "backup", "create", str(target), "--low-priority",
        "--config", str(instance.config), stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert await child.wait() == 0


async def stall(instance: Instance, folder: Path, how: float | str) -> tuple[list, list, float]:
    """Probe and turns for `how` seconds, or while one backup is made in a worker thread
    ("thread") or a child process ("process")."""
    db = await Database.open(instance.data_dir / "countbot.db")
    done = asyncio.Event()
    try:
        tasks = [
            asyncio.create_task(probe(done)),
            asyncio.create_task(turns(SessionStore(db), done)),
        ]
        start = time.perf_counter()
        target = folder / f"during-turns-{how}.tar.gz"
        if how == "thread":
            await asyncio.to_thread(create_backup, instance, target)
        elif how == "process":
            await in_child(instance, target)
        else:
            await asyncio.sleep(float(how))
        elapsed = time.perf_counter() - start
        done.set()
        late, took = await asyncio.gather(*tasks)
    finally:
        await db.close()
    return late, took, elapsed


Measured = tuple[list[float], list[float], float]


def _row(name: str, rounds: list[Measured]) -> str:
    """One phase over its rounds: the probe's p99 and worst lateness and the worst time to
    store a turn, each as the median of the rounds (and the worst round)."""
    p99s, worsts, stores = [], [], []
    for late, took, _ in rounds:
        late.sort()
        p99s.append(late[int(len(late) * 0.99) - 1])
        worsts.append(late[-1])
        stores.append(max(took))
    seconds = statistics.median(r[2] for r in rounds)
    return (
        f"| {name} | {seconds:.1f} | {statistics.median(p99s):.1f} ({max(p99s):.1f}) | "
        f"{statistics.median(worsts):.1f} ({max(worsts):.1f}) | "
        f"{statistics.median(stores):.1f} ({max(stores):.1f}) |"
    )


async def main(messages: int, runs: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="countbot-bench-backup-") as scratch:
        folder = Path(scratch)
        start = time.perf_counter()
        instance = await make_instance(folder / "instance", messages)
        made = time.perf_counter() - start
        store = (instance.data_dir / "countbot.db").stat().st_size
        times = await timed_phases(instance, folder, runs)
        archive = (folder / "run0.tar.gz").stat().st_size
        print(
            f"instance: {messages:,} messages in {messages // PER_SESSION:,} sessions, 365 notes"
            f" (written in {made:.0f} s); store {store / 1e6:.1f} MB, archive"
            f" {archive / 1e6:.1f} MB ({archive / store:.2f} of the store); cpus {os.cpu_count()},"
            f" load {os.getloadavg()[0]:.1f}"
        )
        print()
        print(f"| step | median of {runs} (s) | min (s) | max (s) |")
        print("|---|---|---|---|")
        for step, values in times.items():
            low, high = min(values), max(values)
            print(f"| {step} | {statistics.median(values):.2f} | {low:.2f} | {high:.2f} |")
        # Rounds of the three phases side by side: the machine's own noise hits each alike.
        phases: dict[str, list[Measured]] = {"quiet": [], "thread": [], "process": []}
        for _ in range(rounds):
            phases["process"].append(await stall(instance, folder, "process"))
            phases["quiet"].append(await stall(instance, folder, phases["process"][-1][2]))
            phases["thread"].append(await stall(instance, folder, "thread"))
        print()
        print(
            f"| event loop, turns writing; median of {rounds} rounds (worst round) | s |"
            " probe late p99 (ms) | probe late worst (ms) | slowest turn store (ms) |"
        )
        print("|---|---|---|---|---|")
        print(_row("no backup (baseline)", phases["quiet"]))
        print(_row("a backup in a worker thread", phases["thread"]))
        print(_row("a backup in a child process (the schedule's way)", phases["process"]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the stall phases")
    options = parser.parse_args()
    asyncio.run(main(options.messages, options.runs, options.rounds))
