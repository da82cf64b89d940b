"""A scheduled job end to end: the real Telegram channel, polling the fake Bot API server."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from countbot.config.settings import Settings
from countbot.scheduler.assembly import Scheduler, start_scheduler
from countbot.scheduler.book import JobDraft
from countbot.scheduler.jobs import Delivery
from tests.channels.fake_telegram import FakeTelegram
from tests.channels.harness import ALICE, Bot, running_bot, use_fake_telegram
from tests.scheduler.conftest import FakeClock, jobs_on
from tests.support.scripted_model import Reply, ScriptedModelServer


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    server = FakeTelegram()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def bot(settings: Settings, fake: FakeTelegram) -> AsyncIterator[Bot]:
    use_fake_telegram(settings, fake)
    async with running_bot(settings, fake) as running:
        yield running


@pytest.fixture
async def scheduler(bot: Bot, clock: FakeClock) -> AsyncIterator[Scheduler]:
    started = await start_scheduler(jobs_on(bot.runtime, clock), bot.gateway, paused=True)
    yield started
    await started.stop()


async def test_a_due_job_arrives_in_the_telegram_chat(
    scheduler: Scheduler,
    fake: FakeTelegram,
    clock: FakeClock,
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.text("Good morning! The 8:12 train is on time."))
    draft = JobDraft(
        "Train", "cron", "0 8 * * 1-5", "Check the train", Delivery("telegram", str(ALICE))
    )
    job = await scheduler.service.book.create(draft)
    clock.now = datetime(2026, 3, 27, 7, 0, 1, tzinfo=UTC)  # Friday 08:00:01 in Berlin
    (run,) = await scheduler.service.run_due()
    assert run.status == "ok" and run.delivered
    assert await fake.wait_for_messages(ALICE) == ["Good morning! The 8:12 train is on time."]
    (stored,) = await scheduler.service.book.runs(job.id)
    assert stored.delivered


async def test_a_refused_send_is_not_called_delivered(
    scheduler: Scheduler, fake: FakeTelegram, model_server: ScriptedModelServer
) -> None:
    fake.refuse("sendMessage", status=403, description="Forbidden: bot was blocked by the user")
    draft = JobDraft("Train", "every", "1d", "Check the train", Delivery("telegram", str(ALICE)))
    job = await scheduler.service.book.create(draft)
    run = await scheduler.service.run_now(job.id)
    assert run is not None and run.status == "ok" and not run.delivered
    assert "blocked" in run.delivery_detail
    assert fake.chat_messages(ALICE) == []


async def test_a_spent_budget_reaches_the_chat_and_a_jobs_delivery_without_a_model_call(
    scheduler: Scheduler,
    bot: Bot,
    fake: FakeTelegram,
    model_server: ScriptedModelServer,
) -> None:
    bot.runtime.settings.budget.daily_tokens = 6_000
    reply = dataclasses.replace(Reply.text("fine"), usage=(5_000, 0))
    model_server.responder = lambda body: reply
    fake.user_says("hello")
    assert await fake.wait_for_messages(ALICE) == ["fine"]
    fake.user_says("and again")
    (_, notice) = await fake.wait_for_messages(ALICE, count=2)
    assert notice.startswith("Budget reached") and "budget.daily_tokens" in notice
    draft = JobDraft("Train", "every", "1d", "Check the train", Delivery("telegram", str(ALICE)))
    job = await scheduler.service.book.create(draft)
    run = await scheduler.service.run_now(job.id)
    assert run is not None and run.delivered and run.output.startswith("Budget reached")
    messages = await fake.wait_for_messages(ALICE, count=3)
    assert messages[2].startswith("Budget reached")
    assert len(model_server.requests) == 1
