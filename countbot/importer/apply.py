"""Bringing what an import found into the instance, and the report of what was taken and left.

Nothing the owner has is overwritten: texts are appended to the workspace's files under a
heading that names their origin (once: a second import finds the heading and skips them), a
note whose file exists is appended to it, a skill whose name is taken is left, and jobs are made
through the job book, which checks them as `countbot cron add` does. Another assistant's
skills are copied only after the same checks as `countbot skills install` (no links, no
archive escapes, a valid SKILL.md).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from countbot.config.settings import Settings
from countbot.importer.found import Found, ImportedJob, Note, Text
from countbot.memory.memory_file import MemoryFile
from countbot.scheduler.book import JobBook, JobDraft
from countbot.scheduler.clock import utc_now
from countbot.scheduler.jobs import Delivery, JobError
from countbot.scheduler.triggers import load_triggers, parse_schedule, zone_name
from countbot.skills.installer import BundleError, install, open_bundle
from countbot.store.database import Database
from countbot.store.jobs import JobStore


@dataclass(slots=True)
class Report:
    """One line per thing taken and per thing left (with why)."""

    took: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


async def apply_import(found: Found, settings: Settings, *, dry_run: bool) -> Report:
    """Take what `found` offers into the instance (`dry_run`: only say what would be taken)."""
    report = Report(left=list(found.left))
    workspace = settings.workspace
    for text in found.texts:
        await _take_text(found.source, text, workspace, report, dry_run)
    for note in found.notes:
        await _take_note(found.source, note, workspace, report, dry_run)
    for folder in found.skills:
        _take_skill(folder, workspace / "skills", report, dry_run)
    if found.jobs:
        await _take_jobs(found.jobs, settings, report, dry_run)
    return report


async def _take_text(
    source: str, text: Text, workspace: Path, report: Report, dry_run: bool
) -> None:
    marker = f"<!-- imported from {source}: {text.origin} -->"
    section = f"## From {source}'s {text.origin}\n\n{marker}\n\n{text.text}\n"
    target = MemoryFile(workspace / text.target)
    if marker in await target.read():
        report.left.append(f"{text.origin}: already imported into {text.target}")
    elif dry_run or await target.append_once(marker, section):
        report.took.append(f"{text.origin} → {text.target}")


async def _take_note(
    source: str, note: Note, workspace: Path, report: Report, dry_run: bool
) -> None:
    target = MemoryFile(workspace / "memory" / f"{note.name}.md")
    current = await target.read()
    marker = f"<!-- imported from {source}: {note.origin} -->"
    if marker in current or note.text in current:
        report.left.append(f"{note.origin}: already in memory/{note.name}.md")
        return
    if not dry_run:
        (workspace / "memory").mkdir(parents=True, exist_ok=True)
        await target.append_once(
            marker, f"{marker}\n\n{note.text}\n" if current else f"{note.text}\n\n{marker}\n"
        )
    report.took.append(f"{note.origin} → memory/{note.name}.md")


def _take_skill(folder: Path, skills: Path, report: Report, dry_run: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        try:
            bundle = open_bundle(folder, Path(scratch))
            if (skills / bundle.skill.name).exists():
                raise BundleError(f"a skill {bundle.skill.name!r} is already in the workspace")
            if not dry_run:
                install(bundle, skills)
        except (BundleError, OSError, UnicodeDecodeError) as exc:
            report.left.append(f"skill {folder.name}: {exc}")
            return
    scripts = f" ({len(bundle.scripts)} scripts: review them)" if bundle.scripts else ""
    report.took.append(f"skill {bundle.skill.name} → skills/{bundle.skill.name}{scripts}")


async def _take_jobs(
    jobs: list[ImportedJob], settings: Settings, report: Report, dry_run: bool
) -> None:
    """Jobs through the job book; a dry run checks each schedule as the book would and opens no
    store (opening one makes or migrates it)."""
    await load_triggers()
    if dry_run:
        for job in jobs:
            _taken(job, report, lambda draft: _check(draft, settings.timezone))
        return
    db = await Database.open(settings.data_dir / "countbot.db")
    try:
        book = JobBook(JobStore(db), settings.timezone)
        names = {job.name for job in await book.jobs()}
        for job in jobs:
            if job.name in names:
                report.left.append(f"{job.origin}: a job named {job.name!r} exists already")
            else:
                await _taken_async(job, report, book)
    finally:
        await db.close()


def _check(draft: JobDraft, configured_zone: str | None) -> None:
    zone = draft.timezone or zone_name(configured_zone)
    parse_schedule(draft.schedule_kind, draft.schedule_value, zone, utc_now())


def _taken(job: ImportedJob, report: Report, check: Callable[[JobDraft], None]) -> None:
    try:
        check(_draft(job))
    except JobError as exc:
        report.left.append(f"{job.origin}: {exc}")
        return
    report.took.append(_took(job))


async def _taken_async(job: ImportedJob, report: Report, book: JobBook) -> None:
    try:
        await book.create(_draft(job))
    except JobError as exc:
        report.left.append(f"{job.origin}: {exc}")
        return
    report.took.append(_took(job))


def _took(job: ImportedJob) -> str:
    state = "" if job.enabled else ", switched off as it was"
    return f"{job.origin} → job {job.name!r} ({job.kind} {job.value}, to {job.delivery}{state})"


def _draft(job: ImportedJob) -> JobDraft:
    return JobDraft(
        name=job.name,
        schedule_kind=job.kind,
        schedule_value=job.value,
        prompt=job.prompt,
        delivery=Delivery.parse(job.delivery),
        timezone=job.timezone,
        enabled=job.enabled,
        created_from="import",
    )
