"""Settings: read (secrets masked) and change the model, persona, tools, budgets, heartbeat and
data-flow policy.

A change is validated, written to config.yaml atomically by the config layer, read back, and
applied to the running daemon (`live_settings`); the answer names the changed sections that wait
for a restart, and after a model change says whether the model as saved answers a short call.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.agent.personas import PersonaError
from countbot.config.loader import ConfigError, load_settings, masked_settings, save_settings_patch
from countbot.config.problems import explained
from countbot.config.settings import PersonaSettings, Settings
from countbot.config.structs import Invalid, replaced, validate
from countbot.llm.provider_path import is_local
from countbot.local_model.models import catalogue_view, effective_model
from countbot.runtime.model_probe import ProbeFailed, ask_ok, probe_settings
from countbot.runtime.models import SettingsModelResolver, context_window
from countbot.web.api.errors import ApiError, daemon_of, json_object
from countbot.web.context import DaemonContext
from countbot.web.live_settings import apply_settings
from countbot.web.notices import push_status

EDITABLE = ("model", "persona", "tools", "budget", "heartbeat", "security")


async def get_settings(request: Request) -> JSONResponse:
    return JSONResponse(await _shown(daemon_of(request)))


async def put_settings(request: Request) -> JSONResponse:
    daemon = daemon_of(request)
    patch = await json_object(request)
    unknown = sorted(set(patch) - set(EDITABLE))
    if unknown:
        raise ApiError(400, f"only {', '.join(EDITABLE)} can be changed here, not {unknown}")
    for section, value in patch.items():
        if not isinstance(value, dict):
            raise ApiError(400, f"'{section}' must be an object")
    settings = daemon.runtime.settings
    if settings.config_path is None:
        raise ApiError(409, "the daemon was started without a config file to save to")
    _check_types(settings, patch)
    if "persona" in patch:
        await _check_persona(daemon, settings.persona, patch["persona"])
    try:
        await asyncio.to_thread(save_settings_patch, settings.config_path, patch)
        fresh = await asyncio.to_thread(load_settings, settings.config_path)
    except ConfigError as exc:
        raise ApiError(400, "; ".join(exc.problems)) from None
    restart = await apply_settings(daemon, fresh)
    push_status(daemon)  # open tabs show or hide the "no model" banner at once
    shown = await _shown(daemon)
    # What this save changed that waits for a restart, and whether the model as saved answers.
    shown["restart"] = [section for section in restart if section in patch]
    if "model" in patch:
        shown["model_check"] = await _check_model(fresh)
    return JSONResponse(shown)


async def _check_model(settings: Settings) -> dict[str, Any]:
    """One short call to the model as saved; a built-in model is left to its first answer
    (starting its server takes longer than a save should)."""
    name = await asyncio.to_thread(effective_model, settings.model, settings.data_dir)
    if not name or is_local(name):
        return {"ok": None, "text": ""}
    resolver = SettingsModelResolver(lambda: probe_settings(settings.model), settings.data_dir)
    try:
        answer = await ask_ok(resolver, name)
    except ProbeFailed as exc:
        return {"ok": False, "text": str(exc)}
    except Exception as exc:  # a provider that could not even be built: say so, keep the save
        return {"ok": False, "text": f"{name} failed: {exc}"}
    finally:
        await resolver.aclose()
    return {"ok": True, "text": f"{name} answered: {answer.done.message.text.strip()[:40]!r}"}


def _check_types(settings: Settings, patch: dict[str, dict]) -> None:
    """Strict types for what came as JSON: "4096" is no integer and "yes" no boolean here.

    The config file is YAML a person writes, read leniently; the API has exact JSON types, so a
    string where a number belongs is a client's mistake to report, not to save.
    """
    for section, change in patch.items():
        current = getattr(settings, section)
        fields = {name: getattr(current, name) for name in current.__struct_fields__}
        try:
            validate(type(current), {**fields, **change}, strict=True, loc=(section,))
        except Invalid as exc:
            raise ApiError(400, "; ".join(explained(exc))) from None


async def _check_persona(daemon: DaemonContext, current: PersonaSettings, change: dict) -> None:
    """An unknown preset would break every later turn: refuse it before anything is saved."""
    try:
        candidate = replaced(current, **change)
        await daemon.runtime.personas.load(candidate)
    except Invalid as exc:
        raise ApiError(400, "; ".join(explained(exc))) from None
    except PersonaError as exc:
        raise ApiError(400, f"persona: {exc}") from None


async def _shown(daemon: DaemonContext) -> dict[str, Any]:
    data = masked_settings(daemon.runtime.settings)
    presets = await daemon.runtime.personas.available()
    data["persona_presets"] = [{"name": p.preset, "description": p.description} for p in presets]
    # Read-only: whether exec is contained on this machine, and if not, why.
    data["sandbox"] = daemon.runtime.sandbox.status.as_dict()
    # Read-only: the window requests are fitted to, and models resting after failures.
    settings = daemon.runtime.settings
    # The built-in model when none is configured: its window, not an unknown model's default.
    model_name = await asyncio.to_thread(effective_model, settings.model, settings.data_dir)
    data["model_status"] = {
        "context_window": await context_window(settings.model, model_name),
        "cooldowns": [
            {"model": c.model, "seconds_left": round(c.seconds_left), "reason": c.reason}
            for c in daemon.runtime.models.cooldowns.current()
        ],
    }
    # Read-only: the models CountBot can run itself, and which are pulled (offered as local/NAME).
    data["local_models"] = await asyncio.to_thread(
        catalogue_view, settings.model, settings.data_dir
    )
    return data


async def probe_sandbox(request: Request) -> JSONResponse:
    """Find out again whether `exec` can run in the sandbox (bubblewrap installed or fixed since
    the daemon started), without a restart; the new status."""
    sandbox = daemon_of(request).runtime.sandbox
    status = await asyncio.to_thread(sandbox.probe)
    return JSONResponse(status.as_dict())


routes = [
    Route("/settings", get_settings, methods=["GET"]),
    Route("/settings", put_settings, methods=["PUT"]),
    Route("/settings/sandbox/probe", probe_sandbox, methods=["POST"]),
]
