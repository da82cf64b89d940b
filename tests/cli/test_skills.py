"""`countbot skills install|list|remove|enable|disable` on skills in other assistants' formats."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from countbot.cli import main
from countbot.config.loader import load_settings
from tests.skills.formats import clawdbot_skill, nanobot_skill, openclaw_skill


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    data = {"workspace": "ws", "data_dir": "data", "skills": {"disabled": []}}
    path.write_text("# mine\n" + yaml.safe_dump(data), encoding="utf-8")
    return path


def run(config: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, ["skills", *args, "--config", str(config)], input=input)


def zip_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            out.write(path, prefix + str(path.relative_to(folder.parent)))
    return archive


def test_install_from_a_folder_shows_the_contents_and_asks(tmp_path: Path, config: Path) -> None:
    source = openclaw_skill(tmp_path / "downloads")
    script = source / "scripts" / "sort.sh"
    script.parent.mkdir()
    marker = tmp_path / "ran-it"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    refused = run(config, "install", str(source), input="n\n")
    assert refused.exit_code == 1
    assert "scripts (the assistant may run them in the sandbox): scripts/sort.sh" in refused.output
    assert "env var PAPERS_API_KEY (passed to its commands)" in refused.output
    assert "install hints (not run): Install poppler" in refused.output
    assert "Sort the papers in papers/ by topic." in refused.output
    assert not (tmp_path / "ws" / "skills" / "paper-shelf").exists()
    installed = run(config, "install", str(source), input="y\n")
    assert installed.exit_code == 0, installed.output
    copied = tmp_path / "ws" / "skills" / "paper-shelf"
    assert (copied / "SKILL.md").is_file() and os.access(copied / "scripts" / "sort.sh", os.X_OK)
    assert not marker.exists()  # shown and copied, never run
    again = run(config, "install", str(source), "--yes")
    assert again.exit_code == 2 and "already installed" in again.output


def test_install_from_a_zip_and_a_skill_file(tmp_path: Path, config: Path) -> None:
    archive = zip_folder(nanobot_skill(tmp_path / "src"), tmp_path / "plant.zip")
    assert run(config, "install", str(archive), "--yes").exit_code == 0
    skill_file = zip_folder(clawdbot_skill(tmp_path / "src2"), tmp_path / "notes.skill")
    assert run(config, "install", str(skill_file), "--yes").exit_code == 0
    names = sorted(p.name for p in (tmp_path / "ws" / "skills").iterdir())
    assert names == ["plant-care", "release-notes"]


def test_zip_slip_and_symlinks_are_refused(tmp_path: Path, config: Path) -> None:
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as out:
        out.writestr("SKILL.md", "---\nname: evil\n---\nhi\n")
        out.writestr("../../outside.txt", "gotcha")
    result = run(config, "install", str(evil), "--yes")
    assert result.exit_code == 2 and "points outside it" in result.output
    assert not (tmp_path / "outside.txt").exists()

    linked = tmp_path / "linked.zip"
    with zipfile.ZipFile(linked, "w") as out:
        out.writestr("SKILL.md", "---\nname: linked\n---\nhi\n")
        info = zipfile.ZipInfo("secret")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        out.writestr(info, "/etc/passwd")
    result = run(config, "install", str(linked), "--yes")
    assert result.exit_code == 2 and "is a symlink" in result.output

    folder = openclaw_skill(tmp_path / "withlink")
    (folder / "key").symlink_to(Path.home() / ".ssh" / "id_rsa")
    result = run(config, "install", str(folder), "--yes")
    assert result.exit_code == 2 and "symlink" in result.output
    assert not (tmp_path / "ws" / "skills").exists() or not any(
        (tmp_path / "ws" / "skills").iterdir()
    )


def test_list_enable_disable_and_remove(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PLANT_TOKEN", raising=False)
    run(config, "install", str(nanobot_skill(tmp_path / "src")), "--yes")
    listed = run(config, "list")
    assert "plant-care (workspace, on, unavailable: needs binary no-such-watering-cli" in (
        listed.output
    )
    assert "to install: pip: watering-cli" in listed.output
    assert run(config, "disable", "plant-care").exit_code == 0
    assert load_settings(config).skills.disabled == ["plant-care"]
    assert config.read_text().startswith("# mine\n")
    assert "plant-care (workspace, off" in run(config, "list").output
    assert run(config, "enable", "plant-care").exit_code == 0
    assert load_settings(config).skills.disabled == []
    assert run(config, "disable", "nope").exit_code == 2
    assert run(config, "remove", "weather", "--yes").exit_code == 2  # built-in: disable it
    assert run(config, "remove", "plant-care", "--yes").exit_code == 0
    assert not (tmp_path / "ws" / "skills" / "plant-care").exists()
