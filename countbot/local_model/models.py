"""The daemon's local model: which file `local/...` means, the embedded default, its server.

`LocalModels` keeps one child server (`LocalServer`) for the model the settings currently name;
a settings change to another file or other limits stops the old child before the new one starts,
so two models never share the machine's memory. With no model configured and the `local` extra
installed, the built-in tiny model is used when it has been pulled.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
import time
from pathlib import Path
from typing import Any

from countbot.config.settings import ModelSettings
from countbot.llm.provider_path import is_local
from countbot.local_model.catalogue import CATALOGUE, DEFAULT_MODEL, find, is_installed, model_file
from countbot.local_model.server import LocalServer, LocalServerOptions

log = logging.getLogger(__name__)

EMBEDDED_NOTICE = (
    "Running the built-in offline model (SmolLM2 135M): basic answers only, nothing leaves "
    "this machine. For better answers pick a model on the Settings page, or run "
    "`countbot models pull qwen2.5-1.5b` and set model.name to local/qwen2.5-1.5b."
)


@functools.cache
def local_extra_installed() -> bool:
    """Whether xllamacpp (the `local` extra) can be imported here."""
    return importlib.util.find_spec("xllamacpp") is not None


def models_dir(model: ModelSettings, data_dir: Path) -> Path:
    """Where pulled models live: `model.local.models_dir`, else `<data_dir>/models`."""
    return model.local.models_dir or data_dir / "models"


def embedded_default(model: ModelSettings, data_dir: Path) -> str | None:
    """`local/<tiny model>` when no model is configured and it can run here, else None."""
    if model.name.strip() or not local_extra_installed():
        return None
    entry = find(DEFAULT_MODEL)
    if entry is None or not is_installed(entry, models_dir(model, data_dir)):
        return None
    return f"local/{DEFAULT_MODEL}"


def effective_model(model: ModelSettings, data_dir: Path) -> str:
    """The model turns use: the configured one, or the embedded default ("" if neither)."""
    return model.name.strip() or embedded_default(model, data_dir) or ""


def catalogue_view(model: ModelSettings, data_dir: Path) -> dict[str, Any]:
    """The catalogue as the Settings page shows it: each model, whether it is pulled here, and
    whether it can run here (the `local` extra). Blocking (stats files): call it in a thread."""
    folder = models_dir(model, data_dir)
    models = [
        {
            "name": entry.name,
            "model_name": f"local/{entry.name}",
            "title": entry.title,
            "size": entry.size,
            "licence": entry.licence,
            "publisher": entry.publisher,
            "sha256": entry.sha256,
            "note": entry.note,
            "pulled": is_installed(entry, folder),
        }
        for entry in CATALOGUE
    ]
    return {"runnable": local_extra_installed(), "models": models}


class LocalModels:
    """Owns the child server of the current `local/` model; stops it with the daemon, and a
    server only one chat picked once it has been idle a while."""

    def __init__(self, data_dir: Path) -> None:
        self._data_dir = data_dir
        self._server: LocalServer | None = None
        self._idle_watch: asyncio.Task[None] | None = None

    @property
    def server(self) -> LocalServer | None:
        """The current child server (None before a local model was first chosen)."""
        return self._server

    async def server_for(
        self, name: str, model: ModelSettings, *, idle_stop: float = 0.0
    ) -> LocalServer:
        """The server for `local/<spec>` with the settings' limits, replacing a different one.

        `idle_stop` (seconds, 0: never) stops the child once no request used it that long: a
        model a chat picked for a while should not hold its memory for the daemon's life (the
        next request starts it again). The configured model's server stays up."""
        assert is_local(name)
        spec = name.split("/", 1)[1]
        options = LocalServerOptions(
            model=model_file(spec, models_dir(model, self._data_dir)),
            context_size=model.local.context_size,
            threads=model.local.threads,
            cache_ram_mb=model.local.cache_ram_mb,
        )
        if self._server is None or self._server.options != options:
            await self.aclose()
            self._server = LocalServer(options)
        self._watch_idle(idle_stop)
        return self._server

    def _watch_idle(self, idle_stop: float) -> None:
        """Stop the current server after `idle_stop` unused seconds (0: keep it up)."""
        if self._idle_watch is not None:
            self._idle_watch.cancel()
            self._idle_watch = None
        if idle_stop > 0 and self._server is not None:
            self._idle_watch = asyncio.create_task(_stop_when_idle(self._server, idle_stop))

    async def aclose(self) -> None:
        """Stop the child server, if one runs."""
        self._watch_idle(0)
        if self._server is not None:
            await self._server.stop()
            self._server = None


async def _stop_when_idle(server: LocalServer, idle: float) -> None:
    """Stop `server` whenever it sat unused for `idle` seconds; this runs until the pick
    changes, since the next request starts the server again."""
    while True:
        left = server.last_used + idle - time.monotonic()
        if left > 0:
            await asyncio.sleep(left)
            continue
        if await server.stop_if_idle(idle):
            log.info("stopped the local model server: unused for %g s", idle)
        await asyncio.sleep(idle)  # stopped, busy or starting: look again later
