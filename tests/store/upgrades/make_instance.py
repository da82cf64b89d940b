"""Writes a small instance with the CountBot found on PYTHONPATH: an earlier commit's checkout.

`make_fixtures.sh` runs it once per commit with that checkout first on the path, so each
fixture is what that version of the store, memory and scheduler code really wrote; the tests
then open it with today's code. It uses only what the oldest commits already had, and what a
commit lacks (pairing, jobs, the outbox) is left out of its instance.

Run: PYTHONPATH=<old checkout> python make_instance.py <folder>
"""

from __future__ import annotations

import asyncio
import sys
from datetime import date
from pathlib import Path

import countbot
from countbot.memory.memory_file import MemoryFile
from countbot.memory.notes import add_note
from countbot.store.database import Database
from countbot.store.sessions import SessionStore

NOW = 1_764_000_000.0  # 2025-11-24: the fixtures' contents are the same whenever they are made


CHECKOUT = Path(countbot.__file__).parent


def _has(module: str) -> bool:
    """Whether the checkout itself has `module` (an editable install of a newer CountBot could
    otherwise supply a module the old commit lacks)."""
    return (CHECKOUT / (module.removeprefix("countbot.").replace(".", "/") + ".py")).is_file()


async def main(folder: Path) -> None:
    data = folder / "data"
    workspace = data / "workspace"
    workspace.mkdir(parents=True)
    memory = MemoryFile(workspace / "MEMORY.md")
    await memory.update(
        lambda text: add_note(text, date(2025, 11, 20), "The owner's bike is blue.")
    )
    await memory.update(lambda text: add_note(text, date(2025, 11, 21), "Dentist on Fridays."))
    db = await Database.open(data / "countbot.db")
    assert all(
        Path(module.__file__).is_relative_to(CHECKOUT)
        for name, module in sys.modules.items()
        if name.startswith("countbot") and getattr(module, "__file__", None)
    ), "a module came from another CountBot than the checkout on PYTHONPATH"
    try:
        sessions = SessionStore(db)
        for n, session in enumerate(("web:alpha", "telegram:42", "cli:default")):
            await sessions.create(session_id=session, title=f"chat {n}")
            for turn in range(3):
                await sessions.append(
                    session, {"type": "user", "content": f"{session} question {turn}"}
                )
                await sessions.append(
                    session, {"type": "assistant", "content": f"{session} answer {turn}"}
                )
        if _has("countbot.store.pairing"):
            await _pair(db)
        if _has("countbot.scheduler.book"):
            await _job(db)
    finally:
        await db.close()


async def _pair(db: Database) -> None:
    from countbot.store.pairing import PairingStore, SenderInfo

    pairing = PairingStore(db)
    code = await pairing.offer(
        "telegram", SenderInfo("42", "owner", "Owner"), lambda: "ABCD2345", NOW
    )
    assert code is not None and await pairing.approve("telegram", code, NOW + 1) is not None


async def _job(db: Database) -> None:
    from countbot.scheduler.book import JobBook, JobDraft
    from countbot.scheduler.jobs import Delivery
    from countbot.store.jobs import JobStore

    book = JobBook(JobStore(db), "UTC")
    draft = JobDraft(
        name="morning news",
        schedule_kind="cron",
        schedule_value="0 8 * * *",
        prompt="Summarize the news",
        delivery=Delivery.parse("telegram:42"),
    )
    await book.create(draft)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
