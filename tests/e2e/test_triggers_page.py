"""The Triggers page in the browser: a webhook's event with its answer, and "run again"."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import yaml
from playwright.async_api import expect

from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.e2e.ui import ChatPage
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.triggers.conftest import (
    ISSUE,
    body_of,
    github_headers,
    hooks_config,
    standard_headers,
)
from tests.web.conftest import Daemon, write_config


@pytest.fixture
async def daemon(tmp_path: Path, model_server: ScriptedModelServer) -> AsyncIterator[Daemon]:
    """The page's daemon, with the tests' webhooks (no Telegram: `issues` answers stay owed)."""
    path = write_config(tmp_path, model_server)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["triggers"] = hooks_config()
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    settings = load_settings(path)
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            yield Daemon(running.port, running.context, settings)


async def test_the_triggers_page_shows_events_runs_one_again_and_adds_a_webhook(
    chat: ChatPage, daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    """One page visit (a daemon and a browser are the cost): the event list, "run again", and a
    new webhook whose secret is shown once and works at once."""
    model_server.script(
        Reply.text("Someone opened issue 7."), Reply.text("Issue 7, again."), Reply.text("A form.")
    )
    body = body_of(ISSUE)
    async with httpx.AsyncClient(base_url=daemon.base, trust_env=False) as http:
        sent = await http.post("/hooks/github", content=body, headers=github_headers(body))
    assert sent.status_code == 202
    await chat.by_testid("nav-triggers").click()
    await expect(chat.by_testid("trigger-item")).to_have_count(2)
    event = chat.by_testid("trigger-event").first
    await expect(event).to_have_attribute("data-status", "delivered", timeout=60_000)
    await event.locator("summary").click()
    await expect(event).to_contain_text("Someone opened issue 7.")
    await event.get_by_test_id("trigger-again").click()
    again = chat.by_testid("trigger-event").first
    await expect(chat.by_testid("trigger-event")).to_have_count(2)
    await expect(again).to_have_attribute("data-status", "delivered", timeout=60_000)
    await chat.screenshot("triggers_page_en")
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await expect(chat.by_testid("trigger-item").first).to_contain_text("Webhook")
    await chat.by_testid("lang-switch").select_option("en")

    await chat.by_testid("hook-name").fill("forms")
    await chat.by_testid("hook-prompt").fill("Summarize this form.")
    await chat.by_testid("hook-create").click()
    secret = await chat.by_testid("hook-secret").text_content()
    assert secret and secret.startswith("whsec_")
    await chat.screenshot("triggers_new_hook")
    form = body_of({"form": "contact"})
    async with httpx.AsyncClient(base_url=daemon.base, trust_env=False) as http:
        signed = standard_headers(form, secret=secret)
        assert (await http.post("/hooks/forms", content=form, headers=signed)).status_code == 202
        answers = [e["answer"] for e in (await http.get("/api/triggers/events")).json()["events"]]
    await chat.by_testid("hook-copied").click()
    await expect(chat.by_testid("hook-secret")).to_have_count(0)
    forms = chat.by_testid("trigger-item").filter(has_text="forms")
    await expect(forms).to_contain_text("Summarize this form.")
    await forms.get_by_test_id("trigger-switch").click()
    await expect(forms.get_by_test_id("trigger-switch")).to_have_text("Switch on")
    assert answers[1:] == ["Issue 7, again.", "Someone opened issue 7."]
