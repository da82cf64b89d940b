"""SkillsLoader: the shipped skills, overrides, availability, broken files and the cache."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from countbot.skills.loader import SkillsLoader

SHIPPED_SKILLS = Path(__file__).resolve().parents[2] / "skills"


def write_skill(root: Path, folder: str, frontmatter: str, body: str = "Do the thing.") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}\n---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    builtin, workspace = tmp_path / "builtin", tmp_path / "workspace" / "skills"
    builtin.mkdir()
    workspace.mkdir(parents=True)
    return builtin, workspace


async def test_shipped_skills_all_load_and_memory_keeper_is_always_on(tmp_path: Path) -> None:
    catalog = await SkillsLoader(SHIPPED_SKILLS, tmp_path / "none").catalog()
    names = {skill.name for skill in catalog.skills}
    assert {"memory-keeper", "summarize", "weather", "skill-creator"} <= names
    assert all(skill.error == "" and skill.description for skill in catalog.skills)
    assert all(skill.source == "builtin" for skill in catalog.skills)
    assert [skill.name for skill in catalog.always_on()] == ["memory-keeper"]
    assert catalog.get("weather").requires_bins == ("curl",)  # type: ignore[union-attr]


async def test_workspace_skill_overrides_builtin_by_name(dirs: tuple[Path, Path]) -> None:
    builtin, workspace = dirs
    write_skill(builtin, "notes", "name: notes\ndescription: built-in notes", "old way")
    write_skill(workspace, "my-notes", "name: notes\ndescription: my notes", "my way")
    write_skill(builtin, "other", "name: other\ndescription: untouched")
    catalog = await SkillsLoader(builtin, workspace).catalog()
    notes = catalog.get("notes")
    assert notes is not None
    assert (notes.source, notes.description, notes.body) == ("workspace", "my notes", "my way")
    assert [s.name for s in catalog.skills] == ["notes", "other"]


async def test_unavailable_skill_is_listed_with_what_is_missing(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    builtin, workspace = dirs
    monkeypatch.delenv("COUNTBOT_TEST_TOKEN", raising=False)
    write_skill(
        workspace,
        "needy",
        "name: needy\ndescription: needs things\n"
        'metadata: {"openclaw": {"requires": {"bins": ["countbot-no-such-bin"], '
        '"env": ["COUNTBOT_TEST_TOKEN"]}}}',
    )
    catalog = await SkillsLoader(builtin, workspace).catalog()
    needy = catalog.get("needy")
    assert needy is not None and not needy.available
    assert needy.missing == ("binary countbot-no-such-bin", "env var COUNTBOT_TEST_TOKEN")
    assert catalog.summary_lines() == [
        "- needy: needs things [unavailable: needs binary countbot-no-such-bin, "
        "env var COUNTBOT_TEST_TOKEN]"
    ]


async def test_installing_the_missing_binary_makes_the_skill_available(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builtin, workspace = dirs
    write_skill(workspace, "tool", "name: tool\nrequires:\n  bins: [countbot-fake-tool]")
    loader = SkillsLoader(builtin, workspace)
    assert not (await loader.catalog()).get("tool").available  # type: ignore[union-attr]

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "countbot-fake-tool"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert (await loader.catalog()).get("tool").available  # type: ignore[union-attr]


async def test_a_binary_added_to_or_removed_from_a_folder_on_path_is_seen_at_once(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What was found on PATH is kept only while its folders are unchanged (and not changed
    just now, within the same tick of the file system's clock)."""
    builtin, workspace = dirs
    write_skill(workspace, "tool", "name: tool\nrequires:\n  bins: [countbot-fake-tool]")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    loader = SkillsLoader(builtin, workspace)
    assert not (await loader.catalog()).get("tool").available  # type: ignore[union-attr]
    assert not (await loader.catalog()).get("tool").available  # type: ignore[union-attr]

    fake = bin_dir / "countbot-fake-tool"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert (await loader.catalog()).get("tool").available  # type: ignore[union-attr]
    fake.unlink()
    assert not (await loader.catalog()).get("tool").available  # type: ignore[union-attr]


