"""`countbot onboard`: a starter config.yaml and workspace in a folder of the user's choice."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from countbot.config.instance import EXAMPLE_CONFIG
from countbot.config.loader import save_settings_patch
from countbot.runtime.paths import seed_workspace

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def write_starter(
    target: Path,
    *,
    model: str = "",
    api_base: str = "",
    api_key_env: str = "",
    force: bool = False,
) -> list[str]:
    """Copy the commented default config (with the model filled in) and seed a workspace.

    `api_key_env` writes `model.api_key: ${NAME}`: the key itself stays out of the file.
    """
    if api_key_env and not ENV_NAME.fullmatch(api_key_env):
        raise ValueError(f"--api-key-env {api_key_env!r} is not an environment variable name")
    target.mkdir(parents=True, exist_ok=True)
    config = target / "config.yaml"
    if config.exists() and not force:
        raise FileExistsError(f"{config} exists; pass --force to overwrite it")
    shutil.copyfile(EXAMPLE_CONFIG, config)
    key_ref = f"${{{api_key_env}}}" if api_key_env else ""
    given = (("name", model), ("api_base", api_base), ("api_key", key_ref))
    model_patch = {k: v for k, v in given if v}
    if model_patch:
        # The variable need not be set yet: the lines below say to set it before starting.
        save_settings_patch(config, {"model": model_patch}, references=True, need_secrets=False)
    created = seed_workspace(target / "data" / "workspace")
    lines = [f"wrote {config}"] + [f"created {path}" for path in created]
    if not model:
        lines.append("next: set model.name in config.yaml (or pass --model)")
    if api_key_env:
        lines.append(
            f"api key: config.yaml reads it from ${api_key_env}; set it before starting "
            f"CountBot, e.g. export {api_key_env}=sk-..."
        )
    else:
        lines.append(
            "api key: none written. Hosted models need one: rerun with --api-key-env NAME to "
            "read it from an environment variable, or set model.api_key in config.yaml "
            "(local servers such as Ollama or llama.cpp need none)"
        )
    lines.append(f"then: countbot chat --config {config} -m 'hello'")
    return lines
