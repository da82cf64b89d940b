"""Shows one turn in one chat, adapted to what the channel can do.

While the turn runs: a typing indicator, and (where messages can be edited) a plain-text draft
edited in place at most once per `edit_interval`, pausing as long as the platform's flood limit
says. At the end: the final answer as Markdown, split at the platform's limit, the first piece
replacing the draft. A send the platform refuses for now is retried; the final text is never
silently dropped (a permanent failure is logged).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from countbot.agent.events import (
    AgentEvent,
    TextChunk,
    ToolStart,
    TurnCancelled,
    TurnDone,
    TurnError,
    TurnNotice,
)
from countbot.channels.kit.base import ChannelCapabilities, ChatOutput, SendError, VoiceChat
from countbot.channels.kit.plaintext import markdown_to_plain
from countbot.channels.kit.retry import send_retrying
from countbot.channels.kit.splitting import PARAGRAPH_BREAK, split_markdown, truncate, utf16_len
from countbot.media.speech import Speaker, SpeechFailed

log = logging.getLogger(__name__)

STREAMING_MARK = " …"
# The final answer is worth a long wait when the platform asks for one (a flood limit).
FINAL_LONGEST_WAIT = 300.0


@dataclass(frozen=True, slots=True)
class RenderSettings:
    edit_interval: float = 1.0
    # Telegram shows "typing…" for about five seconds per call.
    typing_interval: float = 4.0
    send_attempts: int = 5
    # The daemon's web address: the "no model" guidance links to its Settings page.
    web_url: str = ""
    # Spoken replies (`speech:`): answers up to `speech_max_chars` also go out as a voice note
    # where the platform takes one.
    speaker: Speaker | None = None
    speech_max_chars: int = 1500


class AnswerBook(Protocol):
    """Where a chat's final answers are written down before they are sent (the outbox)."""

    async def record(self, text: str) -> int | None: ...

    async def settle(self, entry: int | None) -> None: ...


def no_model_guidance(web_url: str) -> str:
    """The web UI's "no model" words, with its Settings page written out as a bare address:
    a chat app shows and links that, while a loopback link hidden behind a label may be refused.
    """
    text = (
        "No model is configured yet, so nothing was sent. Choose a model on the Settings "
        "page, then send your message again."
    )
    return f"{text}\n\nSettings: {web_url}/#/settings" if web_url else text


