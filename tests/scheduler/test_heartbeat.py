"""The heartbeat: no model call without tasks, HEARTBEAT_OK stays quiet, quiet hours, cap, busy."""

from __future__ import annotations

import asyncio
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from countbot.gateway.gateway import Gateway
from countbot.gateway.messages import InboundMessage
from countbot.runtime.assembly import Runtime
from countbot.scheduler.assembly import Scheduler, start_scheduler
from countbot.scheduler.heartbeat import in_quiet_hours, only_acknowledges
from countbot.scheduler.heartbeat_tasks import heartbeat_tasks
from countbot.store.channel_state import ChannelStateStore
from tests.scheduler.conftest import FakeClock, RecordingSender, jobs_on
from tests.support.scripted_model import Reply, ScriptedModelServer

TASKS = "# Heartbeat tasks\n\n- If it will rain in Berlin today, tell me to take an umbrella.\n"


async def until_idle(gateway: Gateway, session_id: str) -> None:
    """The lane frees itself just after its turn's last event."""
    for _ in range(1000):
        if not gateway.busy(session_id):
            return
        await asyncio.sleep(0.01)
    raise TimeoutError(f"session {session_id} stayed busy")


@pytest.fixture
def beating(runtime: Runtime, pigeon: RecordingSender) -> Path:
    """Heartbeat on, to the pigeon chat 42, with one task; returns HEARTBEAT.md's path."""
    beat = runtime.settings.heartbeat
    beat.enabled, beat.target, beat.quiet_hours, beat.daily_cap = True, "pigeon:42", None, 12
    path = runtime.settings.workspace / "HEARTBEAT.md"
    path.write_text(TASKS, encoding="utf-8")
    return path


async def test_the_shipped_heartbeat_file_means_no_model_call_at_all(
    runtime: Runtime, scheduler: Scheduler, beating: Path, model_server: ScriptedModelServer
) -> None:
    template = Path(__file__).parents[2] / "workspace" / "HEARTBEAT.md"
    await asyncio.to_thread(shutil.copyfile, template, beating)
    result = await scheduler.heartbeat.beat()
    assert result.outcome == "nothing"
    assert model_server.requests == []
    await asyncio.to_thread(beating.unlink)
    assert (await scheduler.heartbeat.beat()).outcome == "nothing"
    assert model_server.requests == []


async def test_an_acknowledgement_is_not_delivered(
    scheduler: Scheduler, beating: Path, pigeon: RecordingSender, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("HEARTBEAT_OK"))
    assert (await scheduler.heartbeat.beat()).outcome == "acknowledged"
    assert pigeon.sent == []
    (request,) = model_server.requests
    assert "umbrella" in str(request["messages"])


