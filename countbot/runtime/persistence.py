"""The hooks that connect an agent turn to storage: tool history, audit and side calls' usage
(its entries, answers' usage with them, go through the `EntryLog`: the `SessionStore`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from countbot.agent.ports import AgentHooks, ToolCallRecord
from countbot.common.cooperative import run_steps
from countbot.common.masking import SecretMasker
from countbot.llm.types import Usage
from countbot.store.audit import AuditLog
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import UsageLog


@dataclass(frozen=True, slots=True)
class TurnRecorder:
    """Audits every tool call and counts the usage of side calls (summaries, the memory flush)."""

    tool_calls: ToolCallLog
    usage: UsageLog
    audit: AuditLog
    masker: SecretMasker

    def hooks(
        self, *, parent_session: str | None = None, spends_for: str | None = None
    ) -> AgentHooks:
        """Hooks for a turn; a subagent's turn names its parent session in every audit record
        and counts its usage in `spends_for`, the session whose budget it spends."""
        on_tool_call = self.on_tool_call
        if parent_session is not None:

            async def on_tool_call(record: ToolCallRecord) -> None:
                await self._record_tool_call(
                    {**dataclasses.asdict(record), "parent": parent_session}
                )

        async def on_usage(session_id: str, model: str, usage: Usage, purpose: str) -> None:
            await self.usage.charge(usage.charged_to(spends_for or session_id, model), purpose)

        return AgentHooks(on_tool_call=on_tool_call, on_usage=on_usage)

    async def on_tool_call(self, record: ToolCallRecord) -> None:
        await self._record_tool_call(dataclasses.asdict(record))

    async def _record_tool_call(self, fields: dict[str, Any]) -> None:
        # Arguments can carry secrets the model wrote; results were masked by the registry.
        data: dict[str, Any] = await run_steps(self.masker.mask_obj_steps(fields))
        self.audit.write(data)
        await self.tool_calls.record(data)
