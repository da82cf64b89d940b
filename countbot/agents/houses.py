"""Every agent's house in one daemon, and the gateway's `AgentLoops`: the loop of each agent,
built at its first turn.

`main`'s house is the daemon's runtime. Every other enabled agent's house is opened when the
daemon starts (in the background: its memory index, skills, sandbox and model; its tools and
loop at its first turn), over `main`'s store. An agent that is switched off, or whose house
failed to open, answers nothing: its turns end with an error saying so, and a message routed to
it is refused by the surface (`Houses.route`). Nothing ever falls back to another agent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from countbot.config.agent_view import agent_settings, bound_agent, unavailable
from countbot.config.settings import MAIN
from countbot.runtime.assembly import Runtime, open_house
from countbot.runtime.features import Feature

if TYPE_CHECKING:
    from countbot.agent.loop import AgentLoop

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Route:
    """Where a message goes: `agent`, or nowhere with the `refusal` its sender is told."""

    agent: str | None
    refusal: str = ""


class Houses:
    """The agents' houses by name (see the module docstring); every house offers the tools of
    `features` (the cron jobs', the subagents': those that make tools per agent)."""

    def __init__(self, main: Runtime, features: Sequence[Feature] = ()) -> None:
        self.main = main
        self._features = features
        self._houses: dict[str, Runtime] = {MAIN: main}
        self._opening: dict[str, asyncio.Task[Runtime]] = {}
        # Why an agent's house could not be opened, by agent.
        self.failed: dict[str, str] = {}

    @property
    def names(self) -> tuple[str, ...]:
        return self.main.settings.agents.names()

    def start(self) -> None:
        """Open every enabled agent's house in the background."""
        for name in self.names:
            if name != MAIN and self.main.settings.agents.enabled(name):
                self._open(name)

    def _open(self, name: str) -> asyncio.Task[Runtime]:
        task = self._opening.get(name)
        if task is None:
            settings = agent_settings(self.main.settings, name)
            opening = open_house(self.main, settings, name, self._features)
            task = asyncio.create_task(opening, name=f"house:{name}")
            task.add_done_callback(lambda done: self._opened(name, done))
            self._opening[name] = task
        return task

    def _opened(self, name: str, task: asyncio.Task[Runtime]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            self.failed[name] = str(error) or type(error).__name__
            log.error("agent %s failed to start: %s", name, self.failed[name])
            return
        house = task.result()
        self._houses[name] = house
        if any(server.enabled for server in house.settings.mcp.servers.values()):
            house.prepare_turns()  # its MCP servers start with the daemon, as main's do

    def unavailable(self, name: str) -> str:
        """Why agent `name` cannot answer now ("" when it can)."""
        why = unavailable(self.main.settings.agents, name)
        if why:
            return why
        if name in self.failed:
            return f"the assistant {name!r} failed to start: {self.failed[name]}"
        return ""

    def route(
        self,
        channel: str,
        *,
        account: str | None = None,
        chat: str | None = None,
        sender: str | None = None,
    ) -> Route:
        """The agent a message goes to by the bindings, or why it goes nowhere."""
        agents = self.main.settings.agents
        name = bound_agent(agents, channel, account=account, chat=chat, sender=sender)
        if name is None:
            return Route(None, "No assistant answers in this chat.")
        why = self.unavailable(name)
        if why:
            return Route(None, f"Not delivered: {why}. No other assistant was asked.")
        return Route(name)

    async def house(self, name: str) -> Runtime:
        """Agent `name`'s house (waiting for it to open); LookupError when it cannot answer."""
        why = self.unavailable(name)
        if why:
            raise LookupError(why)
        found = self._houses.get(name)
        if found is not None:
            return found
        try:
            return await asyncio.shield(self._open(name))
        except Exception as exc:
            raise LookupError(self.unavailable(name) or str(exc)) from exc

    def opened(self) -> list[Runtime]:
        """The houses open now, `main`'s first."""
        return list(self._houses.values())

    async def loop(self, name: str) -> AgentLoop:
        """The gateway's `AgentLoops`: agent `name`'s loop, its turn machinery built at the
        first call; LookupError when the agent cannot answer."""
        try:
            house = await self.house(name)
        except LookupError as exc:
            raise LookupError(f"{exc}; no other assistant was asked") from exc
        return await house.loop()

    async def close(self) -> None:
        """Close every other agent's house (main's runtime is its owner's to close)."""
        for task in self._opening.values():
            task.cancel()
        await asyncio.gather(*self._opening.values(), return_exceptions=True)
        for name, house in list(self._houses.items()):
            if name != MAIN:
                await house.close()
