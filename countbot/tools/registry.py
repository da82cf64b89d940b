"""The one place tools run: lookup, argument validation, timeout, cancellation, retries, masking
and paging. `execute` turns every failure into a result the model can act on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from countbot.common.cooperative import run_steps
from countbot.common.masking import MaskedText, SecretMasker
from countbot.llm.types import ToolCall, ToolSpec
from countbot.tools.base import Tool, ToolContext, ToolResult, ToolTransientError
from countbot.tools.paging import ReadResultTool, ResultPages

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]

# How long a cancelled tool may take to clean up: exec needs up to 2 s between SIGTERM and SIGKILL
# and 2 s more to drain its output pipe.
_CLEANUP_GRACE = 10.0


class ToolGate(Protocol):
    """A check the runtime puts around every call (the data-flow policy, `countbot/dataflow/`).

    `admit` answers the arguments to run with (possibly adjusted) or a result that replaces the
    call (a refusal); `observe` sees each result before the model does.
    """

    async def admit(
        self, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> dict[str, Any] | ToolResult: ...

    async def observe(
        self, tool: Tool, args: dict[str, Any], result: ToolResult, ctx: ToolContext
    ) -> None: ...

    async def untrusted_read(self, ctx: ToolContext) -> tuple[str, ...]:
        """The untrusted sources the turn has let into the model's context so far."""
        ...


