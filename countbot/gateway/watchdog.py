"""Bounds a turn's run time, so a hung model, tool or hook can never hold a session's lane."""

from __future__ import annotations

import asyncio
from typing import Literal

from countbot.agent.cancel import CancelToken

DEADLINE_REASON = "deadline"

WatchdogOutcome = Literal["finished", "stopped", "killed", "abandoned"]


async def supervise(
    task: asyncio.Task[None], token: CancelToken, deadline: float, grace: float
) -> WatchdogOutcome:
    """Wait for `task`; past `deadline` cancel its token, then the task, `grace` seconds apart.

    "abandoned" means the task ignored even task cancellation; the caller moves on without it.
    """
    if await _finishes(task, deadline):
        return "finished"
    token.cancel(DEADLINE_REASON)
    if await _finishes(task, grace):
        return "stopped"
    task.cancel()
    return "killed" if await _finishes(task, grace) else "abandoned"


async def _finishes(task: asyncio.Task[None], seconds: float) -> bool:
    done, _ = await asyncio.wait({task}, timeout=seconds)
    return bool(done)
