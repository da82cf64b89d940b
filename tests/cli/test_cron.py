"""`countbot cron` as a user runs it: real subprocesses on a real config and database."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from countbot.config.settings import Settings
from countbot.gateway.gateway import Gateway, OneLoop
from countbot.runtime.assembly import Runtime
from countbot.scheduler.assembly import JobsFeature, Scheduler, start_scheduler
from countbot.scheduler.book import JobDraft
from countbot.scheduler.jobs import Delivery
from countbot.web.api import cron
from countbot.web.api.errors import HANDLERS
from countbot.web.instance import INFO_FILE
from tests.cli.process import countbot
from tests.scheduler.conftest import RecordingSender
from tests.support.scripted_model import Reply, ScriptedModelServer


@pytest.fixture
def config(tmp_path: Path, settings: Settings, model_server: ScriptedModelServer) -> Path:
    """A config.yaml for the same folders (and model) as the `settings` fixture."""
    path = tmp_path / "config.yaml"
    path.write_text(
        "model:\n"
        "  name: openai/test-model\n"
        f"  api_base: {model_server.base_url}\n"
        "  api_key: sk-cli-test-0123456789\n"
        "  vision: false\n"
        f"workspace: {settings.workspace}\n"
        f"data_dir: {settings.data_dir}\n"
        "timezone: Europe/Berlin\n",
        encoding="utf-8",
    )
    return path


async def test_add_list_disable_enable_remove(config: Path) -> None:
    status, out, _ = await countbot(
        "cron", "add", "--name", "Train", "--cron", "0 8 * * 1-5",
        "--prompt", "Check the train", "--deliver", "telegram:42", config=config,
    )  # fmt: skip
    assert status == 0 and out.startswith("Added ")
    job_id = out.split()[1]
    status, out, _ = await countbot("cron", "list", config=config)
    assert status == 0
    assert "cron '0 8 * * 1-5' (Europe/Berlin)" in out and "delivers to telegram:42" in out
    assert "08:00 Europe/Berlin" in out

    assert (await countbot("cron", "disable", job_id, config=config))[0] == 0
    assert "[disabled]" in (await countbot("cron", "list", config=config))[1]
    assert (await countbot("cron", "enable", job_id, config=config))[0] == 0
    assert "[disabled]" not in (await countbot("cron", "list", config=config))[1]
    status, out, _ = await countbot("cron", "remove", job_id, config=config)
    assert status == 0 and job_id in out
    assert "No scheduled jobs" in (await countbot("cron", "list", config=config))[1]


async def test_mistakes_are_explained(config: Path) -> None:
    status, _, err = await countbot(
        "cron", "add", "--name", "x", "--prompt", "y", "--every", "5s", config=config
    )
    assert status == 2 and "shortest interval" in err
    status, _, err = await countbot(
        "cron", "add", "--name", "x", "--prompt", "y", "--every", "5", config=config
    )
    assert status == 2 and "'5' has no unit: write 5m for minutes" in err
    status, _, err = await countbot(
        "cron", "add", "--name", "x", "--prompt", "y", "--cron", "0 8 * * *", "--every", "1h",
        config=config,
    )  # fmt: skip
    assert status == 2 and "exactly one of" in err
    status, _, err = await countbot("cron", "remove", "nope", config=config)
    assert status == 1 and "no job 'nope'" in err


async def test_run_without_a_daemon_runs_the_job_here(
    config: Path, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Your train is on time."))
    _, out, _ = await countbot(
        "cron", "add", "--name", "Train", "--every", "1d", "--prompt", "Check the train",
        config=config,
    )  # fmt: skip
    job_id = out.split()[1]
    status, out, _ = await countbot("cron", "run", job_id, config=config)
    assert status == 0 and out.strip() == "Your train is on time."
    assert "last: ok" in (await countbot("cron", "list", config=config))[1]


@pytest.fixture
async def daemon(runtime: Runtime, settings: Settings) -> AsyncIterator[Scheduler]:
    """This test process plays the daemon: scheduler routes on loopback, and daemon.json."""
    gateway = Gateway(
        OneLoop(runtime.agent), runtime.sessions, settings.gateway, approvals=runtime.approvals
    )
    jobs = JobsFeature()
    jobs.bind(runtime.ports)
    scheduler = await start_scheduler(jobs, gateway, paused=True)
    app = Starlette(
        routes=[Mount("/api", routes=cron.routes(scheduler.service))], exception_handlers=HANDLERS
    )
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    port = listener.getsockname()[1]
    info = {"pid": os.getpid(), "host": "127.0.0.1", "port": port, "started_at": 0}
    await asyncio.to_thread((settings.data_dir / INFO_FILE).write_text, json.dumps(info))
    yield scheduler
    server.should_exit = True
    await serving
    listener.close()
    await scheduler.stop()
    await gateway.close(grace=5)


async def test_run_with_a_daemon_asks_the_daemon(
    daemon: Scheduler, runtime: Runtime, config: Path, model_server: ScriptedModelServer
) -> None:
    # Only the daemon has this channel: a delivery to it proves the daemon ran the job.
    pigeon = RecordingSender()
    runtime.deliveries.register(pigeon)
    draft = JobDraft("Train", "every", "1d", "Check the train", Delivery("pigeon", "42"))
    job = await daemon.service.book.create(draft)
    model_server.script(Reply.text("On time."))
    status, out, err = await countbot("cron", "run", job.id, config=config)
    assert status == 0 and out.strip() == "On time." and "delivered" in err
    assert pigeon.sent == [("42", "On time.")]
    status, _, err = await countbot("cron", "run", "nope", config=config)
    assert status == 1 and "no job 'nope'" in err
