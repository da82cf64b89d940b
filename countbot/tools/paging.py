"""Paging of tool results too long for one message, and the `read_result` tool that pages on.

A long result reaches the model as its first page plus a footer naming the stored result; the full
text stays in a small LRU store in memory (bounded by entries and characters), scoped to the
session that produced it.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

from countbot.tools.base import Tool, ToolContext, ToolResult
from countbot.tools.schema import integer, params, text


@dataclass(frozen=True, slots=True)
class _Stored:
    session_id: str
    content: str


class ResultPages:
    """Keeps the full text of long results so the model can read them page by page."""

    def __init__(
        self, page_size: int, *, max_entries: int = 64, max_chars: int = 16_000_000
    ) -> None:
        self.page_size = page_size
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._stored: OrderedDict[str, _Stored] = OrderedDict()
        self._chars = 0

    def first_page(self, content: str, session_id: str, *, keep: bool = True) -> str:
        """`content` itself when it fits one page, else page 1 with a footer to read on.

        Without `keep` (no read_result tool to read on with) the rest is dropped and said so.
        """
        if len(content) <= self.page_size:
            return content
        if not keep:
            return (
                f"{content[: self.page_size]}\n\n[truncated: the first {self.page_size:,} of "
                f"{len(content):,} characters]"
            )
        result_id = "r" + secrets.token_hex(6)
        self._stored[result_id] = _Stored(session_id, content)
        self._chars += len(content)
        self._evict()
        return self._page_text(result_id, content, 1)

    def page(self, result_id: str, page: int, session_id: str) -> ToolResult:
        stored = self._stored.get(result_id)
        if stored is None or stored.session_id != session_id:
            return ToolResult.error(
                f"no stored result {result_id!r}: only the {self._max_entries} most recent long "
                "results are kept. Run the original tool again."
            )
        self._stored.move_to_end(result_id)
        pages = self._page_count(stored.content)
        if not 1 <= page <= pages:
            return ToolResult.error(f"result {result_id} has pages 1 to {pages}")
        return ToolResult(self._page_text(result_id, stored.content, page))

    def stored_page(self, tool_call_id: str, content: str, page: int) -> ToolResult:
        """A page of a result kept in the session's history, named by its tool call."""
        pages = self._page_count(content) or 1
        if not 1 <= page <= pages:
            return ToolResult.error(f"result of {tool_call_id} has pages 1 to {pages}")
        return ToolResult(self._page_text(tool_call_id, content, page, key="tool_call_id"))

    def _page_text(self, result_id: str, content: str, page: int, key: str = "result_id") -> str:
        start = (page - 1) * self.page_size
        text = content[start : start + self.page_size]
        pages = self._page_count(content)
        if pages <= 1:
            return text
        where = f"[page {page} of {pages}; the full result is {len(content):,} characters."
        if page < pages:
            return (
                f"{text}\n\n{where} To read on, call read_result with "
                f'{key}="{result_id}" and page={page + 1}.]'
            )
        return f"{text}\n\n{where} This is the last page.]"

    def _page_count(self, content: str) -> int:
        return -(-len(content) // self.page_size)

    def _evict(self) -> None:
        # The newest result always stays, or its own footer would point nowhere.
        while len(self._stored) > 1 and (
            len(self._stored) > self._max_entries or self._chars > self._max_chars
        ):
            _, oldest = self._stored.popitem(last=False)
            self._chars -= len(oldest.content)


class PageSource(Protocol):
    """Where read_result finds stored results: the ToolRegistry that paged them."""

    def read_page(self, result_id: str, page: int, session_id: str) -> ToolResult: ...

    def stored_page(self, tool_call_id: str, content: str, page: int) -> ToolResult: ...


class ResultArchive(Protocol):
    """The session history, where every tool result stays (earlier ones reach the model only
    as a gist once the context is tight)."""

    async def tool_result(self, session_id: str, tool_call_id: str) -> str | None: ...


class ReadResultTool(Tool):
    """Reads further pages of a long tool result from the registry that truncated it."""

    name = "read_result"
    description = (
        "Read a tool result again: another page of one too long to show at once (give the "
        "result_id and page from its end), or an earlier result shown only as a gist (give its "
        "tool_call_id)."
    )
    parameters = params(
        optional={
            "result_id": text("The id from the truncated result."),
            "tool_call_id": text("The call id from a gist."),
            "page": integer("Page number, from 1.", minimum=1),
        },
    )
    idempotent = True
    # A page of any earlier result: the user's files or a stranger's page alike.
    brings = frozenset({"private", "untrusted"})

    def __init__(self, source: PageSource, archive: ResultArchive | None = None) -> None:
        self._source = source
        self._archive = archive

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        page = args.get("page", 1)
        if "result_id" in args:
            return self._source.read_page(args["result_id"], page, ctx.session_id)
        call_id = args.get("tool_call_id")
        if call_id is None:
            return ToolResult.error("give result_id (with page) or tool_call_id")
        content = None
        if self._archive is not None:
            content = await self._archive.tool_result(ctx.session_id, call_id)
        if content is None:
            return ToolResult.error(f"no result of tool call {call_id!r} in this session")
        return self._source.stored_page(call_id, content, page)
