"""The property of issue 41: every message is answered by its bound agent, and no request any
model received carries another agent's canary (MEMORY.md, USER.md, a secret, a skill, a file, or
what was said to it: recall and search included).

10,000 randomized messages go through the real bindings (`Houses.route`, the code the channels
and the web UI ask); 150 of them, drawn from the same distribution, go end to end through the
real daemon over the fake Telegram server and the web UI's WebSocket, and the scripted model's
request log is checked. `COUNTBOT_PROPERTY_MESSAGES=10000` sends all 10,000 end to end, in one
daemon (a long run: docs/agents.md records one).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import statistics
import time
from pathlib import Path

from tests.agents.conftest import (
    ALLOWED,
    CHILD,
    GRANDMA,
    OWNER,
    WORK_GROUP,
    Agents,
    canaries_in,
    expected_agent,
)
from tests.channels.fake_telegram import FakeUser
from tests.support.scripted_model import ScriptedModelServer

ROUTED = 10_000
# Messages sent end to end (the module docstring says how to run the 10,000).
END_TO_END = int(os.environ.get("COUNTBOT_PROPERTY_MESSAGES", "150"))
PROGRESS_EVERY = 500
log = logging.getLogger(__name__)
CHATS = (OWNER, GRANDMA, CHILD, WORK_GROUP, 555, -1002)


def _draw(rng: random.Random, senders: tuple[int, ...]) -> tuple[str, int | None, int | None]:
    """A message's channel, chat and sender (in a group: one of `senders`)."""
    channel = rng.choice(("telegram", "telegram", "telegram", "web", "slack"))
    if channel == "web":
        return channel, None, None
    chat = rng.choice(CHATS)
    return channel, chat, chat if chat > 0 else rng.choice(senders)


async def test_ten_thousand_messages_route_to_their_bound_agent(agents: Agents) -> None:
    houses = agents.daemon.context.houses
    rng = random.Random(41)
    for _ in range(ROUTED):
        channel, chat, sender = _draw(rng, (OWNER, CHILD, 555))
        route = houses.route(
            channel,
            chat=None if chat is None else str(chat),
            sender=None if sender is None else str(sender),
        )
        expected = expected_agent(channel, chat, sender)
        assert route.agent == (None if expected == "old" else expected)


class Run:
    """The end-to-end run's books: the model's requests checked as they come (each carries
    one agent's canaries only; then let go, so a long run holds none), the canary kinds seen,
    and every PROGRESS_EVERY messages a log line of how fast the turns went (a daemon that slows
    down over a long run shows here)."""

    def __init__(self, model: ScriptedModelServer) -> None:
        self.model = model
        self.requests = 0
        self.seen: set[tuple[str, str]] = set()
        self.turns: dict[str, list[float]] = {"web": [], "telegram": []}
        self.started = self.lap = time.perf_counter()

    def check_requests(self) -> None:
        for body in self.model.take_requests():
            found = canaries_in(json.dumps(body, ensure_ascii=False))
            owners = {agent for agent, _ in found}
            assert len(owners) == 1, f"a request carried canaries of {sorted(owners)}"
            self.seen |= found
            self.requests += 1

    def progress(self, number: int) -> None:
        self.check_requests()
        now = time.perf_counter()
        web, telegram = (statistics.median(t or [0]) * 1000 for t in self.turns.values())
        rss = Path("/proc/self/status").read_text().split("VmRSS:")[1].split()[0]
        log.warning(
            "%d messages in %.0f s; the last %d in %.1f s, turn p50 web %.0f ms, telegram"
            " %.0f ms; %d model requests checked; test process RSS %d MiB",
            *(number, now - self.started, PROGRESS_EVERY, now - self.lap, web, telegram),
            *(self.requests, int(rss) // 1024),
        )
        self.lap = now
        self.turns = {"web": [], "telegram": []}


async def test_messages_end_to_end_never_see_another_agents_canary(agents: Agents) -> None:
    rng = random.Random(4141)
    telegram, web = agents.telegram, await agents.daemon.ws()
    sent: dict[int, int] = {}
    run = Run(agents.model)
    for number in range(END_TO_END):
        if number and number % PROGRESS_EVERY == 0:
            run.progress(number)
        # Group members the channel lets in (a stranger in a group gets no turn at all).
        channel, chat, sender = _draw(rng, (OWNER, CHILD))
        if channel == "slack":
            channel = "web"  # no Slack here: its share goes through the web UI
        agent = expected_agent(channel, chat, sender)
        text = f"the garden password word? canary-{agent}-chat{number}"
        began = time.perf_counter()
        if channel == "web" or rng.random() < 0.2:
            # The owner's agent switcher: any agent, named in the frame.
            pick = rng.choice(("main", "work", "family"))
            words = f"the garden password word? canary-{pick}-web{number}"
            web.frames.clear()  # only this turn's frames: counting all would grow with the run
            await web.send({"type": "message", "content": words, "agent": pick})
            done = await web.until("done")
            assert done["content"] == f"answered by {pick}"
            run.turns["web"].append(time.perf_counter() - began)
            continue
        if chat not in ALLOWED and chat is not None and chat > 0:
            continue  # a stranger gets a pairing code, no turn
        user = FakeUser(sender or OWNER)
        if chat == WORK_GROUP or (chat is not None and chat < 0):
            telegram.user_mentions_bot(text, user=user, chat_id=chat, chat_type="group")
        else:
            telegram.user_says(text, user=user, chat_id=chat)
        sent[chat or 0] = sent.get(chat or 0, 0) + 1
        replies = await telegram.wait_for_messages(chat or 0, sent[chat or 0])
        assert replies[-1] == f"answered by {agent}"
        run.turns["telegram"].append(time.perf_counter() - began)
    await asyncio.sleep(0)
    run.check_requests()
    assert run.requests >= END_TO_END // 2
    kinds = {kind for _, kind in run.seen}
    # The canaries did reach their own agent's requests: the skill and USER.md in the prompt,
    # MEMORY.md and earlier words (chats and the web UI's) through recall.
    assert {"skill", "user", "memory", "chat", "web"} <= kinds
