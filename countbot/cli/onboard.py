"""`countbot onboard`: a starter config.yaml and workspace in a folder of the user's choice."""

from __future__ import annotations

import shutil
from pathlib import Path

from countbot.config.loader import SHIPPED_ROOT, save_settings_patch
from countbot.runtime.paths import seed_workspace


def write_starter(
    target: Path, *, model: str = "", api_base: str = "", force: bool = False
) -> list[str]:
    """Copy the commented default config (with the model filled in) and seed a workspace."""
    target.mkdir(parents=True, exist_ok=True)
    config = target / "config.yaml"
    if config.exists() and not force:
        raise FileExistsError(f"{config} exists; pass --force to overwrite it")
    shutil.copyfile(SHIPPED_ROOT / "config.yaml", config)
    model_patch = {k: v for k, v in (("name", model), ("api_base", api_base)) if v}
    if model_patch:
        save_settings_patch(config, {"model": model_patch})
    created = seed_workspace(target / "data" / "workspace")
    lines = [f"wrote {config}"] + [f"created {path}" for path in created]
    if not model:
        lines.append("next: set model.name (and model.api_key) in config.yaml")
    lines.append(f"then: countbot chat --config {config} -m 'hello'")
    return lines
