"""Approval cards in the real UI (headless Chromium): the scripted model calls the real exec tool
with `tools.exec.approval: always`, and a person clicks Approve, Always allow or Deny."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, expect

from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.e2e.conftest import WAIT_MS
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, write_config

COMMAND = "echo from-the-browser > proof.txt"
PHONE = {"width": 390, "height": 780}


@pytest.fixture
async def daemon(tmp_path: Path, model_server: ScriptedModelServer) -> AsyncIterator[Daemon]:
    """A daemon whose exec tool asks before every command."""
    settings = load_settings(write_config(tmp_path, model_server))
    settings.tools.exec.approval = "always"
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            yield Daemon(running.port, running.context, settings)


async def open_tab(browser: Browser, daemon: Daemon, **options: object) -> ChatPage:
    context = await browser.new_context(locale="en-US", **options)  # type: ignore[arg-type]
    context.set_default_timeout(WAIT_MS)
    tab = ChatPage(await context.new_page(), daemon)
    await tab.open()
    return tab


DESK = {"width": 1100, "height": 760}


async def ask_in_new_tab(
    browser: Browser, daemon: Daemon, server: ScriptedModelServer, answer: str, viewport: dict
) -> ChatPage:
    """A tab whose message makes the model call exec; returns once the question shows."""
    server.script(Reply.tool_calls(("exec", json.dumps({"command": COMMAND}))), Reply.text(answer))
    tab = await open_tab(browser, daemon, viewport=viewport)
    await tab.send("write the proof file")
    # The daemon's first turn also waits for litellm's import, slow on a busy machine.
    card = tab.by_testid("approval-card")
    await expect(card).to_have_attribute("data-state", "open", timeout=4 * WAIT_MS)
    return tab


async def expect_settled(tab: ChatPage, state: str, outcome: str) -> None:
    await expect(tab.by_testid("approval-card")).to_have_attribute("data-state", state)
    await expect(tab.by_testid("approval-outcome")).to_have_text(outcome)
    await expect(tab.by_testid("approval-once")).to_have_count(0)


async def test_approve_once_runs_the_command_and_every_tab_sees_the_decision(
    browser: Browser, daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    phone = await ask_in_new_tab(browser, daemon, model_server, "The file is written.", PHONE)
    card = phone.by_testid("approval-card")
    await expect(phone.by_testid("approval-summary")).to_have_text(COMMAND)
    await expect(card).to_contain_text("tools.exec.approval is 'always'")
    await expect(phone.by_testid("approval-countdown")).to_contain_text(
        "denied in 1:"
    )  # ~2 min left

    # A second tab on the same conversation shows the same question after opening it.
    desk = await open_tab(browser, daemon, viewport=DESK)
    await desk.by_testid("session-item").first.click()
    await expect(desk.by_testid("approval-card")).to_have_attribute(
        "data-state", "open", timeout=2 * WAIT_MS
    )

    buttons = [phone.by_testid(f"approval-{d}") for d in ("once", "always", "deny")]
    for button in buttons:  # on a phone every button fits the screen
        box = await button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    await phone.by_testid("approval-once").click()

    for tab in (phone, desk):
        await expect_settled(tab, "once", "Approved once by web.")
    await expect(phone.answer_text(phone.messages("assistant"))).to_have_text(
        "The file is written."
    )
    assert (daemon.settings.workspace / "proof.txt").read_text() == "from-the-browser\n"
    await phone.screenshot("approval_phone_answered")
    assert not phone.errors and not desk.errors


async def test_deny_keeps_the_command_from_running(
    browser: Browser, daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    tab = await ask_in_new_tab(browser, daemon, model_server, "Understood, I did not run it.", DESK)
    await tab.by_testid("approval-deny").click()
    await expect_settled(tab, "deny", "Denied by web.")
    await expect(tab.answer_text(tab.messages("assistant"))).to_have_text(
        "Understood, I did not run it."
    )
    assert not (daemon.settings.workspace / "proof.txt").exists()
    [call] = await daemon.context.runtime.tool_calls.query(name="exec")
    assert "not run" in call["result"]
    assert not tab.errors


async def test_a_reload_shows_the_open_question_again_and_always_allow_is_remembered(
    browser: Browser, daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    tab = await ask_in_new_tab(browser, daemon, model_server, "Written.", DESK)
    await tab.reload()
    await expect(tab.by_testid("approval-card")).to_have_attribute("data-state", "open")
    await tab.by_testid("approval-always").click()
    await expect(tab.by_testid("approval-card")).to_have_attribute("data-state", "always")
    await expect(tab.messages("assistant")).to_have_count(1)

    # The same command again: it runs without a question.
    (daemon.settings.workspace / "proof.txt").unlink()
    model_server.script(
        Reply.tool_calls(("exec", json.dumps({"command": COMMAND}))), Reply.text("Written again.")
    )
    await tab.send("once more")
    await expect(tab.answer_text(tab.messages("assistant").last)).to_have_text("Written again.")
    await expect(tab.by_testid("approval-card")).to_have_count(1)
    assert (daemon.settings.workspace / "proof.txt").exists()
    async with daemon.http() as http:
        listed = (await http.get("/api/approvals")).json()
    assert listed["pending"] == []
    assert [(r["tool"], r["key"]) for r in listed["allowed"]] == [("exec", COMMAND)]

    # The Audit page lists the rule; revoking it makes the command ask again.
    await tab.by_testid("nav-audit").click()
    rule = tab.by_testid("allowed-rule")
    await expect(rule).to_contain_text(f"exec: {COMMAND}")
    await rule.get_by_test_id("allowed-revoke").click()
    await expect(tab.by_testid("allowed-rule")).to_have_count(0)
    assert await daemon.context.runtime.approvals.rules.list() == []
    assert not tab.errors
