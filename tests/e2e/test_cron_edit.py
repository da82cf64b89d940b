"""A scheduled job is edited from the browser: the form opens filled in, a save changes it."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import CHROMIUM
from tests.e2e.ui import ChatPage

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing; tests/run.sh installs Debian's chromium"
)


async def test_a_job_is_edited_in_place(chat: ChatPage) -> None:
    await chat.page.goto(f"{chat.daemon.base}/#/cron")
    await chat.by_testid("cron-name").fill("Tea")
    await chat.by_testid("cron-kind").select_option("every")
    await chat.by_testid("cron-value").fill("2h")
    await chat.by_testid("cron-prompt").fill("Remind me of tea")
    await chat.by_testid("cron-create").click()
    item = chat.by_testid("cron-item")
    await expect(item).to_contain_text("Remind me of tea")
    added = chat.by_testid("cron-form").get_by_test_id("cron-status")
    await expect(added).to_have_text("Job added.")

    await item.get_by_test_id("cron-edit").click()
    form = chat.by_testid("cron-edit-form")
    await expect(form.get_by_test_id("cron-name")).to_have_value("Tea")
    await expect(form.get_by_test_id("cron-kind")).to_have_value("every")
    await expect(form.get_by_test_id("cron-value")).to_have_value("2h")  # not 7200 (seconds)
    await form.get_by_test_id("cron-value").fill("30m")
    await form.get_by_test_id("cron-prompt").fill("Remind me of green tea")
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await chat.screenshot("cron_edit_zh")
    await chat.by_testid("lang-switch").select_option("en")
    await form.get_by_test_id("cron-save").click()
    await expect(item).to_contain_text("Remind me of green tea")
    await expect(chat.by_testid("cron-edit-form")).to_have_count(0)
    await expect(added).to_have_text("")  # about the job added before, not this save
    await chat.screenshot("cron_edited")
    async with chat.daemon.http() as http:
        (job,) = (await http.get("/api/cron/jobs")).json()["jobs"]
    assert job["prompt"] == "Remind me of green tea"
    assert job["schedule"]["kind"] == "every" and job["schedule"]["value"] == "1800"  # seconds


async def test_a_schedule_the_daemon_refuses_is_explained_in_the_pages_language(
    chat: ChatPage,
) -> None:
    await chat.by_testid("lang-switch").select_option("zh-CN")
    await chat.page.goto(f"{chat.daemon.base}/#/cron")
    await chat.by_testid("cron-name").fill("早安")
    await chat.by_testid("cron-value").fill("每天早上")
    await chat.by_testid("cron-prompt").fill("提醒我喝水")
    await chat.by_testid("cron-create").click()
    status = chat.by_testid("cron-form").get_by_test_id("cron-status")
    await expect(status).to_contain_text("Cron 表达式“每天早上”需要五个字段")
    await expect(status).not_to_contain_text("needs five fields")
    async with chat.daemon.http() as http:
        job = {"name": "x", "prompt": "y", "schedule": {"kind": "every", "value": "5s"}}
        refused = (await http.post("/api/cron/jobs", json=job)).json()
    assert refused["code"] == "cron.shortest" and refused["args"] == {"seconds": 60}
    assert refused["error"] == "the shortest interval is 60 seconds"
