"""`/skillname args` from the browser loads that skill for the turn; other `/words` do not."""

from __future__ import annotations

from tests.skills.formats import clawdbot_skill
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon


async def test_a_slash_skill_loads_the_skill_for_the_turn(
    daemon: Daemon, model_server: ScriptedModelServer
) -> None:
    clawdbot_skill(daemon.settings.workspace / "skills")
    model_server.script(Reply.text("Notes drafted."), Reply.text("Plain."))
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": "s", "content": "/release-notes v1.2"})
    assert (await client.until("done"))["content"] == "Notes drafted."
    await client.send({"type": "message", "session_id": "s2", "content": "/nosuchskill hi"})
    await client.until("done", 2)
    await client.close()
    loaded = model_server.requests[0]["messages"][-1]["content"]
    assert "Sign with ~RN~" in loaded and loaded.rstrip().endswith("v1.2")
    # The model was never told about this skill (disable-model-invocation).
    assert "release-notes" not in model_server.requests[0]["messages"][0]["content"]
    plain = model_server.requests[1]["messages"][-1]["content"]
    assert "~RN~" not in plain and plain.rstrip().endswith("/nosuchskill hi")
