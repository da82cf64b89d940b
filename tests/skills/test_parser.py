"""SKILL.md parsing: the frontmatter shapes other assistants' skills use, and broken files."""

from __future__ import annotations

from pathlib import Path

import pytest

from countbot.skills.parser import parse_skill

PATH = Path("/skills/tool/SKILL.md")


@pytest.mark.parametrize(
    "requires",
    [
        'metadata: {"openclaw": {"requires": {"bins": ["jq"], "env": ["TOKEN"]}}}',
        'metadata: {"nanobot": {"requires": {"bins": ["jq"], "env": ["TOKEN"]}}}',
        'metadata: {"clawdbot": {"requires": {"bins": ["jq"], "env": ["TOKEN"]}}}',
        'metadata: \'{"openclaw": {"requires": {"bins": ["jq"], "env": ["TOKEN"]}}}\'',
        "requires:\n  bins: [jq]\n  env: TOKEN",
        "metadata:\n  requires:\n    bins:\n      - jq\n    env: [TOKEN]",
    ],
)
def test_requirement_blocks_in_every_accepted_shape(requires: str) -> None:
    text = f"---\nname: jq-helper\ndescription: Query JSON.\n{requires}\n---\nUse jq.\n"
    skill = parse_skill(PATH, text, "workspace")
    assert (skill.name, skill.description, skill.body) == ("jq-helper", "Query JSON.", "Use jq.")
    assert skill.requires_bins == ("jq",)
    assert skill.requires_env == ("TOKEN",)
    assert skill.error == ""


def test_primary_env_counts_as_a_required_variable() -> None:
    meta = '{"openclaw": {"primaryEnv": "GEMINI_API_KEY", "requires": {"env": ["REGION"]}}}'
    skill = parse_skill(PATH, f"---\nname: g\nmetadata: {meta}\n---\nx", "workspace")
    assert skill.requires_env == ("REGION", "GEMINI_API_KEY")


def test_always_may_sit_at_the_top_or_in_a_vendor_block() -> None:
    top = parse_skill(PATH, "---\nname: a\nalways: true\n---\nx", "builtin")
    vendor = parse_skill(
        PATH, '---\nname: a\nmetadata: {"nanobot": {"always": true}}\n---\nx', "builtin"
    )
    plain = parse_skill(PATH, "---\nname: a\n---\nx", "builtin")
    assert (top.always, vendor.always, plain.always) == (True, True, False)


def test_without_frontmatter_the_folder_names_the_skill() -> None:
    skill = parse_skill(PATH, "# Tool\n\nJust instructions.\n", "workspace")
    assert (skill.name, skill.body, skill.error) == ("tool", "# Tool\n\nJust instructions.", "")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("---\nname: [unclosed\n---\nbody", "invalid YAML"),
        ("---\nname: x\nbody without end", "no closing"),
        ("---\n- a list\n---\nbody", "not a mapping"),
    ],
)
def test_broken_frontmatter_becomes_an_unavailable_skill(text: str, error: str) -> None:
    skill = parse_skill(PATH, text, "workspace")
    assert skill.name == "tool"
    assert not skill.available
    assert error in skill.error
