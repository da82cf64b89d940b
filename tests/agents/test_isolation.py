"""One agent's turn cannot reach another agent's chats or files, by any tool."""

from __future__ import annotations

import json

from tests.agents.conftest import GRANDMA, OWNER, Agents, canaries_in, canary
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


async def test_an_approval_given_to_one_agent_never_lets_another_act(
    asking_agents: Agents,
) -> None:
    agents = asking_agents
    write = Reply.tool_calls(("exec", json.dumps({"command": "echo done > proof.txt"})))
    agents.model.script(write, Reply.text("main wrote"), write, Reply.text("family tried"))
    client = await agents.daemon.ws()
    try:
        await client.send({"type": "message", "session_id": "as-main", "content": "write it"})
        asked = await client.until("approval_request")
        await client.send({"type": "approval_response", "id": asked["id"], "decision": "always"})
        await client.until("done")
        frame = {"type": "message", "session_id": "as-family", "content": "write it"}
        await client.send({**frame, "agent": "family"})
        # Asked again: main's "Always allow" is main's alone.
        asked = await client.until("approval_request", 2)
        await client.send({"type": "approval_response", "id": asked["id"], "decision": "deny"})
        await client.until("done", 2)
    finally:
        await client.close()
    assert (agents.workspaces["main"] / "proof.txt").exists()
    assert not (agents.workspaces["family"] / "proof.txt").exists()
    rules = await agents.daemon.context.runtime.approvals.rules.list()
    assert [(rule["agent"], rule["tool"]) for rule in rules] == [("main", "exec")]


async def test_a_file_sent_to_an_agent_is_kept_in_its_own_house(agents: Agents) -> None:
    secret = canary("family", "file") + " in the recipe"
    agents.telegram.user_sends_document(
        secret.encode(), "recipe.bin", "application/octet-stream", user=FakeUser(GRANDMA)
    )
    assert (await agents.telegram.wait_for_messages(GRANDMA)) == ["answered by family"]
    async with agents.daemon.http() as http:
        query = {"name": "letter.bin", "kind": "file", "agent": "family"}
        uploaded = await http.post("/api/media", params=query, content=secret.encode())
        assert uploaded.status_code == 200
        wrong = await http.post("/api/media", params={**query, "agent": "nobody"}, content=b"x")
        assert wrong.status_code == 404
    saved = sorted(path.name for path in (agents.workspaces["family"] / "media").iterdir())
    assert [name.split("-", 2)[-1] for name in saved] == [
        "telegram-1-0-recipe.bin",
        "web-letter.bin",
    ]
    # Nothing of it in main's house, where main's tools could read it.
    assert not (agents.workspaces["main"] / "media").exists()
