"""Which models a chat may pick for itself: never an arbitrary string from the browser.

The configured key (and `api_base`) goes with whatever model a turn calls, so a chat may pick
only what the owner already configured (`model.name`, `model.fallbacks`, `model.economy`) or
pulled to run here (`local/NAME`); anything else would send the key to a provider the owner never
chose.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from countbot.config.settings import ModelSettings
from countbot.local_model.models import catalogue_view, effective_model


def _choosable(settings: ModelSettings, data_dir: Path) -> list[str]:
    names = [effective_model(settings, data_dir), *settings.fallbacks, settings.economy]
    view = catalogue_view(settings, data_dir)
    if view["runnable"]:
        names += [entry["model_name"] for entry in view["models"] if entry["pulled"]]
    return [name for i, name in enumerate(names) if name and name not in names[:i]]


async def choosable_models(settings: ModelSettings, data_dir: Path) -> list[str]:
    """The configured model first, then its fallbacks and the economy model, then the pulled
    local models.

    In a thread: the catalogue view stats the model files.
    """
    return await asyncio.to_thread(_choosable, settings, data_dir)
