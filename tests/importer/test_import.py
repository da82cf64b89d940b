"""`countbot import --from openclaw|hermes|nanobot PATH` on folders laid out as each assistant
keeps them (tests/importer/layouts/, written from their public sources), as a user runs it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from countbot.config.loader import load_settings
from countbot.scheduler.book import JobBook
from countbot.store.database import Database
from countbot.store.jobs import JobStore
from tests.cli.process import countbot

LAYOUTS = Path(__file__).with_name("layouts")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "config.yaml"
    path.parent.mkdir()
    data = {"workspace": "data/workspace", "data_dir": "data", "timezone": "UTC"}
    path.write_text(yaml.safe_dump(data))
    return path


async def _jobs(config: Path) -> dict[str, tuple[str, str, bool]]:
    settings = load_settings(config)
    db = await Database.open(settings.data_dir / "countbot.db")
    try:
        views = await JobBook(JobStore(db), "UTC").jobs()
    finally:
        await db.close()
    return {job.name: (job.schedule.value, str(job.delivery), job.enabled) for job in views}


def _files(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): path.read_text(errors="replace")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


async def test_a_dry_run_reports_and_changes_nothing(config: Path) -> None:
    status, out, err = await countbot(
        "import", "--from", "openclaw", str(LAYOUTS / "openclaw"), "--dry-run", config=config
    )
    assert status == 0, err
    assert "Would take from OpenClaw" in out
    assert "workspace/SOUL.md → AGENTS.md" in out and "skill weather" in out
    assert "job 'Morning brief'" in out and "to telegram:123456" in out
    assert "openclaw.json: settings and keys" in out
    workspace = config.parent / "data" / "workspace"
    assert _files(workspace) == {}
    assert not (config.parent / "data" / "countbot.db").exists()


async def test_openclaw_persona_memory_skills_and_jobs_come_in(config: Path) -> None:
    source = LAYOUTS / "openclaw"
    status, out, err = await countbot("import", "--from", "openclaw", str(source), config=config)
    assert status == 0, err
    workspace = config.parent / "data" / "workspace"
    agents = (workspace / "AGENTS.md").read_text()
    assert "Be genuinely helpful, not performatively helpful." in agents
    assert "**Name:** Clawd" in agents
    assert "Ada prefers tea over coffee." in (workspace / "MEMORY.md").read_text()
    assert "Timezone: Europe/Berlin" in (workspace / "USER.md").read_text()
    assert "Booked the dentist" in (workspace / "memory" / "2026-11-20.md").read_text()
    assert (workspace / "skills" / "weather" / "SKILL.md").is_file()
    assert not (workspace / "TOOLS.md").exists()
    jobs = await _jobs(config)
    assert jobs["Morning brief"] == ("0 7 * * *", "telegram:123456", True)
    # WhatsApp is no CountBot channel: its answers stay in the web UI; off as it was.
    assert jobs["Stretch"] == ("3600", "web", False)
    assert "Wake main" not in jobs
    assert "a system event for OpenClaw's main session" in out
    assert "conversation transcripts are not imported" in out
    # Nothing secret came along.
    assert "sk-ant-fixture" not in "".join(_files(config.parent).values())

    # A second import takes nothing twice.
    before = _files(workspace)
    status, out, err = await countbot("import", "--from", "openclaw", str(source), config=config)
    assert status == 0, err
    assert _files(workspace) == before
    assert len(await _jobs(config)) == 2
    assert "already imported" in out and "exists already" in out


async def test_hermes_memory_entries_become_notes_and_nested_skills_come_in(config: Path) -> None:
    status, out, err = await countbot(
        "import", "--from", "hermes", str(LAYOUTS / "hermes"), config=config
    )
    assert status == 0, err
    workspace = config.parent / "data" / "workspace"
    memory = (workspace / "MEMORY.md").read_text()
    assert "- Ada lives in Berlin." in memory
    assert "- Ada's cat is called Turing.\n  She is 4 years old." in memory
    assert "§" not in memory
    assert "- Works as a nurse." in (workspace / "USER.md").read_text()
    assert "calm and precise assistant" in (workspace / "AGENTS.md").read_text()
    assert (workspace / "skills" / "todo" / "SKILL.md").is_file()
    jobs = await _jobs(config)
    assert jobs["Water plants"] == ("7200", "telegram:777", True)
    assert jobs["Weekly review"] == ("0 18 * * 5", "web", True)
    assert ".env: keys and tokens are never imported" in out


async def test_nanobot_files_come_in_and_a_broken_job_is_reported(
    config: Path, tmp_path: Path
) -> None:
    source = tmp_path / "nanobot"
    shutil.copytree(LAYOUTS / "nanobot", source)
    # A skill of the same name the owner already has is left as it is.
    mine = config.parent / "data" / "workspace" / "skills" / "github"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("---\nname: github\ndescription: mine\n---\nMine.\n")
    status, out, err = await countbot("import", "--from", "nanobot", str(source), config=config)
    assert status == 0, err
    workspace = config.parent / "data" / "workspace"
    assert "Always answer in English." in (workspace / "AGENTS.md").read_text()
    assert "I am nanobot" in (workspace / "AGENTS.md").read_text()
    assert "Check the weather every morning." in (workspace / "HEARTBEAT.md").read_text()
    assert "Project Falcon ships in March." in (workspace / "MEMORY.md").read_text()
    assert "Falcon budget" in (workspace / "memory" / "HISTORY.md").read_text()
    assert (mine / "SKILL.md").read_text().endswith("Mine.\n")
    assert "skill github: a skill 'github' is already in the workspace" in out
    jobs = await _jobs(config)
    assert jobs == {"Standup": ("0 9 * * 1-5", "telegram:42", True)}
    assert "(Bad)" in out and "61" in out


async def test_a_folder_that_is_no_assistant_is_refused(config: Path, tmp_path: Path) -> None:
    status, _, err = await countbot("import", "--from", "hermes", str(tmp_path), config=config)
    assert status == 1
    assert "holds nothing Hermes keeps" in err
