"""A scheduler on a real runtime, gateway and SQLite file, with a clock the test moves."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from countbot.config.settings import Settings
from countbot.gateway.gateway import Gateway, OneLoop
from countbot.runtime.assembly import Runtime, open_runtime
from countbot.runtime.deliveries import DeliveryResult
from countbot.scheduler.assembly import JobsFeature, Scheduler, start_scheduler
from countbot.scheduler.clock import Clock
from tests.support.scripted_model import ScriptedModelServer
from tests.support.settings import make_settings

ZONE = "Europe/Berlin"
# A Friday morning, two days before Berlin moves its clocks forward (2026-03-29, 02:00 -> 03:00).
FRIDAY = datetime(2026, 3, 27, 6, 0, tzinfo=UTC)


class FakeClock:
    """The scheduler's clock; tests move it instead of waiting."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class RecordingSender:
    """A channel sender that keeps what it was given, or refuses it as a platform might."""

    def __init__(self, name: str = "pigeon") -> None:
        self.name = name
        self.sent: list[tuple[str, str]] = []
        self.refusal: str | None = None

    async def send(self, chat_id: str, text: str, files: Sequence[Path] = ()) -> DeliveryResult:
        if self.refusal is not None:
            return DeliveryResult(False, self.refusal)
        self.sent.append((chat_id, text))
        return DeliveryResult(True, "sent", (str(len(self.sent)),))


def jobs_on(runtime: Runtime, clock: Clock) -> JobsFeature:
    """The jobs of a runtime opened without the feature (so without the `cron` tool)."""
    jobs = JobsFeature(clock)
    jobs.bind(runtime.ports)
    return jobs


@pytest.fixture
def settings(tmp_path: Path, model_server: ScriptedModelServer) -> Settings:
    configured = make_settings(tmp_path, model_server)
    configured.timezone = ZONE
    return configured


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(FRIDAY)


@pytest.fixture
def jobs(clock: FakeClock) -> JobsFeature:
    return JobsFeature(clock)


@pytest.fixture
async def runtime(settings: Settings, jobs: JobsFeature) -> AsyncIterator[Runtime]:
    """The daemon's runtime as far as jobs go: the `cron` tool over `jobs`' book."""
    opened = await open_runtime(settings, features=[jobs])
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def gateway(runtime: Runtime) -> AsyncIterator[Gateway]:
    gw = Gateway(
        OneLoop(runtime.agent),
        runtime.sessions,
        runtime.settings.gateway,
        approvals=runtime.approvals,
    )
    yield gw
    await gw.close(grace=5)


@pytest.fixture
def pigeon(runtime: Runtime) -> RecordingSender:
    sender = RecordingSender()
    runtime.deliveries.register(sender)
    return sender


@pytest.fixture
async def scheduler(jobs: JobsFeature, gateway: Gateway) -> AsyncIterator[Scheduler]:
    started = await start_scheduler(jobs, gateway, paused=True)
    await started.service.idle()
    yield started
    await started.stop()
