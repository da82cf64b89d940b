"""One agent's turn cannot reach another agent's chats or files, by any tool."""

from __future__ import annotations

import json

from tests.agents.conftest import GRANDMA, OWNER, Agents, canaries_in
from tests.channels.fake_telegram import FakeUser
from tests.support.scripted_model import Reply


def _tool_results(agents: Agents) -> list[str]:
    """The tool results the model was shown, in order."""
    return [
        str(message.get("content"))
        for body in agents.model.requests
        for message in body["messages"]
        if message.get("role") == "tool"
    ]


async def test_message_to_another_agents_chat_is_refused(agents: Agents) -> None:
    call = {"channel": "telegram", "chat_id": str(OWNER), "text": "hello from family"}
    agents.model.script(Reply.tool_calls(("message", json.dumps(call))), Reply.text("tried"))
    agents.telegram.user_says("tell the owner hello", user=FakeUser(GRANDMA))
    assert (await agents.telegram.wait_for_messages(GRANDMA)) == ["tried"]
    [result] = _tool_results(agents)
    assert "bound to another agent" in result
    assert agents.telegram.chat_messages(OWNER) == []


async def test_a_path_into_another_agents_workspace_is_refused(agents: Agents) -> None:
    main_notes = agents.workspaces["main"] / "notes.txt"
    calls = [
        ("read_file", json.dumps({"path": str(main_notes)})),
        ("read_file", json.dumps({"path": "../workspace/notes.txt"})),
        ("exec", json.dumps({"command": f"cat {main_notes}"})),
    ]
    agents.model.script(Reply.tool_calls(*calls), Reply.text("looked"))
    agents.telegram.user_says("read the owner's notes", user=FakeUser(GRANDMA))
    assert (await agents.telegram.wait_for_messages(GRANDMA)) == ["looked"]
    results = _tool_results(agents)
    assert len(results) == 3
    assert all("outside the workspace" in result for result in results[:2])
    assert "No such file" in results[2]  # hidden in the sandbox: not there at all
    for request in agents.requests():
        assert {agent for agent, _ in canaries_in(request)} <= {"family"}
