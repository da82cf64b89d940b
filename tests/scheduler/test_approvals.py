"""A scheduled job never waits for an approval: the command is denied at once, the run goes on,
and the job's run record says what was denied."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from countbot.config.settings import Settings
from countbot.runtime.assembly import Runtime
from countbot.scheduler.assembly import Scheduler
from countbot.scheduler.book import JobDraft
from countbot.scheduler.jobs import WEB, Delivery
from countbot.web.api.cron import run_json
from tests.scheduler.conftest import ZONE
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

COMMAND = "echo scheduled > proof.txt"


@pytest.fixture
def settings(tmp_path: Path, model_server: ScriptedModelServer) -> Settings:
    configured = make_settings(tmp_path, model_server)
    configured.timezone = ZONE
    configured.tools.exec.approval = "always"
    return configured


async def test_a_job_is_denied_without_waiting_and_its_run_says_so(
    scheduler: Scheduler, runtime: Runtime, settings: Settings, model_server: ScriptedModelServer
) -> None:
    model_server.script(
        Reply.tool_calls(("exec", json.dumps({"command": COMMAND}))),
        Reply.text("I could not write the file without your approval."),
    )
    draft = JobDraft("Proof", "every", "3600", "write the proof file", Delivery(WEB))
    job = await scheduler.service.book.create(draft)
    run = await scheduler.service.run_now(job.id)

    assert run is not None and run.status == "ok"
    assert run.output == "I could not write the file without your approval."
    note = f"exec was denied without asking (nobody can approve in an unattended run): {COMMAND}"
    assert run.notes == note
    (stored,) = await scheduler.service.book.runs(job.id)
    assert stored.notes == note and run_json(stored)["notes"] == note
    assert not (settings.workspace / "proof.txt").exists()
    tool_message = next(m for m in model_server.requests[-1]["messages"] if m["role"] == "tool")
    assert "nobody can answer in this turn, as in a scheduled run" in tool_message["content"]
    [record] = await runtime.audit.recent(type="approval")
    assert (record["decision"], record["outcome"], record["session_id"]) == (
        "deny",
        "unattended",
        job.session,
    )
    assert runtime.approvals.pending() == []
