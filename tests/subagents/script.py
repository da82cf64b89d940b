"""Scripted model conversations for subagent tests: the assistant's, and each subagent's by label.

Subagents run in parallel, so one FIFO script cannot say which reply goes to whom; the responder
routes each request by its system prompt (a subagent's names its task label) and answers every
subagent report with "Relayed: <label>".
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from countbot.config.loader import load_settings
from countbot.config.structs import replaced
from countbot.web.daemon import bind_listener, serve_daemon
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web.conftest import Daemon, write_config

_TASK_LABEL = re.compile(r"# Your task \((.*?)\)\n")
_REPORT = re.compile(r"Subagent report: (.+?) \(([0-9a-f]+)\) ")


def spawn(task: str, label: str, **extra: Any) -> tuple[str, str]:
    """A `spawn` tool call as the scripted model sends it."""
    return ("spawn", json.dumps({"task": task, "label": label, **extra}))


class Conversations:
    """The model's replies per conversation; install with `model_server.responder = conv`."""

    def __init__(self) -> None:
        self.main: deque[Reply] = deque()
        self.subagents: dict[str, deque[Reply]] = {}
        # (label or "main", the request body), in the order requests arrived.
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def subagent(self, label: str, *replies: Reply) -> None:
        self.subagents.setdefault(label, deque()).extend(replies)

    def __call__(self, body: dict[str, Any]) -> Reply:
        system = str(body["messages"][0]["content"])
        found = _TASK_LABEL.search(system)
        with self._lock:
            if found is not None:
                label = found.group(1)
                self.requests.append((label, body))
                queue = self.subagents.get(label)
                return queue.popleft() if queue else Reply.text(f"{label}: result")
            self.requests.append(("main", body))
            report = _REPORT.search(json.dumps(body["messages"][-1], ensure_ascii=False))
            if report is not None and body["messages"][-1]["role"] == "user":
                return Reply.text(f"Relayed: {report.group(1)}")
            return self.main.popleft() if self.main else Reply.text("ok")

    def of(self, label: str) -> list[dict[str, Any]]:
        with self._lock:
            return [body for who, body in self.requests if who == label]

    def tool_names(self, label: str) -> set[str]:
        """The tools offered in a conversation's first request."""
        return {spec["function"]["name"] for spec in self.of(label)[0].get("tools", [])}


@asynccontextmanager
async def subagent_daemon(
    folder: Path,
    model_server: ScriptedModelServer,
    *,
    tune: Callable[[Any], None] | None = None,
    **subagents: Any,
) -> AsyncIterator[Daemon]:
    """A daemon on `folder` (restartable: same data) with `subagents.*` settings overridden."""
    settings = load_settings(write_config(folder, model_server))
    settings.subagents = replaced(settings.subagents, **subagents)
    if tune is not None:
        tune(settings)
    with bind_listener("127.0.0.1", 0) as listener:
        async with serve_daemon(settings, listener) as running:
            yield Daemon(running.port, running.context, settings)