async def test_a_real_message_reaches_the_target(
    scheduler: Scheduler, beating: Path, pigeon: RecordingSender, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Rain from 5 pm: take an umbrella."))
    assert (await scheduler.heartbeat.beat()).outcome == "delivered"
    assert pigeon.sent == [("42", "Rain from 5 pm: take an umbrella.")]


async def test_quiet_hours_skip_the_beat(
    runtime: Runtime,
    scheduler: Scheduler,
    beating: Path,
    clock: FakeClock,
    model_server: ScriptedModelServer,
) -> None:
    runtime.settings.heartbeat.quiet_hours = "23:00-07:00"
    model_server.script(Reply.text("HEARTBEAT_OK"))
    clock.now = datetime(2026, 3, 27, 22, 30, tzinfo=UTC)  # 23:30 in Berlin
    result = await scheduler.heartbeat.beat()
    assert (result.outcome, result.detail) == ("quiet", "23:00-07:00")
    assert model_server.requests == []
    clock.now = datetime(2026, 3, 28, 6, 0, tzinfo=UTC)  # 07:00 in Berlin
    assert (await scheduler.heartbeat.beat()).outcome == "acknowledged"


async def test_the_daily_cap_limits_model_calls_per_local_day(
    runtime: Runtime,
    scheduler: Scheduler,
    beating: Path,
    clock: FakeClock,
    gateway: Gateway,
    model_server: ScriptedModelServer,
) -> None:
    runtime.settings.heartbeat.daily_cap = 2
    model_server.responder = lambda body: Reply.text("HEARTBEAT_OK")
    outcomes = []
    for _ in range(3):
        outcomes.append((await scheduler.heartbeat.beat()).outcome)
        await until_idle(gateway, "heartbeat")
        clock.advance(hours=1)
    assert outcomes == ["acknowledged", "acknowledged", "capped"]
    assert len(model_server.requests) == 2
    restarted = await start_scheduler(jobs_on(runtime, clock), gateway, paused=True)
    try:  # a new heartbeat (as after a daemon restart) reads the count from SQLite
        assert (await restarted.heartbeat.beat()).outcome == "capped"
    finally:
        await restarted.stop()
    clock.now = datetime(2026, 3, 27, 23, 30, tzinfo=UTC)  # past midnight in Berlin
    assert (await scheduler.heartbeat.beat()).outcome == "acknowledged"


@pytest.mark.parametrize("chat_session", ["pigeon:42", "pigeon:42:after-new"])
async def test_a_beat_is_skipped_while_the_user_is_talking(
    runtime: Runtime,
    scheduler: Scheduler,
    beating: Path,
    gateway: Gateway,
    model_server: ScriptedModelServer,
    chat_session: str,
) -> None:
    if chat_session != "pigeon:42":  # the user started a fresh session with /new
        await ChannelStateStore(runtime.db).assign_session("pigeon", "42", chat_session)
    model_server.script(Reply.text("a long answer", chunks=20, delay=0.2))
    await gateway.submit(InboundMessage("pigeon", "hello", chat_id="42", session_id=chat_session))
    result = await scheduler.heartbeat.beat()
    assert (result.outcome, result.detail) == ("busy", chat_session)
    gateway.cancel(chat_session)
    await until_idle(gateway, chat_session)
    assert not any("Heartbeat check" in str(r["messages"]) for r in model_server.requests)


async def test_a_disabled_heartbeat_does_nothing(
    runtime: Runtime, scheduler: Scheduler, beating: Path, model_server: ScriptedModelServer
) -> None:
    runtime.settings.heartbeat.enabled = False
    assert (await scheduler.heartbeat.beat()).outcome == "disabled"
    assert model_server.requests == []


def test_tasks_are_lines_outside_comments_and_headings() -> None:
    text = "# Tasks\n\n- water the plants\n<!--\n- not this\n-->\n## Later\n  - call Bob  \n"
    assert heartbeat_tasks(text) == ["- water the plants", "- call Bob"]
    assert heartbeat_tasks("# Tasks\n<!-- never closed\n- hidden") == []
    assert heartbeat_tasks("") == []


def test_what_counts_as_only_an_acknowledgement() -> None:
    assert only_acknowledges("HEARTBEAT_OK")
    assert only_acknowledges("**HEARTBEAT_OK** — nothing to report.")
    assert not only_acknowledges("Rain later today.")
    assert not only_acknowledges("HEARTBEAT_OK but also: your 3 pm meeting moved to 4 pm, and ...")


@pytest.mark.parametrize(
    ("clock_time", "window", "quiet"),
    [
        ("23:30", "23:00-07:00", True),
        ("06:59", "23:00-07:00", True),
        ("07:00", "23:00-07:00", False),
        ("12:00", "12:00-14:00", True),
        ("14:00", "12:00-14:00", False),
        ("03:00", "08:00-08:00", False),
    ],
)
def test_quiet_hours_wrap_past_midnight(clock_time: str, window: str, quiet: bool) -> None:
    hours, minutes = map(int, clock_time.split(":"))
    assert in_quiet_hours(datetime(2026, 1, 1, hours, minutes), window) is quiet
