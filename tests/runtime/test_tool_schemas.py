"""Every tool the daemon registers has a valid JSON schema: the registry checks a schema only at
a tool's first call (jsonschema is not imported at start-up), so a broken one is caught here."""

from __future__ import annotations

from pathlib import Path

from jsonschema.validators import validator_for

from countbot.browser.feature import BrowserFeature
from countbot.runtime.assembly import open_runtime
from countbot.scheduler.assembly import JobsFeature
from countbot.subagents.feature import SubagentsFeature
from tests.support.scripted_model import ScriptedModelServer
from tests.support.settings import make_settings


async def test_every_tool_of_the_daemon_has_a_valid_schema(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    runtime = await open_runtime(
        settings, features=[SubagentsFeature(), JobsFeature(), BrowserFeature()]
    )
    try:
        names = runtime.tools.names()
        for name in names:
            schema = runtime.tools.get(name).parameters  # type: ignore[union-attr]
            validator_for(schema).check_schema(schema)  # raises SchemaError
    finally:
        await runtime.close()
    assert {"read_file", "exec", "web_fetch", "memory_search", "cron", "spawn", "browser"} <= set(
        names
    )
