"""Scheduled jobs (`/cron/jobs`): list, create, read, update, delete, run now, run history.

The routes get only the scheduler's service and the agents' names (`routes(service, agents)`),
not the whole daemon; a new job belongs to its body's `agent` (`main` unless named). Errors are
`ApiError`s like the rest of the API; a job that cannot work (`JobError`) is a 400 that says why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from countbot.config.settings import MAIN
from countbot.scheduler.book import JobDraft, JobPatch, JobView
from countbot.scheduler.jobs import Delivery, JobError, JobRun
from countbot.scheduler.service import SchedulerService
from countbot.web.api.errors import ApiError, int_param, json_object

MAX_BODY = 64 * 1024
MAX_RUNS = 200


def routes(
    service: SchedulerService, agents: Callable[[], tuple[str, ...]] = lambda: (MAIN,)
) -> list[BaseRoute]:
    """The routes, bound to `service` and `agents()` (the configured agents' names, read per
    request); mount them with `Mount("/api", routes=[...])`."""
    api = _CronApi(service, agents)
    return [
        Route("/cron/jobs", _guarded(api.list_jobs), methods=["GET"]),
        Route("/cron/jobs", _guarded(api.create_job), methods=["POST"]),
        Route("/cron/jobs/{job_id}", _guarded(api.get_job), methods=["GET"]),
        Route("/cron/jobs/{job_id}", _guarded(api.update_job), methods=["PATCH"]),
        Route("/cron/jobs/{job_id}", _guarded(api.delete_job), methods=["DELETE"]),
        Route("/cron/jobs/{job_id}/run", _guarded(api.run_job), methods=["POST"]),
        Route("/cron/jobs/{job_id}/runs", _guarded(api.job_runs), methods=["GET"]),
    ]


def job_json(view: JobView) -> dict[str, Any]:
    job = view.job
    return {
        "id": job.id,
        "name": job.name,
        "schedule": {
            "kind": job.schedule.kind,
            "value": job.schedule.value,
            "timezone": job.schedule.timezone,
        },
        "schedule_text": job.schedule.describe(),
        "prompt": job.prompt,
        "session": job.session,
        "deliver_to": str(job.delivery),
        "enabled": job.enabled,
        "created_from": job.created_from,
        "created_at": job.created_at,
        "updated_at": job.updated_at,
        "next_run": view.next_run.timestamp() if view.next_run else None,
        "last_status": view.last_status,
        "last_run_at": view.last_run_at,
        "consecutive_failures": job.consecutive_failures,
        "agent": job.agent,
    }


def run_json(run: JobRun) -> dict[str, Any]:
    """Every field of the run, as the history shows it."""
    return dataclasses.asdict(run)


class _CronApi:
    def __init__(self, service: SchedulerService, agents: Callable[[], tuple[str, ...]]) -> None:
        self._service = service
        self._agents = agents
        self._book = service.book

    async def list_jobs(self, request: Request) -> Response:
        return JSONResponse({"jobs": [job_json(view) for view in await self._book.views()]})

    async def get_job(self, request: Request) -> Response:
        return JSONResponse(job_json(await self._view(request.path_params["job_id"])))

    async def create_job(self, request: Request) -> Response:
        body = await json_object(request, MAX_BODY)
        schedule = _schedule(body, required=True)
        draft = JobDraft(
            name=_string(body, "name", required=True) or "",
            schedule_kind=schedule["kind"] or "",
            schedule_value=schedule["value"] or "",
            timezone=schedule["timezone"],
            prompt=_string(body, "prompt", required=True) or "",
            delivery=Delivery.parse(_string(body, "deliver_to")),
            session=_string(body, "session"),
            enabled=_flag(body, "enabled", default=True),
            created_from=_string(body, "created_from") or "web",
            agent=self._agent(body),
        )
        job = await self._book.create(draft)
        return JSONResponse(job_json(await self._view(job.id)), 201)

    def _agent(self, body: dict[str, Any]) -> str:
        """A new job's agent (`main` unless named): its turns run in that agent's house."""
        agent = _string(body, "agent") or MAIN
        if agent not in self._agents():
            raise ApiError(400, f"'agent': no assistant {agent!r}")
        return agent

    async def update_job(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]
        body = await json_object(request, MAX_BODY)
        schedule = _schedule(body, required=False)
        deliver_to = _string(body, "deliver_to")
        patch = JobPatch(
            name=_string(body, "name"),
            schedule_kind=schedule["kind"],
            schedule_value=schedule["value"],
            timezone=schedule["timezone"],
            prompt=_string(body, "prompt"),
            delivery=Delivery.parse(deliver_to) if "deliver_to" in body else None,
            session=_string(body, "session"),
            enabled=_flag(body, "enabled", default=None),
        )
        if await self._book.update(job_id, patch) is None:
            raise ApiError(404, f"no job {job_id!r}")
        return JSONResponse(job_json(await self._view(job_id)))

    async def delete_job(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]
        if not await self._book.remove(job_id):
            raise ApiError(404, f"no job {job_id!r}")
        return Response(status_code=204)

    async def run_job(self, request: Request) -> Response:
        """Run now; `?wait=1` answers with the finished run, else 202 at once."""
        job_id = (await self._view(request.path_params["job_id"])).job.id
        if request.query_params.get("wait") in ("1", "true"):
            run = await self._service.run_now(job_id)
            if run is None:
                raise ApiError(404, f"no job {job_id!r}")
            return JSONResponse({"run": run_json(run)})
        self._service.start_now(job_id)
        return JSONResponse({"started": True, "job_id": job_id}, 202)

    async def job_runs(self, request: Request) -> Response:
        job_id = (await self._view(request.path_params["job_id"])).job.id
        runs = await self._book.runs(job_id, int_param(request, "limit", 20, low=1, high=MAX_RUNS))
        return JSONResponse({"runs": [run_json(run) for run in runs]})

    async def _view(self, job_id: str) -> JobView:
        view = await self._book.view(job_id)
        if view is None:
            raise ApiError(404, f"no job {job_id!r}")
        return view


def _guarded(handler: Any) -> Any:
    """A job that cannot work is the client's mistake (400 with the reason), not a 500."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except JobError as exc:
            raise ApiError(400, str(exc), exc.code, exc.args_of_code) from None

    return endpoint


def _string(body: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = body.get(key)
    if value is None:
        if required:
            raise ApiError(400, f"'{key}' is required")
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"'{key}' must be a string")
    return value


def _flag(body: dict[str, Any], key: str, *, default: bool | None) -> bool | None:
    value = body.get(key, default)
    if value is not None and not isinstance(value, bool):
        raise ApiError(400, f"'{key}' must be true or false")
    return value


def _schedule(body: dict[str, Any], *, required: bool) -> dict[str, str | None]:
    """`{"kind": "cron"|"every"|"at", "value": ..., "timezone": ...}` from the body."""
    schedule = body.get("schedule")
    if schedule is None:
        if required:
            raise ApiError(400, "'schedule' is required: {kind, value, timezone}")
        return {"kind": None, "value": None, "timezone": None}
    if not isinstance(schedule, dict):
        raise ApiError(400, "'schedule' must be an object: {kind, value, timezone}")
    value = schedule.get("value")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # an interval in seconds
    fields = {"kind": schedule.get("kind"), "value": value, "timezone": schedule.get("timezone")}
    for key, field in fields.items():
        if field is not None and not isinstance(field, str):
            raise ApiError(400, f"'schedule.{key}' must be a string")
    if required and not (fields["kind"] and fields["value"]):
        raise ApiError(400, "'schedule' needs kind and value")
    return fields
