"""Skills: what is installed, whether it can run, and switching one on or off.

A switch is written to `skills.disabled` in config.yaml before it takes effect, so what the
Skills page shows is what the next start of the daemon uses.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from countbot.config.loader import ConfigError
from countbot.config.settings import Settings
from countbot.config.skill_switches import save_skill_switch
from countbot.skills.skill import Skill
from countbot.web.api.errors import ApiError, daemon_of, json_object


def skill_json(skill: Skill) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "always": skill.always,
        "available": skill.available,
        "missing": list(skill.missing) or ([skill.unavailable_reason] if skill.error else []),
        "enabled": skill.enabled,
        "source": skill.source,
        "install": list(skill.install_hints),
        "user_invocable": skill.user_invocable,
        "model_invocable": skill.model_invocable,
    }


async def list_skills(request: Request) -> JSONResponse:
    catalog = await daemon_of(request).runtime.skills.catalog()
    return JSONResponse({"skills": [skill_json(skill) for skill in catalog.skills]})


async def toggle_skill(request: Request) -> JSONResponse:
    runtime = daemon_of(request).runtime
    loader = runtime.skills
    name = request.path_params["name"]
    enabled = (await json_object(request)).get("enabled")
    if not isinstance(enabled, bool):
        raise ApiError(400, "'enabled' must be true or false")
    if (await loader.catalog()).get(name) is None:
        raise ApiError(404, f"no skill {name!r}")
    async with _save_lock(request):
        await _save_disabled(runtime.settings, name, enabled)
        loader.set_enabled(name, enabled)
    skill = (await loader.catalog()).get(name)
    assert skill is not None
    return JSONResponse(skill_json(skill))


def _save_lock(request: Request) -> asyncio.Lock:
    """Each save writes the whole list, so two overlapping ones could lose a switch."""
    state = request.app.state
    if not hasattr(state, "skills_save_lock"):
        state.skills_save_lock = asyncio.Lock()
    return state.skills_save_lock


async def _save_disabled(settings: Settings, name: str, enabled: bool) -> None:
    try:
        await asyncio.to_thread(save_skill_switch, settings, name, enabled)
    except ConfigError as exc:
        raise ApiError(500, f"the switch was not saved: {'; '.join(exc.problems)}") from None


routes = [
    Route("/skills", list_skills, methods=["GET"]),
    Route("/skills/{name}", toggle_skill, methods=["PUT"]),
]
