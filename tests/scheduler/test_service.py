"""The scheduler service on a real runtime: due runs, delivery, restarts, misses and failures.

Time is a clock the test sets; turns go through the real gateway and AgentLoop to the scripted
model server, deliveries to a recording channel sender.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import Settings
from countbot.gateway.events import SessionEvent
from countbot.gateway.gateway import Gateway, OneLoop
from countbot.gateway.watchers import Watcher
from countbot.runtime.assembly import Runtime, open_runtime
from countbot.scheduler.assembly import Scheduler, start_scheduler
from countbot.scheduler.book import JobBook, JobDraft, JobPatch
from countbot.scheduler.jobs import WEB, Delivery, Job
from countbot.scheduler.triggers import zone_name
from countbot.store.database import Database
from countbot.store.jobs import JobStore
from tests.scheduler.conftest import ZONE, FakeClock, RecordingSender, jobs_on
from tests.support.scripted_model import Reply, ScriptedModelServer

PIGEON_42 = Delivery("pigeon", "42")


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


async def add_job(
    scheduler: Scheduler,
    kind: str = "cron",
    value: str = "0 8 * * 1-5",
    delivery: Delivery = PIGEON_42,
    prompt: str = "Check the train and tell me if it is late",
) -> Job:
    draft = JobDraft("Train", kind, value, prompt, delivery)
    return await scheduler.service.book.create(draft)


def sent_text(request: dict) -> str:
    return json.dumps(request["messages"], ensure_ascii=False)


async def test_a_due_job_runs_through_the_agent_and_reaches_its_chat(
    scheduler: Scheduler,
    clock: FakeClock,
    pigeon: RecordingSender,
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.text("The 8:12 is on time."))
    job = await add_job(scheduler)
    service = scheduler.service
    assert await service.run_due() == []  # 07:00 in Berlin: not yet
    clock.now = utc(2026, 3, 27, 7, 0, 2)  # Friday 08:00:02 CET
    runs = await service.run_due()
    assert [(r.status, r.delivered, r.output) for r in runs] == [
        ("ok", True, "The 8:12 is on time.")
    ]
    assert pigeon.sent == [("42", "The 8:12 is on time.")]
    assert await service.run_due() == []  # handled: not run twice
    # The same turn a chat gets: system prompt first, the job's prompt as the user message.
    (request,) = model_server.requests
    assert request["messages"][0]["role"] == "system"
    assert "Check the train" in sent_text(request)
    (history,) = await service.book.runs(job.id)
    assert (history.status, history.delivered, history.scheduled_for) == (
        "ok",
        True,
        utc(2026, 3, 27, 7).timestamp(),
    )


async def test_a_job_turn_knows_it_is_unattended(
    scheduler: Scheduler, model_server: ScriptedModelServer, pigeon: RecordingSender
) -> None:
    job = await add_job(scheduler)
    await scheduler.service.run_now(job.id)
    assert "Scheduled run" in sent_text(model_server.requests[0])


async def test_next_weekday_run_follows_the_dst_change(
    scheduler: Scheduler, clock: FakeClock, pigeon: RecordingSender
) -> None:
    job = await add_job(scheduler)
    clock.now = utc(2026, 3, 27, 7, 30)
    await scheduler.service.run_due()
    # Saturday and Sunday are skipped; Monday 8:00 is now CEST, 06:00 UTC.
    assert scheduler.service.book.next_run(job) == utc(2026, 3, 30, 6)
    clock.now = utc(2026, 3, 30, 6, 0, 1)
    runs = await scheduler.service.run_due()
    assert [r.scheduled_for for r in runs] == [utc(2026, 3, 30, 6).timestamp()]


async def test_web_delivery_is_the_jobs_session_streamed_to_its_watchers(
    scheduler: Scheduler, runtime: Runtime, gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Weekly report: all green."))
    job = await add_job(scheduler, delivery=Delivery(WEB))
    tab = Watcher()
    gateway.hub.subscribe(job.session, tab)
    run = await scheduler.service.run_now(job.id)
    assert run is not None and run.delivered and job.session in run.delivery_detail
    frames = []
    while not tab.queue.empty():
        item = tab.queue.get_nowait()
        assert isinstance(item, SessionEvent)
        frames.append(item.to_frame(tab))
    assert frames[-1]["type"] == "done" and frames[-1]["content"] == "Weekly report: all green."
    records = await runtime.sessions.messages(job.session)
    assert [r["type"] for r in records] == ["user", "assistant"]
    assert records[-1]["text"] == "Weekly report: all green."


async def test_a_reminder_asked_for_in_a_web_chat_arrives_in_that_chat(
    scheduler: Scheduler, runtime: Runtime, gateway: Gateway, model_server: ScriptedModelServer
) -> None:
    args = {"action": "create", "name": "Tea", "every": "1h", "prompt": "Remind me of tea"}
    model_server.script(
        Reply.tool_calls(("cron", json.dumps(args))),
        Reply.text("I will remind you."),
        Reply.text("Time for tea."),
    )
    await runtime.agent.process_direct(
        TurnRequest("remind me of tea hourly", "web-chat", channel="web")
    )
    (job,) = await scheduler.service.book.jobs()
    tab = Watcher()
    gateway.hub.subscribe("web-chat", tab)
    run = await scheduler.service.run_now(job.id)
    assert run is not None and run.delivered
    done = [i for i in _drain(tab) if i.event.type == "done"]
    assert [d.event.content for d in done] == ["Time for tea."]  # type: ignore[union-attr]
    records = await runtime.sessions.messages("web-chat")
    assert [r.get("text") for r in records if r["type"] == "assistant"][-1] == "Time for tea."


def _drain(watcher: Watcher) -> list[SessionEvent]:
    items = []
    while not watcher.queue.empty():
        item = watcher.queue.get_nowait()
        assert isinstance(item, SessionEvent)
        items.append(item)
    return items


async def test_nothing_is_called_delivered_that_did_not_arrive(
    scheduler: Scheduler, pigeon: RecordingSender, model_server: ScriptedModelServer
) -> None:
    pigeon.refusal = "Forbidden: bot was blocked by the user"
    refused = await add_job(scheduler)
    run = await scheduler.service.run_now(refused.id)
    assert run is not None and run.status == "ok" and not run.delivered
    assert "blocked" in run.delivery_detail
    nowhere = await add_job(scheduler, delivery=Delivery("telegram", "42"))
    run = await scheduler.service.run_now(nowhere.id)
    assert run is not None and not run.delivered and "not running" in run.delivery_detail
    (stored,) = await scheduler.service.book.runs(nowhere.id)
    assert not stored.delivered and stored.output == "ok"


async def test_two_failures_in_a_row_notify_the_target_once(
    scheduler: Scheduler, pigeon: RecordingSender, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.error(400, "the model refused")
    job = await add_job(scheduler)
    service = scheduler.service
    statuses = [(await service.run_now(job.id)).status for _ in range(3)]  # type: ignore[union-attr]
    assert statuses == ["error", "error", "error"]
    assert len(pigeon.sent) == 1
    chat, notice = pigeon.sent[0]
    assert chat == "42" and "Train" in notice and "2 times in a row" in notice
    # A success resets the count: two more failures notify again, once.
    model_server.responder = None
    assert (await service.run_now(job.id)).status == "ok"  # type: ignore[union-attr]
    model_server.responder = lambda body: Reply.error(400, "the model refused")
    for _ in range(2):
        await service.run_now(job.id)
    assert len(pigeon.sent) == 3  # notice, the success's answer, the second notice


async def test_a_job_past_its_time_limit_is_stopped(
    runtime: Runtime, gateway: Gateway, clock: FakeClock, model_server: ScriptedModelServer
) -> None:
    runtime.settings.scheduler.job_timeout = 0.5
    scheduler = await start_scheduler(jobs_on(runtime, clock), gateway, paused=True)
    try:
        model_server.script(Reply.text("too late", chunks=5, delay=1.0))
        job = await add_job(scheduler, delivery=Delivery(WEB))
        run = await scheduler.service.run_now(job.id)
        assert run is not None and run.status == "timeout" and not run.delivered
        assert "0.5 s" in run.error
    finally:
        await scheduler.stop()


async def test_one_shot_job_is_removed_after_it_ran_and_disabled_if_it_failed(
    scheduler: Scheduler,
    clock: FakeClock,
    pigeon: RecordingSender,
    model_server: ScriptedModelServer,
) -> None:
    book = scheduler.service.book
    model_server.responder = lambda body: (
        Reply.text("Time to call mum.") if "mum" in sent_text(body) else Reply.error(400, "nope")
    )
    once = await add_job(scheduler, kind="at", value="2026-03-27T12:00", prompt="Remind me: mum")
    failing = await add_job(scheduler, kind="at", value="2026-03-27T12:00", prompt="Fail")
    clock.now = utc(2026, 3, 27, 11, 1)  # 12:01 in Berlin
    runs = await scheduler.service.run_due()
    assert sorted(r.status for r in runs) == ["error", "ok"]
    assert ("42", "Time to call mum.") in pigeon.sent
    assert await book.get(once.id) is None
    kept = await book.get(failing.id)
    assert kept is not None and not kept.enabled


async def test_disabled_jobs_do_not_run_and_enabling_does_not_replay(
    scheduler: Scheduler, clock: FakeClock, model_server: ScriptedModelServer
) -> None:
    book = scheduler.service.book
    job = await add_job(scheduler, kind="every", value="1h", delivery=Delivery(WEB))
    await book.set_enabled(job.id, False)
    assert scheduler.service.next_ring(job.id) is None
    clock.advance(hours=5)
    assert await scheduler.service.run_due() == []
    await book.set_enabled(job.id, True)
    assert scheduler.service.next_ring(job.id) is not None
    assert await scheduler.service.run_due() == []
    assert model_server.requests == []


async def test_changes_reach_the_timer_at_once(scheduler: Scheduler) -> None:
    service = scheduler.service
    job = await add_job(scheduler)
    assert service.next_ring(job.id) is not None
    await service.book.update(
        job.id, JobPatch(schedule_kind="at", schedule_value="2027-01-01T10:00")
    )
    assert service.next_ring(job.id) == utc(2027, 1, 1, 9).timestamp()
    await service.book.remove(job.id)
    assert service.next_ring(job.id) is None


async def test_a_job_added_by_another_process_is_picked_up(
    scheduler: Scheduler, settings: Settings
) -> None:
    other = await Database.open(settings.data_dir / "countbot.db")
    try:
        book = JobBook(JobStore(other), ZONE)
        job = await book.create(JobDraft("From the CLI", "every", "2h", "Stretch", Delivery(WEB)))
    finally:
        await other.close()
    assert scheduler.service.next_ring(job.id) is None
    await scheduler.service.watch_store()
    assert scheduler.service.next_ring(job.id) is not None


async def restart(settings: Settings, clock: FakeClock) -> tuple[Runtime, Gateway, Scheduler]:
    runtime = await open_runtime(settings)
    gateway = Gateway(
        OneLoop(runtime.agent), runtime.sessions, settings.gateway, approvals=runtime.approvals
    )
    scheduler = await start_scheduler(jobs_on(runtime, clock), gateway, paused=True)
    return runtime, gateway, scheduler


async def shut_down(runtime: Runtime, gateway: Gateway, scheduler: Scheduler) -> None:
    await scheduler.stop()
    await gateway.close(grace=5)
    await runtime.close()


@pytest.mark.parametrize(
    ("down_until", "ran", "missed"),
    [
        (utc(2026, 3, 27, 9, 2), 1, "2 runs were missed"),  # 10:00 is 2 min late: runs once
        (utc(2026, 3, 27, 9, 30), 0, "3 runs were missed"),  # all too old: none replayed
    ],
)
async def test_after_downtime_a_recent_miss_runs_once_and_older_ones_are_recorded(
    settings: Settings,
    clock: FakeClock,
    model_server: ScriptedModelServer,
    down_until: datetime,
    ran: int,
    missed: str,
) -> None:
    first = await restart(settings, clock)
    job = await add_job(first[2], value="0 * * * *", delivery=Delivery(WEB))
    await shut_down(*first)

    clock.now = down_until  # hourly fires at 07:00, 08:00 and 09:00 UTC came and went
    runtime, gateway, scheduler = await restart(settings, clock)
    try:
        await scheduler.service.idle()  # the catch-up that start() began
        runs = await scheduler.service.book.runs(job.id)
        assert [r.status for r in runs] == ["ok"] * ran + ["missed"]
        assert missed in runs[-1].error
        assert len(model_server.requests) == ran
        assert await scheduler.service.run_due() == []
    finally:
        await shut_down(runtime, gateway, scheduler)


async def test_jobs_and_their_history_survive_a_restart(
    settings: Settings, clock: FakeClock, model_server: ScriptedModelServer
) -> None:
    first = await restart(settings, clock)
    job = await add_job(first[2], delivery=Delivery(WEB))
    await first[2].service.run_now(job.id)
    await shut_down(*first)

    runtime, gateway, scheduler = await restart(settings, clock)
    try:
        reloaded = await scheduler.service.book.get(job.id)
        assert reloaded == job
        assert scheduler.service.next_ring(job.id) is not None
        (run,) = await scheduler.service.book.runs(job.id)
        assert run.status == "ok" and run.trigger == "manual"
    finally:
        await shut_down(runtime, gateway, scheduler)


async def test_a_run_cut_short_by_a_crash_is_closed_at_the_next_start(
    settings: Settings, clock: FakeClock
) -> None:
    first = await restart(settings, clock)
    job = await add_job(first[2], delivery=Delivery(WEB))
    store = first[2].service.book.store
    await store.start_run(
        {"job_id": job.id, "trigger": "schedule", "started_at": 1.0, "status": "running"}
    )
    await shut_down(*first)
    runtime, gateway, scheduler = await restart(settings, clock)
    try:
        (run,) = await scheduler.service.book.runs(job.id)
        assert run.status == "error" and "stopped during this run" in run.error
    finally:
        await shut_down(runtime, gateway, scheduler)


async def test_an_empty_timezone_setting_reads_schedules_in_the_systems_zone(
    settings: Settings,
) -> None:
    # The loader lets `timezone: ""` through: it means "not set", never ZoneInfo("").
    db = await Database.open(settings.data_dir / "countbot.db")
    try:
        book = JobBook(JobStore(db), "")
        job = await book.create(JobDraft("Empty zone", "every", "2h", "Stretch", Delivery(WEB)))
    finally:
        await db.close()
    assert book.default_zone == zone_name(None)
    assert job.schedule.timezone == zone_name(None)
