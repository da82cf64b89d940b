"""REST /api/cron/jobs over real HTTP: uvicorn on 127.0.0.1 serving the scheduler's routes."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount

from countbot.scheduler.assembly import Scheduler
from countbot.web.api import cron
from countbot.web.api.errors import HANDLERS
from tests.scheduler.conftest import RecordingSender
from tests.support.scripted_model import Reply, ScriptedModelServer

TRAIN = {
    "name": "Train",
    "prompt": "Check the train",
    "schedule": {"kind": "cron", "value": "0 8 * * 1-5"},
    "deliver_to": "pigeon:42",
}


@pytest.fixture
async def client(scheduler: Scheduler) -> AsyncIterator[httpx.AsyncClient]:
    app = Starlette(
        routes=[Mount("/api", routes=cron.routes(scheduler.service))], exception_handlers=HANDLERS
    )
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    base = f"http://127.0.0.1:{listener.getsockname()[1]}/api"
    async with httpx.AsyncClient(base_url=base, trust_env=False, timeout=20) as http:
        yield http
    server.should_exit = True
    await serving
    listener.close()


async def test_create_read_update_and_delete_a_job(client: httpx.AsyncClient) -> None:
    created = await client.post("/cron/jobs", json=TRAIN)
    assert created.status_code == 201
    job = created.json()
    assert job["schedule"] == {"kind": "cron", "value": "0 8 * * 1-5", "timezone": "Europe/Berlin"}
    assert job["session"] == f"cron:{job['id']}" and job["deliver_to"] == "pigeon:42"
    assert job["enabled"] and job["next_run"] is not None and job["last_status"] is None
    listed = (await client.get("/cron/jobs")).json()["jobs"]
    assert [j["id"] for j in listed] == [job["id"]]

    paused = await client.patch(f"/cron/jobs/{job['id']}", json={"enabled": False})
    assert paused.status_code == 200
    assert not paused.json()["enabled"] and paused.json()["next_run"] is None
    moved = await client.patch(
        f"/cron/jobs/{job['id']}", json={"schedule": {"kind": "every", "value": 7200}}
    )
    assert moved.json()["schedule_text"] == "every 2h"

    assert (await client.delete(f"/cron/jobs/{job['id']}")).status_code == 204
    gone = await client.get(f"/cron/jobs/{job['id']}")
    assert gone.status_code == 404 and "no job" in gone.json()["error"]


async def test_run_now_and_its_history(
    client: httpx.AsyncClient,
    scheduler: Scheduler,
    pigeon: RecordingSender,
    model_server: ScriptedModelServer,
) -> None:
    model_server.script(Reply.text("On time."), Reply.text("Still on time."))
    job = (await client.post("/cron/jobs", json=TRAIN)).json()
    waited = await client.post(f"/cron/jobs/{job['id']}/run?wait=1")
    assert waited.status_code == 200
    run = waited.json()["run"]
    assert (run["status"], run["output"], run["delivered"]) == ("ok", "On time.", True)

    started = await client.post(f"/cron/jobs/{job['id']}/run")
    assert started.status_code == 202
    await scheduler.service.idle()
    history = (await client.get(f"/cron/jobs/{job['id']}/runs?limit=5")).json()["runs"]
    assert [r["output"] for r in history] == ["Still on time.", "On time."]
    assert pigeon.sent == [("42", "On time."), ("42", "Still on time.")]
    listed = (await client.get("/cron/jobs")).json()["jobs"]
    assert listed[0]["last_status"] == "ok"


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({**TRAIN, "schedule": {"kind": "cron", "value": "every morning"}}, 400, "five fields"),
        ({**TRAIN, "deliver_to": "pigeon"}, 400, "delivery"),
        ({k: v for k, v in TRAIN.items() if k != "prompt"}, 400, "'prompt' is required"),
        ({**TRAIN, "enabled": "yes"}, 400, "true or false"),
        ({**TRAIN, "schedule": "daily"}, 400, "must be an object"),
    ],
)
async def test_invalid_jobs_are_refused_with_a_reason(
    client: httpx.AsyncClient, body: dict, status: int, message: str
) -> None:
    response = await client.post("/cron/jobs", json=body)
    assert response.status_code == status
    assert message in response.json()["error"]
    assert (await client.get("/cron/jobs")).json()["jobs"] == []


async def test_bad_requests_get_json_errors(client: httpx.AsyncClient) -> None:
    not_json = await client.post("/cron/jobs", content=b"name=x")
    assert not_json.status_code == 415
    broken = await client.post(
        "/cron/jobs", content=b"{", headers={"content-type": "application/json"}
    )
    assert broken.status_code == 400 and "malformed JSON" in broken.json()["error"]
    assert (await client.post("/cron/jobs/nope/run?wait=1")).status_code == 404
    assert (await client.patch("/cron/jobs/nope", json={"name": "x"})).status_code == 404
    assert (await client.delete("/cron/jobs/nope")).status_code == 404
    assert (await client.get("/cron/jobs/nope/runs?limit=0")).status_code == 404
