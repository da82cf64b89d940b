"""`countbot cron run`: by the running daemon (its channels can deliver), else in this process."""

from __future__ import annotations

import asyncio
from urllib.parse import quote

import httpx

from countbot.cli.daemon_client import auth_headers, error_text
from countbot.config.settings import Settings
from countbot.gateway.gateway import Gateway, OneLoop
from countbot.runtime.assembly import open_runtime
from countbot.scheduler.assembly import JobsFeature, build_scheduler
from countbot.scheduler.jobs import JobError, JobRun
from countbot.web.instance import read_daemon_info


class NoDaemonError(Exception):
    """No daemon answers for this data folder (or it serves no scheduler)."""


async def run_in_daemon(settings: Settings, job_id: str, time_limit: float) -> JobRun | None:
    """The daemon's finished run of `job_id`, None if it has no such job."""
    info = await asyncio.to_thread(read_daemon_info, settings.data_dir)
    if info is None:
        raise NoDaemonError
    headers = auth_headers(settings)
    url = f"{info.local_url()}/api/cron/jobs/{quote(job_id, safe='')}/run?wait=1"
    async with httpx.AsyncClient(trust_env=False, timeout=time_limit) as client:
        try:
            response = await client.post(url, headers=headers)
        except httpx.TransportError:
            raise NoDaemonError from None
    error = error_text(response)
    if response.status_code == 404:
        if error.startswith("no job"):
            return None
        raise NoDaemonError  # a daemon without the scheduler's routes
    if response.status_code != 200:
        raise JobError(f"the daemon answered {response.status_code}: {error}")
    return JobRun.from_row(response.json()["run"])


async def run_in_process(settings: Settings, job_id: str) -> JobRun | None:
    """Run `job_id` here, through a gateway of our own; None if there is no such job."""
    jobs = JobsFeature()  # a job's turn may ask for more jobs, as in the daemon
    runtime = await open_runtime(settings, features=[jobs])
    gateway = Gateway(
        OneLoop(runtime.agent), runtime.sessions, settings.gateway, approvals=runtime.approvals
    )
    try:
        return await build_scheduler(jobs, gateway).service.run_now(job_id)
    finally:
        await gateway.close(settings.web.shutdown_grace)
        await runtime.close()
