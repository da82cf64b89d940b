"""Watched folders through the real daemon: a dropped file is one turn once it settles, a file
that keeps changing is one turn when it stops, and restarts take in exactly what changed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.triggers.conftest import DaemonWithTriggers, settled

FOLDERS = {
    "folders": {
        "inbox": {
            "path": "inbox",
            "prompt": "Summarize this file in one line.",
            "settle_seconds": 0.3,
        }
    }
}


def _user_text(request: dict[str, Any]) -> str:
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


async def _events(daemon: Any, count: int) -> list[dict[str, Any]]:
    """The folder's events once `count` of them have settled, oldest first."""
    async with daemon.http() as http:
        for _ in range(1200):
            events = (await http.get("/api/triggers/events")).json()["events"]
            if len(events) >= count:
                return [await settled(http, e["id"]) for e in reversed(events)]
            await asyncio.sleep(0.05)
    raise AssertionError(f"{count} folder event(s) never came")


async def test_a_file_written_in_a_burst_is_summarized_once(
    trigger_daemon: DaemonWithTriggers, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    model_server.script(Reply.text("A packing list for the trip."))
    inbox = tmp_path / "workspace" / "inbox"
    inbox.mkdir(parents=True)
    (inbox / "already-there.txt").write_text("not news", encoding="utf-8")
    async with trigger_daemon(FOLDERS) as daemon:
        with (inbox / "list.txt").open("w", encoding="utf-8") as file:
            for item in ("tent", "stove", "map", "boots", "rain jacket"):
                file.write(f"- {item}\n")
                file.flush()
                await asyncio.sleep(0.1)  # each write is closer than the settle time
        (event,) = await _events(daemon, 1)
        await asyncio.sleep(1.0)  # long enough for a second event, were there one
        assert len(await _events(daemon, 1)) == 1
    assert (event["status"], event["answer"]) == ("delivered", "A packing list for the trip.")
    (request,) = model_server.requests
    text = _user_text(request)
    assert '<external source="what trigger folder:inbox received">' in text
    assert "'list.txt'" in text and "- rain jacket" in text and "not news" not in text


async def test_restarts_take_in_what_changed_while_down_and_nothing_twice(
    trigger_daemon: DaemonWithTriggers, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    inbox = tmp_path / "workspace" / "inbox"
    async with trigger_daemon(FOLDERS) as daemon:
        (inbox / "a.txt").write_text("first version", encoding="utf-8")
        await _events(daemon, 1)
    (inbox / "a.txt").write_text("second version, longer", encoding="utf-8")
    (inbox / "b.txt").write_text("a new file", encoding="utf-8")
    async with trigger_daemon(FOLDERS) as daemon:
        events = await _events(daemon, 3)
    async with trigger_daemon(FOLDERS) as daemon:
        await asyncio.sleep(1.0)
        again = await _events(daemon, 3)
    names = sorted((e["key"].split("@")[0], e["status"]) for e in events)
    assert names == [("a.txt", "delivered"), ("a.txt", "delivered"), ("b.txt", "delivered")]
    assert len(again) == 3 and len(model_server.requests) == 3
    texts = [_user_text(r) for r in model_server.requests]
    assert sum("second version, longer" in t for t in texts) == 1
    assert sum("(changed," in t for t in texts) == 1 and sum("a new file" in t for t in texts) == 1


async def test_a_folder_that_cannot_be_watched_does_not_stop_the_daemon(
    trigger_daemon: DaemonWithTriggers, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    config = {"folders": {"bad": {"path": str(tmp_path / "a-file" / "inbox"), "prompt": "x"}}}
    async with trigger_daemon(config) as daemon, daemon.http() as http:
        listed = (await http.get("/api/triggers")).json()["triggers"]
    assert [t["name"] for t in listed] == ["bad"]
