"""Approvals through the real gateway: the scripted model calls the real exec tool with
`tools.exec.approval: always`; a watcher plays the surface that shows the question and answers."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from countbot.config.settings import Settings
from countbot.gateway.gateway import Gateway, OneLoop
from countbot.gateway.messages import InboundMessage
from countbot.runtime.assembly import Runtime, open_runtime
from tests.gateway.test_gateway import Tab
from tests.support.scripted_model import Reply, ScriptedModelServer

COMMAND = "echo approved > proof.txt"


def exec_call(command: str = COMMAND) -> Reply:
    return Reply.tool_calls(("exec", json.dumps({"command": command})))


def ask_mode(settings: Settings, timeout: float = 30.0) -> Settings:
    settings.tools.exec.approval = "always"
    settings.tools.exec.approval_timeout = timeout
    return settings


@contextlib.asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[tuple[Runtime, Gateway]]:
    """A runtime and a gateway as the daemon wires them."""
    runtime = await open_runtime(settings)
    gateway = Gateway(
        OneLoop(runtime.agent), runtime.sessions, settings.gateway, approvals=runtime.approvals
    )
    try:
        yield runtime, gateway
    finally:
        await gateway.close(5)
        await runtime.close()


@pytest.fixture
async def asking(settings: Settings) -> AsyncIterator[tuple[Runtime, Gateway]]:
    async with running(ask_mode(settings)) as parts:
        yield parts


def message(text: str = "make the proof", *, unattended: bool = False) -> InboundMessage:
    return InboundMessage("web", text, session_id="s1", unattended=unattended)


def tool_result(server: ScriptedModelServer) -> str:
    """What the model was told the exec call returned (the last tool message it received)."""
    messages = server.requests[-1]["messages"]
    return next(m["content"] for m in reversed(messages) if m["role"] == "tool")


async def start_turn(
    gateway: Gateway, server: ScriptedModelServer, *then: Reply, unattended: bool = False
) -> Tab:
    """The model calls exec, then gives `then`; returns a watcher of the session."""
    server.script(exec_call(), *then)
    tab = Tab(gateway, "s1")
    await gateway.submit(message(unattended=unattended))
    return tab


async def approval_records(runtime: Runtime) -> list[dict[str, Any]]:
    return await runtime.audit.recent(type="approval")


async def test_approve_once_runs_the_command_and_audits_who_answered(
    asking: tuple[Runtime, Gateway], settings: Settings, model_server: ScriptedModelServer
) -> None:
    runtime, gateway = asking
    tab = await start_turn(gateway, model_server, Reply.text("done"))
    asked = await tab.until_type("approval_request")
    assert asked["summary"] == COMMAND and asked["tool"] == "exec"
    assert "always" in asked["reason"] and asked["timeout"] == 30.0
    assert [p.asked.id for p in runtime.approvals.pending("s1")] == [asked["id"]]

    assert runtime.approvals.answer(asked["id"], "once", "web")
    settled = await tab.until_type("approval_settled")
    assert (settled["id"], settled["decision"], settled["outcome"], settled["by"]) == (
        asked["id"],
        "once",
        "answered",
        "web",
    )
    await tab.until_type("done")
    assert (settings.workspace / "proof.txt").read_text() == "approved\n"
    assert tool_result(model_server).startswith("exit code 0")
    assert not runtime.approvals.answer(asked["id"], "deny", "web"), "already settled"
    [record] = await approval_records(runtime)
    assert record["decision"] == "once" and record["answered_by"] == "web"
    assert record["channel"] == "web" and record["session_id"] == "s1"
    assert record["summary"] == COMMAND and record["waited_ms"] > 0


async def test_deny_keeps_the_command_from_running(
    asking: tuple[Runtime, Gateway], settings: Settings, model_server: ScriptedModelServer
) -> None:
    runtime, gateway = asking
    tab = await start_turn(gateway, model_server, Reply.text("ok, I won't"))
    asked = await tab.until_type("approval_request")
    runtime.approvals.answer(asked["id"], "deny", "web")
    await tab.until_type("done")
    assert not (settings.workspace / "proof.txt").exists()
    assert tool_result(model_server).startswith("Error: not run: this command needs the user's")
    [call] = await runtime.tool_calls.query(session_id="s1")
    assert call["status"] == "error" and "not run" in call["result"]


async def test_no_answer_in_time_is_a_deny(
    settings: Settings, model_server: ScriptedModelServer
) -> None:
    async with running(ask_mode(settings, timeout=0.3)) as (runtime, gateway):
        tab = await start_turn(gateway, model_server, Reply.text("nobody answered"))
        settled = await tab.until_type("approval_settled")
        assert (settled["decision"], settled["outcome"]) == ("deny", "timeout")
        await tab.until_type("done")
        assert not (settings.workspace / "proof.txt").exists()
        [record] = await approval_records(runtime)
        assert record["outcome"] == "timeout" and record["waited_ms"] >= 300


async def test_cancelling_the_turn_settles_the_open_question_as_deny(
    asking: tuple[Runtime, Gateway], settings: Settings, model_server: ScriptedModelServer
) -> None:
    runtime, gateway = asking
    tab = await start_turn(gateway, model_server)
    await tab.until_type("approval_request")
    assert gateway.cancel("s1")
    settled = await tab.until_type("approval_settled")
    assert (settled["decision"], settled["outcome"]) == ("deny", "cancelled")
    await tab.until_type("cancelled")
    assert runtime.approvals.pending() == []
    assert not (settings.workspace / "proof.txt").exists()


async def test_unattended_turns_are_denied_without_asking(
    asking: tuple[Runtime, Gateway], settings: Settings, model_server: ScriptedModelServer
) -> None:
    runtime, gateway = asking
    tab = await start_turn(gateway, model_server, Reply.text("could not"), unattended=True)
    await tab.until_type("done")
    assert "approval_request" not in tab.types()
    [settled] = [f for f in tab.frames if f["type"] == "approval_settled"]
    assert (settled["decision"], settled["outcome"]) == ("deny", "unattended")
    assert "nobody can answer in this turn" in tool_result(model_server)
    assert not (settings.workspace / "proof.txt").exists()
    [record] = await approval_records(runtime)
    assert record["outcome"] == "unattended"


async def test_always_allow_is_remembered_across_a_restart_until_revoked(
    settings: Settings, model_server: ScriptedModelServer
) -> None:
    ask_mode(settings)
    for attempt in range(2):  # each attempt is a fresh runtime on the same data folder
        async with running(settings) as (runtime, gateway):
            (settings.workspace / "proof.txt").unlink(missing_ok=True)
            tab = await start_turn(gateway, model_server, Reply.text("done"))
            if attempt == 0:
                asked = await tab.until_type("approval_request")
                runtime.approvals.answer(asked["id"], "always", "web")
            await tab.until_type("done")
            assert (settings.workspace / "proof.txt").exists()
            audit = [r["outcome"] for r in await runtime.audit.recent(type="approval")]
            rules = await runtime.approvals.rules.list()
    assert "approval_request" not in tab.types(), "remembered after a restart"
    assert [(r["tool"], r["key"], r["allowed_by"]) for r in rules] == [("exec", COMMAND, "web")]
    assert audit == ["remembered", "answered"]


async def test_a_revoked_rule_asks_again(
    asking: tuple[Runtime, Gateway], model_server: ScriptedModelServer
) -> None:
    runtime, gateway = asking
    await runtime.approvals.rules.allow("main", "exec", COMMAND, summary=COMMAND, allowed_by="web")
    await runtime.approvals.rules.revoke("main", "exec", COMMAND)
    tab = await start_turn(gateway, model_server, Reply.text("done"))
    asked = await tab.until_type("approval_request")
    runtime.approvals.answer(asked["id"], "deny", "web")
    await asyncio.wait_for(tab.until_type("done"), 20)