async def test_a_binary_made_executable_in_place_is_seen_at_the_next_look(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`chmod +x` on a file already in a PATH folder moves no folder's mtime: the file's own
    change is what makes the skill available, without a restart."""
    builtin, workspace = dirs
    write_skill(workspace, "tool", "name: tool\nrequires:\n  bins: [countbot-fake-tool]")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "countbot-fake-tool"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o644)
    old = time.time() - 60  # the folder changed long ago: its mtime is trusted
    os.utime(bin_dir, (old, old))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    loader = SkillsLoader(builtin, workspace)
    assert not (await loader.catalog()).get("tool").available  # type: ignore[union-attr]
    assert not (await loader.catalog()).get("tool").available  # type: ignore[union-attr]

    before = bin_dir.stat().st_mtime_ns
    fake.chmod(0o755)
    assert bin_dir.stat().st_mtime_ns == before  # nothing moved but the file's ctime
    assert (await loader.catalog()).get("tool").available  # type: ignore[union-attr]


async def test_broken_skill_file_is_reported_and_the_rest_still_load(
    dirs: tuple[Path, Path],
) -> None:
    builtin, workspace = dirs
    (workspace / "broken").mkdir()
    (workspace / "broken" / "SKILL.md").write_text("---\nname: [oops\n---\nbody\n")
    (workspace / "binary").mkdir()
    (workspace / "binary" / "SKILL.md").write_bytes(b"\xff\xfe\x00bad")
    write_skill(workspace, "fine", "name: fine\ndescription: works")
    catalog = await SkillsLoader(builtin, workspace).catalog()
    broken, binary = catalog.get("broken"), catalog.get("binary")
    assert broken is not None and not broken.available and "invalid YAML" in broken.error
    assert binary is not None and not binary.available and "cannot read" in binary.error
    assert catalog.get("fine").available  # type: ignore[union-attr]
    assert any(
        line.startswith("- broken:") and "broken SKILL.md" in line
        for line in catalog.summary_lines()
    )


async def test_catalog_is_cached_until_a_skill_file_changes(dirs: tuple[Path, Path]) -> None:
    builtin, workspace = dirs
    path = write_skill(workspace, "a", "name: a\ndescription: first")
    loader = SkillsLoader(builtin, workspace)
    first = await loader.catalog()
    assert await loader.catalog() is first

    path.write_text("---\nname: a\ndescription: second version\n---\nbody\n")
    second = await loader.catalog()
    assert second is not first
    assert second.get("a").description == "second version"  # type: ignore[union-attr]

    write_skill(builtin, "b", "name: b\ndescription: new")
    third = await loader.catalog()
    assert [s.name for s in third.skills] == ["a", "b"]
    assert await loader.catalog() is third


async def test_disabled_skills_stay_listed_but_out_of_the_prompt(dirs: tuple[Path, Path]) -> None:
    builtin, workspace = dirs
    write_skill(builtin, "rules", "name: rules\ndescription: r\nalways: true")
    write_skill(builtin, "extra", "name: extra\ndescription: e")
    loader = SkillsLoader(builtin, workspace, disabled=["extra"])
    catalog = await loader.catalog()
    assert [s.name for s in catalog.always_on()] == ["rules"]
    assert catalog.summary_lines() == []  # rules is loaded in full, extra is off
    assert catalog.get("extra").enabled is False  # type: ignore[union-attr]

    loader.set_enabled("rules", False)
    loader.set_enabled("extra", True)
    catalog = await loader.catalog()
    assert catalog.always_on() == []
    assert catalog.summary_lines() == ["- extra: e"]


async def test_env_names_are_what_enabled_skills_declare(dirs: tuple[Path, Path]) -> None:
    builtin, workspace = dirs
    write_skill(builtin, "maps", "name: maps\nrequires:\n  env: [MAPS_KEY, REGION]")
    write_skill(
        workspace, "mail", 'name: mail\nmetadata: {"openclaw": {"primaryEnv": "MAIL_TOKEN"}}'
    )
    write_skill(workspace, "off", "name: off\nrequires:\n  env: [OFF_SECRET, REGION]")
    loader = SkillsLoader(builtin, workspace, disabled=["off"])
    assert sorted(await loader.env_names()) == ["MAIL_TOKEN", "MAPS_KEY", "REGION"]


async def test_no_builtin_dir_and_missing_workspace_dir(tmp_path: Path) -> None:
    catalog = await SkillsLoader(None, tmp_path / "missing").catalog()
    assert catalog.skills == ()
    assert catalog.summary_lines() == []
