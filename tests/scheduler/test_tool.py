"""The `cron` tool in a scripted conversation through the real AgentLoop, runtime and store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from countbot.agent.turn_request import TurnRequest
from countbot.runtime.assembly import Runtime
from countbot.scheduler.assembly import JobsFeature
from countbot.scheduler.book import JobBook
from countbot.scheduler.tool import CronTool
from countbot.tools.base import ToolContext
from tests.scheduler.conftest import RecordingSender
from tests.support.scripted_model import Reply, ScriptedModelServer


def call(**args: str) -> tuple[str, str]:
    return ("cron", json.dumps(args))


def tool_results(server: ScriptedModelServer) -> list[str]:
    """What the tool told the model, in order (from the requests the model server received)."""
    messages = server.requests[-1]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


@pytest.fixture
def jobs() -> JobsFeature:
    """On the real clock: these conversations speak of "every weekday" from now."""
    return JobsFeature()


@pytest.fixture
def book(jobs: JobsFeature, runtime: Runtime) -> JobBook:
    """The book the runtime's `cron` tool writes to."""
    return jobs.book


async def test_remind_me_every_weekday_then_list_then_cancel(
    runtime: Runtime, book: JobBook, model_server: ScriptedModelServer
) -> None:
    pigeon = RecordingSender()
    runtime.deliveries.register(pigeon)
    model_server.script(
        Reply.tool_calls(
            call(
                action="create",
                name="Train check",
                cron="0 8 * * 1-5",
                prompt="Remind the user to check the train",
            )
        ),
        Reply.text("Done: every weekday at 8:00 I will remind you."),
    )
    answer = await runtime.agent.process_direct(
        TurnRequest(
            "remind me every weekday at 8:00 to check the train",
            "pigeon:42",
            channel="pigeon",
            chat_id="42",
        )
    )
    assert answer == "Done: every weekday at 8:00 I will remind you."
    (job,) = await book.jobs()
    assert (job.name, job.schedule.value, job.schedule.timezone) == (
        "Train check",
        "0 8 * * 1-5",
        "Europe/Berlin",
    )
    assert str(job.delivery) == "pigeon:42"  # the chat it was created from
    assert job.created_from == "cron tool in pigeon:42"
    (created,) = tool_results(model_server)
    assert created.startswith("Created job:") and job.id in created
    # The model is told when it will first run: 8:00 on a weekday, in the user's zone.
    assert re.search(r"next \d{4}-\d\d-\d\d 08:00 \((Mon|Tue|Wed|Thu|Fri)\) Europe/Berlin", created)

    model_server.script(
        Reply.tool_calls(call(action="list")), Reply.text(f"You have one: {job.id}.")
    )
    await runtime.agent.process_direct(
        TurnRequest("what reminders do I have", "pigeon:42", channel="pigeon", chat_id="42")
    )
    listing = tool_results(model_server)[-1]
    assert job.id in listing and "Train check" in listing and "delivers to pigeon:42" in listing

    model_server.script(
        Reply.tool_calls(call(action="remove", job_id=job.id)), Reply.text("Cancelled.")
    )
    await runtime.agent.process_direct(
        TurnRequest("cancel the train one", "pigeon:42", channel="pigeon", chat_id="42")
    )
    assert tool_results(model_server)[-1] == f"Removed job {job.id}."
    assert await book.jobs() == []


async def test_a_job_made_in_a_web_chat_runs_in_that_chat(
    book: JobBook, runtime: Runtime, tmp_path: Path
) -> None:
    tool = runtime.tools.get("cron")
    assert isinstance(tool, CronTool)
    ctx = ToolContext("web-session", tmp_path, channel="web", chat_id=None)
    result = await tool.execute(
        {"action": "create", "name": "Report", "every": "1d", "prompt": "Summarize my day"}, ctx
    )
    assert result.status == "ok"
    (job,) = await book.jobs()
    # Its answers arrive in the conversation it was asked in, not a separate cron one.
    assert str(job.delivery) == "web" and job.session == "web-session"
    cli = ToolContext("cli-session", tmp_path, channel="cli", chat_id=None)
    await tool.execute({"action": "create", "name": "CLI", "every": "1d", "prompt": "x"}, cli)
    from_cli = next(j for j in await book.jobs() if j.name == "CLI")
    assert str(from_cli.delivery) == "web" and from_cli.session == f"cron:{from_cli.id}"
    told = await tool.execute(
        {
            "action": "create",
            "name": "Ping",
            "at": "2030-05-01T09:00",
            "prompt": "Ping",
            "deliver_to": "telegram:7",
        },
        ctx,
    )
    assert told.status == "ok" and "delivers to telegram:7" in told.content


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"action": "create", "name": "x", "prompt": "y"}, "exactly one of cron, every or at"),
        ({"action": "create", "cron": "0 8 * * *", "prompt": "y"}, "needs name"),
        ({"action": "create", "name": "x", "prompt": "y", "cron": "8am"}, "five fields"),
        (
            {"action": "create", "name": "x", "prompt": "y", "every": "1h", "deliver_to": "x"},
            "delivery",
        ),
        ({"action": "remove"}, "needs job_id"),
        ({"action": "disable", "job_id": "nope"}, "no job 'nope'"),
    ],
)
async def test_mistakes_come_back_as_errors_the_model_can_fix(
    book: JobBook, runtime: Runtime, tmp_path: Path, args: dict, message: str
) -> None:
    tool = runtime.tools.get("cron")
    assert tool is not None
    result = await tool.execute(args, ToolContext("s", tmp_path))
    assert result.is_error and message in result.content


async def test_enable_and_disable_from_conversation(
    book: JobBook, runtime: Runtime, tmp_path: Path
) -> None:
    tool = runtime.tools.get("cron")
    assert tool is not None
    ctx = ToolContext("s", tmp_path)
    await tool.execute({"action": "create", "name": "x", "prompt": "y", "every": "2h"}, ctx)
    (job,) = await book.jobs()
    off = await tool.execute({"action": "disable", "job_id": job.id}, ctx)
    assert off.content.startswith("Job disabled:") and "[disabled]" in off.content
    assert not (await book.jobs())[0].enabled
    on = await tool.execute({"action": "enable", "job_id": job.id}, ctx)
    assert on.content.startswith("Job enabled:") and (await book.jobs())[0].enabled
