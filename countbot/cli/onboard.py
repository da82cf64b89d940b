"""`countbot onboard`: a starter config.yaml and workspace in a folder of the user's choice."""

from __future__ import annotations

from pathlib import Path

from countbot.runtime.paths import SHIPPED_ROOT, seed_workspace


def write_starter(target: Path, *, model: str = "", api_base: str = "", force: bool = False) -> list[str]:
    """Copy the commented default config (with the model filled in) and seed a workspace."""
    target.mkdir(parents=True, exist_ok=True)
    config = target / "config.yaml"
    if config.exists() and not force:
        raise FileExistsError(f"{config} exists; pass --force to overwrite it")
    text = (SHIPPED_ROOT / "config.yaml").read_text(encoding="utf-8")
    if model:
        text = text.replace('  name: ""', f'  name: "{model}"', 1)
    if api_base:
        text = text.replace("  api_base: null", f'  api_base: "{api_base}"', 1)
    config.write_text(text, encoding="utf-8")
    created = seed_workspace(target / "data" / "workspace")
    lines = [f"wrote {config}"] + [f"created {path}" for path in created]
    if not model:
        lines.append("next: set model.name (and model.api_key) in config.yaml")
    lines.append(f"then: countbot chat --config {config} -m 'hello'")
    return lines
