"""The hooks that connect an agent turn to storage: messages, tool history, audit and usage."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from countbot.agent.history import AssistantEntry, HistoryEntry, to_record
from countbot.agent.ports import AgentHooks, ToolCallRecord
from countbot.common.cooperative import run_steps
from countbot.common.masking import SecretMasker
from countbot.llm.types import Usage
from countbot.store.audit import AuditLog
from countbot.store.sessions import SessionStore
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import Shares, UsageLog


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
                args, shares = spending(session_id, entry.model, entry.usage)
                spent = self.usage.write(*args, shares=shares)
            await self.sessions.append(session_id, to_record(entry), also=spent)

        def spending(
            session_id: str, model: str, usage: Usage
        ) -> tuple[tuple[str, str, int, int, float], Shares]:
            """`UsageLog.add`'s arguments: whose budget, which model, the tokens, the cost, and
            the prompt's shares shown apart."""
            session = spends_for or session_id
            shares = Shares(usage.cached_tokens, usage.cache_write_tokens, usage.recall_tokens)
            args = (session, model, usage.prompt_tokens, usage.completion_tokens, usage.cost_usd)
            return args, shares

        async def on_usage(session_id: str, model: str, usage: Usage, purpose: str) -> None:
            args, shares = spending(session_id, model, usage)
            await self.usage.add(*args, purpose=purpose, shares=shares)

        return AgentHooks(on_message=on_message, on_tool_call=on_tool_call, on_usage=on_usage)

    async def on_tool_call(self, record: ToolCallRecord) -> None:
        await self._record_tool_call(dataclasses.asdict(record))

    async def _record_tool_call(self, fields: dict[str, Any]) -> None:
        # Arguments can carry secrets the model wrote; results were masked by the registry.
        data: dict[str, Any] = await run_steps(self.masker.mask_obj_steps(fields))
        self.audit.write(data)
        await self.tool_calls.record(data)
