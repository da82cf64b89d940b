"""Persona presets: the shipped ones, overrides, clear errors, and reloading edited files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from countbot.agent.personas import PersonaError, PersonaLoader
from countbot.config.settings import PersonaSettings

SHIPPED_PERSONAS = Path(__file__).resolve().parents[2] / "personas"


@pytest.fixture
def personas(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SHIPPED_PERSONAS, tmp_path / "personas"))


async def test_every_shipped_preset_loads_with_a_personality_and_a_description() -> None:
    loader = PersonaLoader(SHIPPED_PERSONAS)
    presets = await loader.available()
    names = [preset.preset for preset in presets]
    assert {"assistant", "concise", "teacher", "companion"} <= set(names)
    assert names == sorted(names)
    for listed in presets:
        persona = await loader.load(PersonaSettings(preset=listed.preset))
        assert persona == listed
        assert persona.name and persona.language == "auto"
        assert len(persona.personality) > 50
        assert 10 < len(persona.description) < 100


async def test_default_settings_pick_the_assistant_preset() -> None:
    persona = await PersonaLoader(SHIPPED_PERSONAS).load(PersonaSettings())
    assert (persona.preset, persona.name) == ("assistant", "CountBot")


async def test_settings_override_the_preset_fields() -> None:
    settings = PersonaSettings(
        preset="teacher", name="Ada", user_address="Captain", personality="Dry wit.", language="de"
    )
    persona = await PersonaLoader(SHIPPED_PERSONAS).load(settings)
    assert (persona.name, persona.user_address, persona.personality, persona.language) == (
        "Ada",
        "Captain",
        "Dry wit.",
        "de",
    )


@pytest.mark.parametrize("preset", ["pirate", "../personas/assistant", ".hidden", ""])
async def test_unknown_preset_error_lists_the_available_ones(preset: str) -> None:
    with pytest.raises(PersonaError) as info:
        await PersonaLoader(SHIPPED_PERSONAS).load(PersonaSettings(preset=preset))
    assert f"unknown persona preset {preset!r}" in str(info.value)
    assert "assistant, companion, concise, teacher" in str(info.value)


async def test_yaml_presets_work_too(personas: Path) -> None:
    (personas / "butler.yaml").write_text(
        "name: Jeeves\nuser_address: sir\nlanguage: en\npersonality: Impeccably polite.\n"
    )
    persona = await PersonaLoader(personas).load(PersonaSettings(preset="butler"))
    assert (persona.name, persona.user_address, persona.personality, persona.language) == (
        "Jeeves",
        "sir",
        "Impeccably polite.",
        "en",
    )


async def test_preset_is_cached_and_reloaded_after_an_edit(personas: Path) -> None:
    loader = PersonaLoader(personas)
    settings = PersonaSettings(preset="concise")
    first = await loader.load(settings)
    assert await loader.load(settings) is first

    (personas / "concise.md").write_text("---\nname: Brief\n---\nShort and sharp, always.\n")
    second = await loader.load(settings)
    assert (second.name, second.personality) == ("Brief", "Short and sharp, always.")


async def test_a_broken_preset_file_is_a_clear_error(personas: Path) -> None:
    (personas / "bad.md").write_text("---\nname: [unclosed\n---\nbody\n")
    with pytest.raises(PersonaError, match=r"cannot read persona preset .*bad\.md"):
        await PersonaLoader(personas).load(PersonaSettings(preset="bad"))


async def test_the_preset_list_skips_a_broken_file_and_defaults_the_description(
    personas: Path,
) -> None:
    (personas / "bad.md").write_text("---\nname: [unclosed\n---\nbody\n")
    (personas / "plain.yaml").write_text("name: Plain\npersonality: No summary given.\n")
    presets = {preset.preset: preset for preset in await PersonaLoader(personas).available()}
    assert "bad" not in presets
    assert presets["plain"].description == ""
    assert presets["teacher"].description.startswith("Patient")
