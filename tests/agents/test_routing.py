"""Messages reach the agent their bindings name, in one real daemon, and nothing else."""

from __future__ import annotations

from tests.agents.conftest import (
    CHILD,
    GRANDMA,
    OWNER,
    STRANGER_IN_OLD,
    WORK_GROUP,
    Agents,
    canaries_in,
)
from tests.channels.fake_telegram import FakeUser


async def test_each_chat_is_answered_by_its_bound_agent(agents: Agents) -> None:
    telegram = agents.telegram
    telegram.user_says("hello", user=FakeUser(OWNER))
    telegram.user_says("hello", user=FakeUser(GRANDMA))
    telegram.user_mentions_bot("hello", user=FakeUser(OWNER), chat_id=WORK_GROUP, chat_type="group")
    # The child's sender binding beats the work group's chat binding.
    telegram.user_mentions_bot("hi", user=FakeUser(CHILD), chat_id=WORK_GROUP, chat_type="group")
    assert (await telegram.wait_for_messages(OWNER)) == ["answered by main"]
    assert (await telegram.wait_for_messages(GRANDMA)) == ["answered by family"]
    replies = await telegram.wait_for_messages(WORK_GROUP, 2)
    assert sorted(replies) == ["answered by family", "answered by work"]


async def test_a_switched_off_agents_chat_is_refused_never_rerouted(agents: Agents) -> None:
    telegram = agents.telegram
    telegram.user_says("are you there?", user=FakeUser(STRANGER_IN_OLD))
    [reply] = await telegram.wait_for_messages(STRANGER_IN_OLD)
    assert "'old' is switched off" in reply and "No other assistant" in reply
    assert agents.model.requests == []  # no agent's model was asked
    sessions = await agents.daemon.context.runtime.sessions.list()
    assert [s for s in sessions if s.chat_id == str(STRANGER_IN_OLD)] == []


async def test_no_request_carries_another_agents_canary(agents: Agents) -> None:
    telegram = agents.telegram
    telegram.user_says("what is the garden password word?", user=FakeUser(GRANDMA))
    await telegram.wait_for_messages(GRANDMA)
    for request in agents.requests():
        assert {agent for agent, _ in canaries_in(request)} == {"family"}
