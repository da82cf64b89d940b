"""Paging of tool results too long for one message, and the `read_result` tool that pages on.

A long result reaches the model as its first page plus a footer naming the stored result; the full
text stays in a small LRU store in memory (bounded by entries and characters), scoped to the
session that produced it, and is masked only as far as its pages are read (`MaskedText`).
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

from countbot.common.cooperative import Steps
from countbot.common.masking import MaskedText
from countbot.tools.base import Tool, ToolContext, ToolResult
from countbot.tools.schema import integer, params, text


@dataclass(frozen=True, slots=True)
class _Stored:
    session_id: str
    text: MaskedText


class ResultPages:
    """Keeps the full text of long results so the model can read them page by page.

    A result is kept as a `MaskedText`: masked only as far as its pages have been read.
    """

    def __init__(
        self, page_size: int, *, max_entries: int = 64, max_chars: int = 16_000_000
    ) -> None:
        self.page_size = page_size
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._stored: OrderedDict[str, _Stored] = OrderedDict()
        self._chars = 0

    def first_page_steps(
        self, text: MaskedText, session_id: str, *, keep: bool = True
    ) -> Steps[str]:
        """The masked text itself when it fits one page, else page 1 with a footer to read on.

        Without `keep` (no read_result tool to read on with) the rest is dropped and said so.
        """
        head = yield from text.read_steps(self.page_size + 1)
        if len(head) <= self.page_size:
            return head
        if not keep:
            return (
                f"{head[: self.page_size]}\n\n[truncated: the first {self.page_size:,} of "
                f"{_size(text)}]"
            )
        result_id = "r" + secrets.token_hex(6)
        self._stored[result_id] = _Stored(session_id, text)
        self._chars += text.source_length
        self._evict()
        return (yield from self._page_steps(result_id, text, 1))

    def page_steps(self, result_id: str, page: int, session_id: str) -> Steps[ToolResult]:
        stored = self._stored.get(result_id)
        if stored is None or stored.session_id != session_id:
            return ToolResult.error(
                f"no stored result {result_id!r}: only the {self._max_entries} most recent long "
                "results are kept. Run the original tool again."
            )
        self._stored.move_to_end(result_id)
        return (yield from self._checked_page(result_id, stored.text, page))

    def stored_page_steps(self, tool_call_id: str, content: str, page: int) -> Steps[ToolResult]:
        """A page of a result kept in the session's history (masked when it was stored), named
        by its tool call."""
        text = MaskedText(None, content)
        return (yield from self._checked_page(tool_call_id, text, page, key="tool_call_id"))

    def _checked_page(
        self, result_id: str, text: MaskedText, page: int, key: str = "result_id"
    ) -> Steps[ToolResult]:
        if page > 1:
            masked = yield from text.read_steps((page - 1) * self.page_size + 1)
            if len(masked) <= (page - 1) * self.page_size:
                pages = self._page_count(text.length) or 1
                return ToolResult.error(f"result of {result_id} has pages 1 to {pages}")
        return ToolResult((yield from self._page_steps(result_id, text, page, key)))

    def _page_steps(
        self, result_id: str, text: MaskedText, page: int, key: str = "result_id"
    ) -> Steps[str]:
        start = (page - 1) * self.page_size
        masked = yield from text.read_steps(start + self.page_size + 1)
        body = masked[start : start + self.page_size]
        last = len(masked) <= start + self.page_size
        if last and page == 1:
            return body
        pages = (
            str(self._page_count(text.length))
            if text.complete
            else f"about {self._page_count(text.source_length)}"
        )
        where = f"[page {page} of {pages}; the full result is {_size(text)}."
        if not last:
            return (
                f"{body}\n\n{where} To read on, call read_result with "
                f'{key}="{result_id}" and page={page + 1}.]'
            )
        return f"{body}\n\n{where} This is the last page.]"

    def _page_count(self, length: int) -> int:
        return -(-length // self.page_size)

    def _evict(self) -> None:
        # The newest result always stays, or its own footer would point nowhere.
        while len(self._stored) > 1 and (
            len(self._stored) > self._max_entries or self._chars > self._max_chars
        ):
            _, oldest = self._stored.popitem(last=False)
            self._chars -= oldest.text.source_length


def _size(text: MaskedText) -> str:
    """How long the whole (masked) result is: known once it is all masked, else about as long
    as the text before masking."""
    if text.complete:
        return f"{text.length:,} characters"
    return f"about {text.source_length:,} characters"


class PageSource(Protocol):
    """Where read_result finds stored results: the ToolRegistry that paged them."""

    async def read_page(self, result_id: str, page: int, session_id: str) -> ToolResult: ...

    async def stored_page(self, tool_call_id: str, content: str, page: int) -> ToolResult: ...


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
            return await self._source.read_page(args["result_id"], page, ctx.session_id)
        call_id = args.get("tool_call_id")
        if call_id is None:
            return ToolResult.error("give result_id (with page) or tool_call_id")
        content = None
        if self._archive is not None:
            content = await self._archive.tool_result(ctx.session_id, call_id)
        if content is None:
            return ToolResult.error(f"no result of tool call {call_id!r} in this session")
        return await self._source.stored_page(call_id, content, page)
