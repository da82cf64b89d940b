"""Subagents end to end: a real daemon, the scripted model, WebSocket clients and fake Telegram."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from countbot.config.loader import load_settings
from countbot.llm.litellm_import import preload_litellm
from countbot.scheduler.book import JobDraft
from countbot.scheduler.jobs import Delivery
from countbot.web.daemon import bind_listener, serve_daemon
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import ALICE
from tests.subagents.script import Conversations, spawn, subagent_daemon
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, WsClient, write_config

WAIT = 60.0  # an upper bound for a loaded 2-core CI machine; passing tests never wait it out


@pytest.fixture
async def telegram_daemon(daemon_with_telegram: Daemon) -> Daemon:
    """The Telegram daemon once litellm is loaded: the fake's 20 s waits are for our turns,
    not for a cold import on a busy machine."""
    await preload_litellm()
    return daemon_with_telegram


async def _chat(daemon: Daemon, text: str, session: str = "s1") -> WsClient:
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": session, "content": text})
    return client


async def _until(client: WsClient, check: Any, what: str) -> None:
    """Read frames until `check(client)` holds."""
    async with asyncio.timeout(WAIT):
        while not check(client):
            await client.recv()
    assert check(client), what


async def _ended(manager: Any, subagent_id: str) -> Any:
    """The subagent's record once its task has written how it ended (a stop cancels its token at
    once; the task records the ending a moment later)."""
    async with asyncio.timeout(WAIT):
        while True:
            record = await manager.get(subagent_id)
            if record is None or record.status not in ("queued", "running"):
                return record
            await asyncio.sleep(0.02)


def _dones(client: WsClient) -> list[str]:
    return [f["content"] for f in client.of("done")]


def _updates(client: WsClient, status: str | None = None) -> list[dict[str, Any]]:
    return [f for f in client.of("subagent") if status is None or f["status"] == status]


async def test_a_spawned_subagents_report_reaches_the_web_chat(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Find the answer", "answer")), Reply.text("On it.")])
    conv.subagent("answer", Reply.text("The answer is 42."))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "Find the answer, xyzzy")
        await _until(client, lambda c: "Relayed: answer" in _dones(c), "the relayed report")
        assert _dones(client) == ["On it.", "Relayed: answer"]
        statuses = [f["status"] for f in _updates(client)]
        assert statuses[0] in {"queued", "running"} and statuses[-1] == "done"
        (report,) = [f for f in client.of("user_message") if f["session_id"] == "s1"]
        assert report["content"].startswith("Subagent report: answer (")
        assert "The answer is 42." in report["content"]
        # The subagent worked from its focused prompt, without the user's chat history.
        (first,) = conv.of("answer")[:1]
        assert "Find the answer" in first["messages"][0]["content"]
        assert "xyzzy" not in json.dumps(first["messages"])
        # The report turn told the model where the message came from.
        assert "report of subagent" in json.dumps(conv.of("main")[-1]["messages"][-1])
        subagent_id = _updates(client)[0]["id"]
        async with daemon.http() as http:
            listed = (await http.get("/api/sessions")).json()["sessions"]
            mine = next(s for s in listed if s["id"] == f"subagent:{subagent_id}")
            assert mine["parent"] == "s1" and mine["channel"] == "subagent"
            history = (await http.get(f"/api/sessions/subagent:{subagent_id}/messages")).json()
            assert history["messages"][-1]["text"] == "The answer is 42."
            (record,) = (await http.get("/api/subagents?session=s1")).json()["subagents"]
            assert record["status"] == "done" and record["result"] == "The answer is 42."
        await client.close()


async def test_the_report_reaches_a_telegram_chat(
    telegram_daemon: Daemon, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Check the train", "train")), Reply.text("Checking.")])
    conv.subagent("train", Reply.text("The 8:12 is on time."))
    model_server.responder = conv
    fake_telegram.user_says("Check my train in the background")
    messages = await fake_telegram.wait_for_messages(ALICE, 2)
    assert messages == ["Checking.", "Relayed: train"]
    # The report turn ran as the chat (its context names the Telegram chat).
    report_request = json.dumps(conv.of("main")[-1]["messages"][-1])
    assert "telegram" in report_request and "The 8:12 is on time." in report_request


async def test_stop_in_a_telegram_chat_stops_its_subagents(
    telegram_daemon: Daemon, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Watch prices", "prices")), Reply.text("Watching.")])
    conv.subagent("prices", Reply.hang(30))
    model_server.responder = conv
    fake_telegram.user_says("Watch the prices for me")
    assert await fake_telegram.wait_for_messages(ALICE, 1) == ["Watching."]
    manager = telegram_daemon.context.subagents
    (running,) = await manager.list(active_only=True)
    fake_telegram.user_says("/stop")
    assert await fake_telegram.wait_for_messages(ALICE, 2) == ["Watching.", "Stopped."]
    await fake_telegram.wait_until(lambda: not manager.stop_children(running.parent_session))
    record = await _ended(manager, running.id)
    assert record is not None and record.status == "cancelled"
    assert await asyncio.to_thread(model_server.wait_abandoned, 1)


async def test_a_jobs_subagent_reports_to_the_jobs_target(
    telegram_daemon: Daemon, fake_telegram: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Read the news", "news")), Reply.text("Reading.")])
    conv.subagent("news", Reply.text("Nothing new today.", delay=0.3))
    model_server.responder = conv
    book = telegram_daemon.context.scheduler.service.book
    draft = JobDraft("News", "every", "1d", "Read the news", Delivery("telegram", str(ALICE)))
    job = await book.create(draft)
    run = await telegram_daemon.context.scheduler.service.run_now(job.id)
    assert run is not None and run.delivered
    # No chat shows the job's session: the report turn's answer goes to the job's target.
    assert await fake_telegram.wait_for_messages(ALICE, 2) == ["Reading.", "Relayed: news"]


async def test_three_parallel_subagents_report_as_each_finishes(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    calls = [spawn(f"Task {label}", label) for label in ("slow", "fast", "middle")]
    conv.main.extend([Reply.tool_calls(*calls), Reply.text("Three helpers started.")])
    conv.subagent("slow", Reply.text("slow done", delay=0.6))
    conv.subagent("fast", Reply.text("fast done", delay=0.05))
    conv.subagent("middle", Reply.text("middle done", delay=0.3))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "Do three things")
        await _until(client, lambda c: len(_dones(c)) == 4, "four answers")
        assert _dones(client) == [
            "Three helpers started.",
            "Relayed: fast",
            "Relayed: middle",
            "Relayed: slow",
        ]
        # All three ran at once: each started before any ended.
        updates = [(f["label"], f["status"]) for f in _updates(client)]
        first_end = min(updates.index((label, "done")) for label in ("slow", "fast", "middle"))
        assert all(updates.index((label, "running")) < first_end for label in ("slow", "fast"))
        assert updates.index(("middle", "running")) < first_end
        await client.close()


async def test_the_parent_cancels_a_subagent(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Count the stars", "stars")), Reply.text("Started.")])
    conv.subagent("stars", Reply.hang(30))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "Count the stars")
        await _until(client, lambda c: _updates(c, "running") and _dones(c), "a running subagent")
        subagent_id = _updates(client)[0]["id"]
        listing = ("subagents", json.dumps({"action": "list"}))
        status = ("subagents", json.dumps({"action": "status", "id": subagent_id}))
        cancel = ("subagents", json.dumps({"action": "cancel", "id": subagent_id}))
        conv.main.extend([Reply.tool_calls(listing, status, cancel), Reply.text("Stopped it.")])
        await client.send({"type": "message", "session_id": "s1", "content": "Never mind"})
        await _until(client, lambda c: "Relayed: stars" in _dones(c), "the cancelled report")
        assert _dones(client) == ["Started.", "Stopped it.", "Relayed: stars"]
        results = [f["result"] for f in client.of("tool_result") if f["name"] == "subagents"]
        assert results[0] == f"Subagents:\n- {subagent_id} [running] stars: Count the stars"
        assert results[1] == f"- {subagent_id} [running] stars: Count the stars"
        assert results[2] == f"Cancelling subagent {subagent_id}; its report will follow."
        assert _updates(client)[-1]["status"] == "cancelled"
        report = client.of("user_message")[-1]["content"]
        assert report.startswith("Subagent report: stars") and "was cancelled" in report
        assert await asyncio.to_thread(model_server.wait_abandoned, 1)
        await client.close()


async def test_a_subagent_that_runs_too_long_is_stopped(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Think forever", "forever")), Reply.text("Ok.")])
    conv.subagent("forever", Reply.hang(30))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server, timeout=0.5) as daemon:
        client = await _chat(daemon, "Think forever")
        await _until(client, lambda c: "Relayed: forever" in _dones(c), "the timeout report")
        assert _updates(client)[-1]["status"] == "timeout"
        assert "ran out of time" in client.of("user_message")[-1]["content"]
        await client.close()


async def test_a_restart_mid_subagent_tells_the_parent(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Index the disk", "index")), Reply.text("Indexing.")])
    conv.subagent("index", Reply.hang(30))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "Index my disk")
        await _until(client, lambda c: _updates(c, "running") and _dones(c), "a running subagent")
        subagent_id = _updates(client)[0]["id"]
        await client.close()
    async with subagent_daemon(tmp_path, model_server) as daemon:
        async with daemon.http() as http:
            for _ in range(200):
                page = (await http.get("/api/sessions/s1/messages")).json()["messages"]
                if page and page[-1].get("text") == "Relayed: index":
                    break
                await asyncio.sleep(0.05)
            (record,) = (await http.get("/api/subagents")).json()["subagents"]
        assert page[-1].get("text") == "Relayed: index"
        report = page[-2]["content"]
        assert f"Subagent report: index ({subagent_id}) was interrupted." in report
        assert record["status"] == "interrupted"


async def test_a_subagent_cannot_spawn_past_the_depth_limit(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Plan it", "outer")), Reply.text("Planning.")])
    conv.subagent(
        "outer",
        Reply.tool_calls(spawn("Sub-plan", "inner")),
        Reply.text("I planned it myself."),
    )
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "Plan my week")
        await _until(client, lambda c: "Relayed: outer" in _dones(c), "the outer report")
        assert "spawn" in conv.tool_names("main")
        assert "spawn" not in conv.tool_names("outer")
        refused = conv.of("outer")[-1]["messages"][-1]
        assert refused["role"] == "tool" and "unknown tool 'spawn'" in refused["content"]
        assert conv.of("inner") == []
        async with daemon.http() as http:
            assert len((await http.get("/api/subagents")).json()["subagents"]) == 1
        await client.close()


async def test_depth_two_lets_one_level_spawn_and_stops_the_next(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Plan it", "outer")), Reply.text("Planning.")])
    conv.subagent("outer", Reply.tool_calls(spawn("Sub-plan", "inner")), Reply.text("Delegated."))
    conv.subagent("inner", Reply.text("inner result", delay=0.5))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server, max_depth=2) as daemon:
        client = await _chat(daemon, "Plan my week")
        both = {"Relayed: outer", "Relayed: inner"}
        await _until(client, lambda c: both <= set(_dones(c)), "both reports")
        assert "spawn" in conv.tool_names("outer")
        assert "spawn" not in conv.tool_names("inner")
        # The outer subagent ended before the inner one: the inner report went up to the chat.
        assert _dones(client) == ["Planning.", "Relayed: outer", "Relayed: inner"]
        await client.close()


async def test_only_max_concurrent_subagents_run_and_the_rest_queue(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    calls = [spawn("First", "first"), spawn("Second", "second")]
    conv.main.extend([Reply.tool_calls(*calls), Reply.text("Two started.")])
    conv.subagent("first", Reply.text("first done", delay=0.3))
    conv.subagent("second", Reply.text("second done"))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server, max_concurrent=1) as daemon:
        client = await _chat(daemon, "Two things")
        await _until(client, lambda c: len(_dones(c)) == 3, "both reports")
        updates = [(f["label"], f["status"]) for f in _updates(client)]
        assert ("second", "queued") in updates
        assert updates.index(("second", "running")) > updates.index(("first", "done"))
        assert _dones(client) == ["Two started.", "Relayed: first", "Relayed: second"]
        await client.close()


async def test_a_report_for_a_busy_parent_waits_for_its_turn_to_end(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    slow_answer = Reply.text("A long answer, slowly.", chunks=5, delay=0.2)
    conv.main.extend([Reply.tool_calls(spawn("Quick task", "quick")), slow_answer])
    conv.subagent("quick", Reply.text("quick result"))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "Work on this")
        await _until(client, lambda c: len(_dones(c)) == 2, "both turns")
        assert _dones(client) == ["A long answer, slowly.", "Relayed: quick"]
        kinds = [f["type"] for f in client.frames]
        report_at = next(i for i, f in enumerate(client.frames) if f["type"] == "user_message")
        # The report arrived while the first turn still streamed, and waited for its end.
        assert report_at < kinds.index("done")
        # The first turn's final request never saw the report; the report turn saw both.
        main = conv.of("main")
        assert "Subagent report" not in json.dumps(main[1]["messages"])
        assert "A long answer, slowly." in json.dumps(main[2]["messages"])
        await client.close()


async def test_stopping_the_chat_stops_its_subagents(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Dig", "dig")), Reply.text("Digging.")])
    conv.subagent("dig", Reply.hang(30))
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "Dig")
        await _until(client, lambda c: _updates(c, "running") and _dones(c), "a running subagent")
        await client.send({"type": "cancel", "session_id": "s1"})
        await _until(client, lambda c: _updates(c, "cancelled"), "the stopped subagent")
        async with daemon.http() as http:
            for _ in range(100):
                page = (await http.get("/api/sessions/s1/messages")).json()["messages"]
                if page[-1]["type"] == "note":
                    break
                await asyncio.sleep(0.05)
        assert page[-1]["type"] == "note" and "was stopped" in page[-1]["text"]
        # Stopped by the user: a note, not a new turn.
        await asyncio.sleep(0.3)
        assert _dones(client) == ["Digging."]
        await client.close()


async def test_every_subagent_tool_call_is_audited_with_its_parent(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("List files", "files")), Reply.text("Looking.")])
    conv.subagent(
        "files",
        Reply.tool_calls(("list_dir", json.dumps({"path": "."}))),
        Reply.text("Found some files."),
    )
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "List my files")
        await _until(client, lambda c: "Relayed: files" in _dones(c), "the report")
        subagent_id = _updates(client)[0]["id"]
        audit = daemon.settings.data_dir / "audit.jsonl"
        await daemon.context.runtime.audit.flush()
        records = [json.loads(line) for line in audit.read_text().splitlines()]
        (listing,) = [r for r in records if r["name"] == "list_dir"]
        assert listing["session_id"] == f"subagent:{subagent_id}"
        assert listing["parent"] == "s1"
        (spawned,) = [r for r in records if r["name"] == "spawn"]
        assert spawned["session_id"] == "s1" and "parent" not in spawned
        await client.close()


async def test_a_subagents_tool_that_needs_approval_is_denied(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend([Reply.tool_calls(spawn("Clean up", "cleanup")), Reply.text("Cleaning.")])
    conv.subagent(
        "cleanup",
        Reply.tool_calls(("exec", json.dumps({"command": "echo hi > marker.txt"}))),
        Reply.text("I could not run it."),
    )
    model_server.responder = conv

    def always_ask(settings: Any) -> None:
        settings.tools.exec.approval = "always"

    async with subagent_daemon(tmp_path, model_server, tune=always_ask) as daemon:
        client = await _chat(daemon, "Clean up my workspace")
        await _until(client, lambda c: "Relayed: cleanup" in _dones(c), "the report")
        # Nobody attends a subagent: the question is not asked anywhere, the call is denied.
        denied = conv.of("cleanup")[-1]["messages"][-1]
        assert denied["role"] == "tool" and "nobody can give it here" in denied["content"]
        assert not (daemon.settings.workspace / "marker.txt").exists()
        assert not client.of("approval_request")
        await client.close()


async def test_a_subagent_may_be_limited_to_some_tools(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    conv = Conversations()
    conv.main.extend(
        [
            Reply.tool_calls(spawn("Read", "reader", tools=["read_file"])),
            Reply.tool_calls(spawn("Talk", "talker", tools=["message"])),
            Reply.text("Done."),
        ]
    )
    model_server.responder = conv
    async with subagent_daemon(tmp_path, model_server) as daemon:
        client = await _chat(daemon, "Read something")
        await _until(client, lambda c: "Relayed: reader" in _dones(c), "the report")
        assert conv.tool_names("reader") == {"read_file"}
        refusal = conv.of("main")[2]["messages"][-1]
        assert "a subagent cannot use message" in refusal["content"]
        await client.close()


async def test_max_depth_zero_offers_no_spawn_tool(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = load_settings(write_config(tmp_path, model_server))
    assert settings.subagents.max_depth == 1 and settings.subagents.max_concurrent == 3
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            # The tools come with the turn machinery, built at the first turn (or this call).
            assert (await running.context.runtime.turn_parts()).tools.get("spawn") is not None
    settings.subagents.max_depth = 0
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            assert (await running.context.runtime.turn_parts()).tools.get("spawn") is None
