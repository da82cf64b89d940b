"""Skills: what is installed, whether it can run, and switching one on or off."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

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
    }


async def list_skills(request: Request) -> JSONResponse:
    catalog = await daemon_of(request).runtime.skills.catalog()
    return JSONResponse({"skills": [skill_json(skill) for skill in catalog.skills]})


async def toggle_skill(request: Request) -> JSONResponse:
    loader = daemon_of(request).runtime.skills
    name = request.path_params["name"]
    enabled = (await json_object(request)).get("enabled")
    if not isinstance(enabled, bool):
        raise ApiError(400, "'enabled' must be true or false")
    if (await loader.catalog()).get(name) is None:
        raise ApiError(404, f"no skill {name!r}")
    loader.set_enabled(name, enabled)
    skill = (await loader.catalog()).get(name)
    assert skill is not None
    return JSONResponse(skill_json(skill))


routes = [
    Route("/skills", list_skills, methods=["GET"]),
    Route("/skills/{name}", toggle_skill, methods=["PUT"]),
]