@dataclass(kw_only=True, eq=False)
class ToolRegistry:
    """Holds the tools the agent may call and executes their calls safely."""

    default_timeout: float = 60.0
    max_retries: int = 3
    retry_delay: float = 1.0
    masker: SecretMasker | None = None
    page_size: InitVar[int] = 30_000
    sleep: Sleep = asyncio.sleep
    gate: ToolGate | None = None
    _tools: dict[str, Tool] = field(default_factory=dict, init=False)
    _validators: dict[str, Validator | str] = field(default_factory=dict, init=False)
    _specs: tuple[ToolSpec, ...] | None = field(default=None, init=False)
    _pages: ResultPages = field(init=False)

    def __post_init__(self, page_size: int) -> None:
        self._pages = ResultPages(page_size)

    def register(self, tool: Tool) -> None:
        """Add a tool. Its schema is checked at its first call (`_validate`): built-in schemas are
        checked by a test, MCP servers' ones when their tools are listed (`mcp/schema.py`)."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._specs = None

    def unregister(self, name: str) -> None:
        """Remove a tool (an MCP server's tool list changed); unknown names are ignored."""
        if self._tools.pop(name, None) is not None:
            self._validators.pop(name, None)
            self._specs = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The function schemas offered to the model, in registration order."""
        if self._specs is None:
            self._specs = tuple(
                ToolSpec(t.name, t.description, t.parameters) for t in self._tools.values()
            )
        return self._specs

    async def untrusted_read(self, ctx: ToolContext) -> tuple[str, ...]:
        """What untrusted content the turn of `ctx` has read, as its gate counts it (none
        without a gate): an answer written after it is marked with it when stored."""
        return await self.gate.untrusted_read(ctx) if self.gate is not None else ()

    async def read_page(self, result_id: str, page: int, session_id: str) -> ToolResult:
        """A further page of a result this registry truncated (for `ReadResultTool(registry)`)."""
        return await run_steps(self._pages.page_steps(result_id, page, session_id))

    async def stored_page(self, tool_call_id: str, content: str, page: int) -> ToolResult:
        """A page of a result kept in the session history (for `ReadResultTool`)."""
        return await run_steps(self._pages.stored_page_steps(tool_call_id, content, page))

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run one call. Never raises, except CancelledError after stopping what it started."""
        started = time.monotonic()
        result = await self._checked_run(call, ctx)
        if call.name == ReadResultTool.name:  # a page: at most one page to mask
            content = await self._mask(result.content)
        else:  # masked only as far as it is kept (`MaskedText`)
            keep = ReadResultTool.name in self._tools
            text = MaskedText(self.masker, result.content)
            content = await run_steps(self._pages.first_page_steps(text, ctx.session_id, keep=keep))
        duration_ms = (time.monotonic() - started) * 1000
        return dataclasses.replace(result, content=content, duration_ms=duration_ms)

    async def _checked_run(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolResult.error(
                f"unknown tool {call.name!r}. Available tools: {', '.join(self._tools)}."
            )
        if call.parse_error is not None:
            return ToolResult.error(
                f"the arguments for {call.name} are not valid JSON ({call.parse_error}). "
                "Send the call again with a single valid JSON object as arguments."
            )
        args = call.arguments if call.arguments is not None else {}
        problem = await self._validate(tool, args)
        if problem is not None:
            return ToolResult.error(problem)
        if self.gate is None:
            return await self._run_with_retries(tool, args, ctx)
        admitted = await self.gate.admit(tool, args, ctx)
        if isinstance(admitted, ToolResult):
            return admitted
        result = await self._run_with_retries(tool, admitted, ctx)
        await self.gate.observe(tool, admitted, result, ctx)
        return result

    async def _validate(self, tool: Tool, args: dict[str, Any]) -> str | None:
        validator = self._validators.get(tool.name)
        if validator is None:
            # jsonschema (slow and large to import) loads at the first tool call, off the
            # loop: an idle daemon and a chat -m that calls no tool never need it.
            validator = await asyncio.to_thread(_validator, tool.parameters)
            self._validators[tool.name] = validator
        if isinstance(validator, str):
            return f"{tool.name} cannot be called: {validator}"
        from jsonschema.exceptions import best_match

        error = best_match(validator.iter_errors(args))
        if error is None:
            return None
        where = "/".join(str(part) for part in error.absolute_path)
        at = f" at {where!r}" if where else ""
        return f"invalid arguments for {tool.name}{at}: {error.message}"

    async def _run_with_retries(
        self, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> ToolResult:
        attempt = 0
        while True:
            try:
                return await self._run_once(tool, args, ctx)
            except ToolTransientError as exc:
                if not tool.idempotent or attempt >= self.max_retries:
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    return ToolResult.error(f"{tool.name} failed{tries}: {exc}")
                delay = self.retry_delay * 2**attempt
                log.info("tool %s: transient failure (%s), retry in %.1f s", tool.name, exc, delay)
                await self.sleep(delay)
                attempt += 1

    async def _run_once(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """One attempt, raced against the timeout and the user's cancel.

        Raises ToolTransientError for the retry loop; every other failure becomes a result.
        """
        if ctx.cancelled.is_set():
            return _cancelled(tool)
        limit = tool.timeout or self.default_timeout
        work = asyncio.create_task(tool.execute(args, ctx), name=f"tool:{tool.name}")
        cancel = asyncio.create_task(ctx.cancelled.wait())
        try:
            done, _ = await asyncio.wait(
                {work, cancel}, timeout=limit, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            await _stop(work)
            raise
        finally:
            cancel.cancel()
        if work not in done:
            await _stop(work)
            if cancel in done:
                return _cancelled(tool)
            return ToolResult(f"Error: {tool.name} timed out after {limit:g} s", "timeout")
        if work.cancelled():
            return _cancelled(tool)
        exc = work.exception()
        if exc is None:
            return work.result()
        if isinstance(exc, ToolTransientError):
            raise exc
        log.warning("tool %s raised", tool.name, exc_info=exc)
        return ToolResult.error(f"{tool.name} failed: {type(exc).__name__}: {exc}")

    async def _mask(self, content: str) -> str:
        if self.masker is None:
            return content
        # In steps on the loop: in a thread, the regex pass would hold the GIL just as long.
        return await run_steps(self.masker.mask_steps(content))


def _validator(schema: dict[str, Any]) -> Validator | str:
    """The validator of a tool's parameters, or why its schema is not one."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    validator_class = validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except SchemaError as err:
        return f"its parameter schema is invalid ({err.message})"
    return validator_class(schema)


def _cancelled(tool: Tool) -> ToolResult:
    return ToolResult(f"Cancelled: {tool.name} was stopped at the user's request.", "cancelled")


async def _stop(task: asyncio.Task[ToolResult]) -> None:
    """Cancel a tool's task and give it time to clean up (kill its subprocess)."""
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=_CLEANUP_GRACE)
    if not done:
        log.warning(
            "%s did not stop within %.0f s of being cancelled", task.get_name(), _CLEANUP_GRACE
        )
    elif not task.cancelled():
        task.exception()  # retrieved, so asyncio does not report it as never retrieved
