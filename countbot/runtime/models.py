"""Turns the model settings into a provider for each turn, rebuilt only when settings change."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from countbot.agent.model_choice import ModelChoice, ModelNotConfiguredError
from countbot.config.settings import ModelSettings
from countbot.config.structs import fingerprint, replaced
from countbot.llm.cooldown import Cooldowns
from countbot.llm.model_info import fetch_model_info
from countbot.llm.provider_path import is_local
from countbot.local_model.models import LocalModels, effective_model
from countbot.runtime.model_choices import choosable_models

if TYPE_CHECKING:
    from countbot.llm.retrying_provider import RetryingProvider

log = logging.getLogger(__name__)


class SettingsModelResolver:
    """Resolves the current `ModelSettings` (read through `current`) into a `ModelChoice`: the
    agent's `ModelResolver` port, as the daemon fills it.

    Reading the settings on every turn is what lets the settings page switch model without a
    restart; the provider object is cached so an unchanged configuration costs nothing.
    """

    def __init__(self, current: Callable[[], ModelSettings], data_dir: Path) -> None:
        self._current = current
        self._data_dir = data_dir
        self.local = LocalModels(data_dir)
        self._cached: tuple[str, ModelChoice] | None = None
        self._provider: RetryingProvider | None = None
        # Outlives providers rebuilt by a settings change: a model that is down stays skipped.
        self.cooldowns = Cooldowns()
        self._resolving: asyncio.Task[ModelChoice] | None = None
        self._warming: asyncio.Task[None] | None = None
        self._providers: ModuleType | None = None

    def prepare(self) -> None:
        """Resolve the configured model and let its provider prepare its first call (the HTTP
        client: httpx's import and the TLS context) in the background, from now on.

        For a one-shot chat, which calls the model for sure: this overlaps with the opening of
        its store and the building of its request; and for a daemon whose first chat client
        has connected (`Runtime.prepare_turns`), while its user types.
        """
        self._resolving = asyncio.ensure_future(self._resolve())
        self._resolving.add_done_callback(self._warm)

    def _warm(self, resolving: asyncio.Task[ModelChoice]) -> None:
        if self._provider is not None and not resolving.cancelled() and not resolving.exception():
            self._warming = asyncio.ensure_future(self._provider.prepare())

    async def __call__(self, model: str | None = None) -> ModelChoice:
        """The choice for a turn; `model` is a chat's pick among `choosable_models`, resolved
        with the same key, endpoint and fallbacks as the configured model."""
        if self._resolving is not None:  # one provider, not two built side by side
            resolving, self._resolving = self._resolving, None
            with contextlib.suppress(Exception):  # the turn's own call says what went wrong
                await resolving
        return await self._resolve(model)

    async def _resolve(self, model: str | None = None) -> ModelChoice:
        settings = self._current()
        name = effective_model(settings, self._data_dir)  # the embedded default may appear
        picked = bool(model) and model != name  # a chat's own pick, not the configured model
        if picked:
            settings, name = await self._override(settings, model, name)
        if not name:
            raise ModelNotConfiguredError
        key = name + fingerprint(settings)
        if self._cached is not None and self._cached[0] == key:
            return self._cached[1]
        # A chat that picks a remote model leaves the local server to the chats that use it; a
        # settings change away from the local model stops it (`release_unused`).
        local = None
        if is_local(name):
            idle_stop = settings.local.idle_stop if picked else 0.0
            local = await self.local.server_for(name, settings, idle_stop=idle_stop)
        providers = self._providers or await self._load_providers()
        window = await context_window(settings, name)
        choice, provider = await providers.model_choice(
            settings, name, window, self.cooldowns, local
        )
        # A provider replaced by a settings change is left to the garbage collector: a turn may
        # still be streaming from it.
        self._cached = (key, choice)
        self._provider = provider
        return choice

    async def _load_providers(self) -> ModuleType:
        """The providers' module, imported in a worker thread at the first resolution, so an
        idle daemon holds none of their modules and the event loop keeps serving meanwhile."""
        self._providers = await asyncio.to_thread(_import_providers)
        return self._providers

    async def _override(
        self, settings: ModelSettings, model: str, name: str
    ) -> tuple[ModelSettings, str]:
        """Settings for a chat's pick: the configured fallbacks follow it (not itself twice);
        the window and vision overrides describe the configured model, so they are dropped.

        A pick that is no longer choosable (the settings changed since) gives way to the
        configured model: the key never goes to a model the owner did not configure.
        """
        if model not in await choosable_models(settings, self._data_dir):
            log.warning("a chat's model %r is no longer configured; using %r", model, name)
            return settings, name
        fallbacks = [f for f in settings.fallbacks if f != model]
        update = {"name": model, "fallbacks": fallbacks, "context_window": None, "vision": None}
        return replaced(settings, **update), model

    async def release_unused(self) -> None:
        """Stop the local model's child server when the settings no longer choose it, so the
        memory it holds is freed at the choice, not at the next turn."""
        if not is_local(effective_model(self._current(), self._data_dir)):
            await self.local.aclose()

    async def aclose(self) -> None:
        """Close the current provider's kept-alive connections and stop a local model's server
        (at shutdown)."""
        for task in (self._resolving, self._warming):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        utility = self._cached[1].utility if self._cached is not None else None
        for provider in (self._provider, utility):
            if provider is not None:
                await provider.aclose()  # type: ignore[attr-defined]  # a RetryingProvider
        self._provider = None
        self._cached = None
        await self.local.aclose()


def _import_providers() -> ModuleType:
    """`runtime/model_providers.py`, which makes the providers (blocking: a worker thread)."""
    from countbot.runtime import model_providers

    return model_providers


async def context_window(settings: ModelSettings, name: str = "") -> int:
    """The window requests are fitted to: the smallest of the model's and its fallbacks'.

    `model.context_window` overrides the primary model's (`name`, default `model.name`); a local
    model's is its server's context size; the others come from the model map (or its conservative
    default), so a failover to a smaller model never gets an overflowing request.
    """
    name = name or settings.name
    if settings.context_window:
        primary = settings.context_window
    elif is_local(name):
        primary = settings.local.context_size
    else:
        primary = (await fetch_model_info(name)).context_window
    windows = [primary]
    for fallback in settings.fallbacks:
        windows.append((await fetch_model_info(fallback)).context_window)
    return min(windows)