class TurnRenderer:
    """Feed it the turn's events in order; `task` ends once the final answer is delivered.

    `after` is the previous turn's renderer in the same chat: nothing is shown before it is
    done, so answers never interleave. With a `book`, the final answer is written down the
    moment the turn ends and settled once every piece of it was delivered.
    """

    def __init__(
        self,
        output: ChatOutput,
        capabilities: ChannelCapabilities,
        settings: RenderSettings,
        after: TurnRenderer | None = None,
        book: AnswerBook | None = None,
    ) -> None:
        self._output = output
        self._book = book
        self._entry: asyncio.Task[int | None] | None = None
        self._caps = capabilities
        self._settings = settings
        self._streamed = ""
        self._final: str | None = None
        self._answer: str | None = None  # the model's answer, for a spoken reply
        self._notices: list[str] = []
        self._changed = asyncio.Event()
        self._ended = asyncio.Event()
        self._draft_id: str | None = None
        self._drafts_refused = False
        # Loop times before which the platform must not be asked again: for an edit (throttle
        # or flood limit), for anything at all (the platform's retry_after).
        self._ready_at = 0.0
        self._flood_until = 0.0
        self.task = asyncio.create_task(
            self._run(after.task if after is not None else None), name="turn-renderer"
        )

    def feed(self, event: AgentEvent) -> None:
        if self._final is not None:
            return
        if isinstance(event, TextChunk):
            self._streamed += event.content
        elif isinstance(event, ToolStart):
            # Text after a tool call is a new thought: keep it off the previous paragraph.
            if self._streamed.strip() and not self._streamed.endswith(PARAGRAPH_BREAK):
                self._streamed = self._streamed.rstrip() + PARAGRAPH_BREAK
        elif isinstance(event, TurnNotice):
            # Said with the answer (e.g. the model could not see the photo), never dropped.
            if not event.transient:  # progress (a retry, a summary) is not part of the answer
                self._notices.append(event.text)
            return
        elif isinstance(event, TurnDone):
            # An answer without text comes with a notice saying why (`empty_answer`).
            empty = "" if self._notices else "(no answer)"
            answer = event.content.strip() or self._streamed.strip() or empty
            self._answer = answer
            self._final = _with_note(answer, " ".join(f"_{n}_" for n in self._notices))
        elif isinstance(event, TurnError) and event.code == "no_model":
            self._final = no_model_guidance(self._settings.web_url)
        elif isinstance(event, TurnError):
            self._final = _with_note(self._streamed, f"⚠️ Sorry, that failed: {event.error}")
        elif isinstance(event, TurnCancelled):
            self._final = _with_note(self._streamed, "_Stopped._")
        else:
            return
        if self._final is not None:
            self._ended.set()
            if self._book is not None:
                self._entry = asyncio.create_task(self._book.record(self._final))
        self._changed.set()

    async def _run(self, after: asyncio.Task[None] | None) -> None:
        if after is not None:
            await asyncio.wait({after})
        typing = asyncio.create_task(self._keep_typing()) if self._caps.typing_indicator else None
        try:
            await self._stream_drafts()
        finally:
            if typing is not None:
                typing.cancel()
        await self._deliver_final()

    async def _keep_typing(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if loop.time() >= self._flood_until:  # inside a flood window even this would count
                with contextlib.suppress(SendError):
                    await self._output.typing()
            await asyncio.sleep(self._settings.typing_interval)

    async def _stream_drafts(self) -> None:
        loop = asyncio.get_running_loop()
        shown = ""
        while self._final is None:
            await self._changed.wait()
            wait = self._ready_at - loop.time()
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._ended.wait(), wait)
                continue
            self._changed.clear()
            if self._final is not None or not self._caps.edits_in_place or self._drafts_refused:
                continue
            draft = _draft(self._streamed, self._caps.max_message_length)
            if not draft or draft == shown:
                continue
            try:
                if self._draft_id is None:
                    self._draft_id = await self._output.post(draft, markdown=False)
                else:
                    await self._output.edit(self._draft_id, draft, markdown=False)
                shown = draft
                self._ready_at = loop.time() + self._settings.edit_interval
            except SendError as exc:
                self._drafts_refused = exc.permanent
                if exc.retry_after is not None:
                    self._flood_until = loop.time() + exc.retry_after
                self._ready_at = loop.time() + (exc.retry_after or self._settings.edit_interval)
                self._changed.set()

    async def _deliver_final(self) -> None:
        pieces = split_markdown(self._final or "", self._caps.max_message_length)
        first, delivered = 0, True
        if self._draft_id is not None:
            draft_id = self._draft_id
            if await self._attempt(lambda: self._output.edit(draft_id, pieces[0])):
                first = 1
        for piece in pieces[first:]:
            delivered &= await self._attempt(lambda piece=piece: self._output.post(piece))
        if self._book is not None and self._entry is not None and delivered:
            await self._book.settle(await self._entry)
        await self._speak()

    async def _speak(self) -> None:
        """The answer as a voice note too, where speech is on and the platform takes one."""
        speaker, answer, output = self._settings.speaker, self._answer, self._output
        if speaker is None or answer is None or not isinstance(output, VoiceChat):
            return
        if len(answer) > self._settings.speech_max_chars:
            return
        try:
            voice = await speaker.speak(markdown_to_plain(answer))
        except SpeechFailed as exc:
            log.warning("a spoken reply could not be made: %s", exc)
            return
        await self._attempt(lambda: output.send_voice(voice))

    async def _attempt(self, send: Callable[[], Awaitable[object]]) -> bool:
        """Send once the flood window is over, retrying as the platform allows."""
        wait = self._ready_at - asyncio.get_running_loop().time()
        if wait > 0:
            await asyncio.sleep(wait)
        try:
            await send_retrying(
                send, attempts=self._settings.send_attempts, longest_wait=FINAL_LONGEST_WAIT
            )
        except SendError as exc:
            log.warning("a message could not be delivered: %s", exc.detail)
            return False
        return True


def _draft(text: str, limit: int) -> str:
    """The streaming text as a draft: plain, marked as unfinished, cut to fit one message."""
    text = text.strip()
    if not text:
        return ""
    return truncate(text, limit - utf16_len(STREAMING_MARK)) + STREAMING_MARK


def _with_note(streamed: str, note: str) -> str:
    streamed = streamed.strip()
    if not note:
        return streamed
    return f"{streamed}{PARAGRAPH_BREAK}{note}" if streamed else note
