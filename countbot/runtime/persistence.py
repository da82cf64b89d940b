"""The hooks that connect an agent turn to storage: messages, tool history, audit and usage."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from countbot.agent.history import AssistantEntry, HistoryEntry, to_record
from countbot.agent.ports import AgentHooks, ToolCallRecord
from countbot.cooperative import run_steps
from countbot.llm.types import Usage
from countbot.masking import SecretMasker
from countbot.store.audit import AuditLog
from countbot.store.sessions import SessionStore
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import UsageLog


@dataclass(frozen=True, slots=True)
class TurnRecorder:
    """Commits each finalized entry as it is produced and audits every tool call."""

    sessions: SessionStore
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

        async def on_message(session_id: str, entry: HistoryEntry) -> None:
            spent = None
            if isinstance(entry, AssistantEntry) and entry.usage.total_tokens:
                # An answer and its usage row in one transaction: one hand-off and one commit.
                spent = self.usage.write(*spending(session_id, entry.model, entry.usage))
            await self.sessions.append(session_id, to_record(entry), also=spent)

        def spending(session_id: str, model: str, usage: Usage) -> tuple[str, str, int, int, float]:
            """`UsageLog.add`'s arguments: whose budget, which model, the tokens, the cost."""
            session = spends_for or session_id
            return session, model, usage.prompt_tokens, usage.completion_tokens, usage.cost_usd

        async def on_usage(session_id: str, model: str, usage: Usage) -> None:
            await self.usage.add(*spending(session_id, model, usage))

        return AgentHooks(on_message=on_message, on_tool_call=on_tool_call, on_usage=on_usage)

    async def on_tool_call(self, record: ToolCallRecord) -> None:
        await self._record_tool_call(dataclasses.asdict(record))

    async def _record_tool_call(self, fields: dict[str, Any]) -> None:
        # Arguments can carry secrets the model wrote; results were masked by the registry.
        data: dict[str, Any] = await run_steps(self.masker.mask_obj_steps(fields))
        self.audit.write(data)
        await self.tool_calls.record(data)
