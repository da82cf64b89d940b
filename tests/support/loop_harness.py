"""The ReAct loop in memory: the daemon's own `AgentLoop` and `ContextKeeper`, fed by a scripted
model and tools that are plain Python functions; no runtime, store, HTTP or disk.

    harness = LoopHarness(tools=[FunctionTool("lookup", lambda args: "42")])
    harness.script(ModelReply.tool_calls(("lookup", {"q": "x"})), ModelReply.text("It is 42."))
    events = await harness.turn("what is it?")

What the model was sent is in `harness.model.requests`, what the turn stored in
`harness.stored()`, the audited tool calls in `harness.tool_calls`. The loop and the keeper are the
classes the daemon runs; only what they talk to (the `SessionHistory` and `EntryLog`, the
`AgentHooks`, the `LLMProvider`, the prompt, the tokenizer, the tools) is in memory here.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from countbot.agent.context.keeper import ContextKeeper
from countbot.agent.context.summary import OverflowSummarizer
from countbot.agent.context.tokens import bound
from countbot.agent.events import AgentEvent
from countbot.agent.loop import AgentLoop
from countbot.agent.model_choice import ModelChoice
from countbot.agent.ports import AgentHooks, ToolCallRecord
from countbot.agent.turn_request import TurnRequest
from countbot.common.authorship import Part
from countbot.common.charge import Charge
from countbot.config.settings import AgentSettings
from countbot.llm.types import (
    AssistantMessage,
    ChatRequest,
    StopReason,
    StreamDone,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from countbot.tools.base import Tool, ToolContext, ToolResult
from countbot.tools.registry import ToolRegistry

MODEL = "scripted/model"
# Never read or written: the in-memory tools take no path, and nothing here touches the disk.
WORKSPACE = Path("/nonexistent/loop-harness-workspace")
ANY_ARGUMENTS: dict[str, Any] = {"type": "object", "additionalProperties": True}


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One scripted model response; build it with the classmethods."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    chunks: int = 1
    stop: StopReason = "stop"
    error: str | None = None
    retryable: bool = False
    # Stalls after its first chunk until the call is cancelled (a model still writing).
    stall: bool = False
    usage: Usage = field(default_factory=lambda: Usage(10, 5))

    @classmethod
    def answer(cls, text: str, *, chunks: int = 1, stop: StopReason = "stop") -> ModelReply:
        return cls(text, chunks=chunks, stop=stop)

    @classmethod
    def tool_calls(cls, *calls: tuple[str, dict[str, Any]], text: str = "") -> ModelReply:
        """A response calling each (name, arguments) in order."""
        made = tuple(
            ToolCall(f"call_{next(_ids)}", name, json.dumps(args), args) for name, args in calls
        )
        return cls(text, made, stop="tool_calls")

    @classmethod
    def failure(cls, message: str, *, retryable: bool = False) -> ModelReply:
        return cls(error=message, retryable=retryable)

    @classmethod
    def stalled(cls, text: str) -> ModelReply:
        """Writes `text`, then nothing more until the turn is stopped."""
        return cls(text, stall=True)


_ids = itertools.count(1)


@dataclass(eq=False)
class ScriptedModel:
    """An `LLMProvider` answering each request with the next scripted reply (or `responder`'s)."""

    replies: deque[ModelReply] = field(default_factory=deque)
    responder: Callable[[ChatRequest], ModelReply] | None = None
    requests: list[ChatRequest] = field(default_factory=list)

    @property
    def model(self) -> str:
        return MODEL

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if self.responder is not None:
            reply = self.responder(request)
        else:
            assert self.replies, "the model was called more often than scripted"
            reply = self.replies.popleft()
        if reply.error is not None:
            yield StreamError(reply.error, reply.retryable)
            return
        for piece in _pieces(reply.text, reply.chunks):
            yield TextDelta(piece)
            if reply.stall:
                await asyncio.Event().wait()  # until the turn's cancel closes this stream
        message = AssistantMessage(reply.text, reply.calls, model=MODEL, provider="scripted")
        yield StreamDone(message, reply.stop, reply.usage)


def _pieces(text: str, chunks: int) -> list[str]:
    size = max(1, -(-len(text) // max(chunks, 1)))
    return [text[i : i + size] for i in range(0, len(text), size)]


Behaviour = Callable[[dict[str, Any]], str | ToolResult | Awaitable[str | ToolResult]]


class FunctionTool(Tool):
    """A tool whose work is a Python function of its arguments (sync or async); what it raises
    is what a real tool's failure would be (`ToolTransientError` is retried when idempotent)."""

    def __init__(
        self,
        name: str,
        behaviour: Behaviour,
        *,
        idempotent: bool = False,
        parameters: dict[str, Any] | None = None,
    ) -> None:
        self.name = name  # type: ignore[misc]
        self.description = f"{name} (in memory)"  # type: ignore[misc]
        self.parameters = parameters or ANY_ARGUMENTS  # type: ignore[misc]
        self.idempotent = idempotent  # type: ignore[misc]
        self.behaviour = behaviour
        self.calls: list[dict[str, Any]] = []

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(args)
        result = self.behaviour(args)
        if inspect.isawaitable(result):
            result = await result
        return result if isinstance(result, ToolResult) else ToolResult(result)


@dataclass(slots=True)
class _Window:
    records: list[dict[str, Any]]
    summary: str | None


@dataclass(eq=False)
class MemoryHistory:
    """A `SessionHistory` and the `EntryLog` that fills it: records in a dict, as the store
    keeps them (with ids), and a running summary per session."""

    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    summaries: dict[str, str] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def append(
        self, session_id: str, record: dict[str, Any], *, charge: Charge | None = None
    ) -> int:
        stored = {"id": next(self._ids), **record}
        self.records.setdefault(session_id, []).append(stored)
        return stored["id"]

    def cached_window(self, session_id: str, limit: int) -> _Window:
        return _Window(self._unsummarized(session_id)[-limit:], self.summaries.get(session_id))

    async def load_window(self, session_id: str, limit: int) -> _Window:
        return self.cached_window(session_id, limit)

    async def load_unsummarized(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        return self._unsummarized(session_id)[:limit]

    async def mark_summarized(self, session_id: str, through_id: int, summary: str) -> None:
        self.summaries[session_id] = summary
        for record in self.records.get(session_id, []):
            if record["id"] <= through_id:
                record["summarized"] = True

    def _unsummarized(self, session_id: str) -> list[dict[str, Any]]:
        return [r for r in self.records.get(session_id, []) if not r.get("summarized")]


@dataclass(frozen=True, slots=True)
class FixedPrompt:
    """The keeper's `PromptSource`: one system prompt, no per-turn facts, no skills."""

    text: str

    def system_prompt_soon(self) -> Coroutine[Any, Any, str]:
        return self._text()

    async def _text(self) -> str:
        return self.text

    def turn_facts(self, *, channel: str | None, chat_id: str | None, unattended: bool) -> str:
        return ""

    async def skill_invocation(self, text: str) -> tuple[str, Part] | None:
        return None


class ByteTokens:
    """The keeper's tokenizer: every text counted as its UTF-8 bytes (its upper bound)."""

    async def count(self, texts: Sequence[str], model: str) -> list[int] | None:
        return [bound(text) for text in texts]

    def prepare(self, model: str) -> None:
        return None


@dataclass(frozen=True, slots=True)
class _NoFile:
    """Where summaries would be filed: nowhere (the harness's sessions are not the user's)."""

    async def append_once(self, marker: str, section: str) -> bool:
        return False


class LoopHarness:
    """One `AgentLoop` over the in-memory parts above; see the module docstring."""

    def __init__(
        self,
        *,
        tools: Sequence[Tool] = (),
        settings: AgentSettings | None = None,
        prompt: str = "You are a helpful assistant under test.",
        window: int = 32_000,
        small: bool = False,
        history: MemoryHistory | None = None,
    ) -> None:
        self.settings = settings or AgentSettings()
        self.model = ScriptedModel()
        self.history = history or MemoryHistory()
        self.tool_calls: list[ToolCallRecord] = []
        self.registry = ToolRegistry(retry_delay=0.0)
        for tool in tools:
            self.registry.register(tool)
        self.choice = ModelChoice(self.model, context_window=window, small=small)
        summarizer = OverflowSummarizer(
            self.history, _NoFile(), self.settings.max_history, files_summary=lambda _: False
        )
        keeper = ContextKeeper(
            history=self.history,
            summarizer=summarizer,
            prompt=FixedPrompt(prompt),
            tools=self.registry,
            counter=ByteTokens(),
        )
        self.loop = AgentLoop(
            resolve_model=self._resolve,
            keeper=keeper,
            tools=self.registry,
            settings=self.settings,
            workspace=WORKSPACE,
            sessions=self.history,
            hooks=AgentHooks(on_tool_call=self._audit),
        )

    def script(self, *replies: ModelReply) -> None:
        """The model's next responses, in order."""
        self.model.replies.extend(replies)

    def run(
        self, message: str, session_id: str = "s1", **request: Any
    ) -> AsyncIterator[AgentEvent]:
        """The turn's events as they come (`request`: more `TurnRequest` fields)."""
        return self.loop.process_message(TurnRequest(message, session_id, **request))

    async def turn(self, message: str, session_id: str = "s1", **request: Any) -> list[AgentEvent]:
        """Every event of one turn."""
        return [event async for event in self.run(message, session_id, **request)]

    def stored(self, session_id: str = "s1") -> list[dict[str, Any]]:
        """The session's records, as the store would hold them."""
        return self.history.records.get(session_id, [])

    async def _resolve(self, model: str | None = None) -> ModelChoice:
        return self.choice

    async def _audit(self, record: ToolCallRecord) -> None:
        self.tool_calls.append(record)
