"""`countbot cron list|add|remove|enable|disable|run`: scheduled jobs from the command line.

Definitions are changed in the store directly (a running daemon notices within seconds); `run`
asks the running daemon to run the job, or runs it in this process when there is none.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import click

from countbot.cli.common import (
    config_option,
    echo_lines,
    fail,
    run_async,
    settings_or_exit,
    store_settings,
    switch_commands,
)
from countbot.cli.help_format import WholeHelpGroup
from countbot.config.settings import Settings

if TYPE_CHECKING:
    from countbot.scheduler.book import JobBook, JobView
    from countbot.scheduler.jobs import JobRun

# Seconds `run` waits for the daemon beyond the job's own time limit.
RUN_SLACK = 30.0


@click.group(cls=WholeHelpGroup)
def cron() -> None:
    """Scheduled jobs: reminders and recurring prompts."""


@cron.command("list")
@config_option
def list_jobs(config_path: str | None) -> None:
    """Show every job with its schedule, next run and last result."""
    settings = store_settings(config_path)
    views = _run(_with_book(settings, lambda book: book.views()))
    empty = "No scheduled jobs. Add one with `countbot cron add`."
    echo_lines([_describe(view) for view in views], empty)


def _with_unit(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A bare number is refused: "5" could mean seconds or minutes, and the reader meant one."""
    if value is not None and value.strip().isdigit():
        n = value.strip()
        raise click.BadParameter(f"{n!r} has no unit: write {n}m for minutes, or {n}s, {n}h, {n}d")
    return value


@cron.command("add")
@config_option
@click.option("--name", required=True, help="a short name")
@click.option("--prompt", required=True, help="what the assistant does at each run")
@click.option("--cron", "cron_expr", help="crontab expression, e.g. '0 8 * * 1-5'")
@click.option("--every", callback=_with_unit, help="interval with its unit: 90s, 30m, 2h, 1d")
@click.option("--at", "at_time", help="one-shot ISO date-time, e.g. 2026-05-01T09:00")
@click.option("--tz", "timezone", help="IANA time zone (default: config timezone)")
@click.option("--deliver", default="web", show_default=True, help="channel:chat, web, none")
@click.option("--session", help="session to run in (default: the job's own)")
@click.option("--disabled", is_flag=True, help="store it switched off")
def add(config_path: str | None, **options: Any) -> None:
    """Add a job (exactly one of --cron, --every, --at)."""
    settings = store_settings(config_path)
    view = _run(_with_book(settings, lambda book: _add(book, options)))
    click.echo(f"Added {_describe(view)}")


@cron.command("remove")
@config_option
@click.argument("job_id")
def remove_job(config_path: str | None, job_id: str) -> None:
    """Delete a job and its history."""
    settings = store_settings(config_path)
    if not _run(_with_book(settings, lambda book: book.remove(job_id))):
        fail(f"no job {job_id!r}", 1)
    click.echo(f"Removed job {job_id}.")


def switch(config_path: str | None, job_id: str, enabled: bool) -> None:
    settings = store_settings(config_path)
    if _run(_with_book(settings, lambda book: book.set_enabled(job_id, enabled))) is None:
        fail(f"no job {job_id!r}", 1)
    click.echo(f"Job {job_id} {'enabled' if enabled else 'disabled'}.")


switch_commands(
    cron, "job_id", switch, on="Switch a job on.", off="Switch a job off (it keeps its history)."
)


@cron.command("run")
@config_option
@click.argument("job_id")
def run_job_now(config_path: str | None, job_id: str) -> None:
    """Run a job now and print its answer (through the daemon if one is running)."""
    settings = settings_or_exit(config_path, require_model=True)
    result = _run(lambda: _run_job(settings, job_id))
    if result is None:
        fail(f"no job {job_id!r}", 1)
    click.echo(result.output or result.error)
    if result.notes:
        click.echo(f"(note: {result.notes})", err=True)
    if result.delivered:
        click.echo(f"(delivered: {result.delivery_detail})", err=True)
    sys.exit(0 if result.status == "ok" else 1)


def _run(main: Callable[[], Any]) -> Any:
    """Run `main`; a job the scheduler refuses (bad schedule, unknown zone) exits 2."""
    from countbot.scheduler.jobs import JobError

    async def guarded() -> Any:
        try:
            return await main()
        except JobError as exc:
            fail(str(exc), 2)

    return run_async(guarded)


def _with_book(settings: Settings, work: Callable[[JobBook], Any]) -> Callable[[], Any]:
    """Open the store (no runtime, no model) and run `work` with a job book over it."""

    async def main() -> Any:
        from countbot.scheduler.book import JobBook
        from countbot.store.database import Database
        from countbot.store.jobs import JobStore

        db = await Database.open(settings.data_dir / "countbot.db")
        try:
            return await work(JobBook(JobStore(db), settings.timezone))
        finally:
            await db.close()

    return main


async def _add(book: JobBook, options: dict[str, Any]) -> JobView:
    from countbot.scheduler.book import JobDraft
    from countbot.scheduler.jobs import Delivery, JobError

    given = {"cron": options["cron_expr"], "every": options["every"], "at": options["at_time"]}
    kinds = [kind for kind, value in given.items() if value]
    if len(kinds) != 1:
        raise JobError("give exactly one of --cron, --every or --at")
    draft = JobDraft(
        name=options["name"],
        schedule_kind=kinds[0],
        schedule_value=given[kinds[0]] or "",
        prompt=options["prompt"],
        delivery=Delivery.parse(options["deliver"]),
        timezone=options["timezone"],
        session=options["session"],
        enabled=not options["disabled"],
        created_from="cli",
    )
    job = await book.create(draft)
    view = await book.view(job.id)
    assert view is not None
    return view


async def _run_job(settings: Settings, job_id: str) -> JobRun | None:
    """The finished run (None for an unknown job): by the daemon if one runs, else here."""
    from countbot.cli.cron_run import NoDaemonError, run_in_daemon, run_in_process

    try:
        return await run_in_daemon(settings, job_id, settings.scheduler.job_timeout + RUN_SLACK)
    except NoDaemonError:
        return await run_in_process(settings, job_id)


def _describe(view: JobView) -> str:
    job = view.job
    state = "" if job.enabled else " [disabled]"
    upcoming = "-"
    if view.next_run is not None:
        local = view.next_run.astimezone(ZoneInfo(job.schedule.timezone))
        upcoming = f"{local:%Y-%m-%d %H:%M} {job.schedule.timezone}"
    last = view.last_status or "never run"
    return (
        f"{job.id}  {job.name}{state}\n    {job.schedule.describe()}; next: {upcoming}; "
        f"delivers to {job.delivery}; last: {last}\n    prompt: {job.prompt}"
    )
