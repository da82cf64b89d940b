"""Overflow summaries of a stranger's text carry the memory mark, like notes saved from it.

The summarizer writes what falls out of the context window into MEMORY.md, which every later
turn reads. When the summarized records held untrusted text (a page, a stranger's message, a
workspace skill, a marked note), the summary may repeat its instructions: it is marked with the
prefix of `marks.py`, so a later turn that reads it counts as having read untrusted content.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from countbot.common.authorship import Messages, Said
from countbot.dataflow.ledger import url_host
from countbot.dataflow.marks import mark, marked_sources
from countbot.dataflow.seed import paired_results
from countbot.tools.base import Tool


class SummaryMarks:
    """The summarizer's `mark` hook: `text` marked when `records` held untrusted content."""

    def __init__(self, tools: Callable[[str], Tool | None]) -> None:
        self._tools = tools

    async def __call__(self, records: list[dict[str, Any]], text: str) -> str:
        sources = await self._untrusted(records)
        return mark(text, sources) if sources else text

    async def _untrusted(self, records: list[dict[str, Any]]) -> list[str]:
        messages = Messages()
        messages.add_all(Said.of_record(r) for r in records if r.get("type") == "user")
        sources = [source for source, _ in messages.untrusted]
        for result in paired_results(records):
            sources.extend(result.untrusted)
            tool = self._tools(result.tool)
            # A tool gone since (an MCP server removed) counts as a stranger's, like in a turn.
            if tool is None or "untrusted" in await tool.brought(result.arguments):
                sources.append(_label(result.tool, result.arguments))
        for record in records:
            for source in marked_sources(str(record.get("content") or "")):
                sources.append(f"a memory note from {source}")
        return list(dict.fromkeys(sources))


def _label(tool: str, args: dict[str, Any]) -> str:
    if isinstance(args.get("url"), str):
        return f"{tool} {url_host(args['url'])}"
    detail = next((str(args[k]) for k in ("path", "name", "command") if args.get(k)), "")
    return f"{tool} {detail[:80]}".strip()
