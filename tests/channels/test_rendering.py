"""One turn shown in one chat: drafts within the limit, the final answer split, refusals."""

from __future__ import annotations

import asyncio

from countbot.agent.events import TextChunk, TurnDone, TurnError
from countbot.channels.kit.base import ChannelCapabilities, SendError
from countbot.channels.kit.rendering import RenderSettings, TurnRenderer

EDITING = ChannelCapabilities(
    edits_in_place=True,
    max_message_length=60,
    markup="markdown",
    media_in=False,
    media_out=False,
    typing_indicator=True,
)
FAST = RenderSettings(edit_interval=0.01, typing_interval=0.01)


class Chat:
    """A platform chat: keeps every message's text, and everything it was asked to show."""

    def __init__(self, *, refuse_drafts: bool = False) -> None:
        self.messages: list[str] = []
        self.shown: list[str] = []
        self.typing_calls = 0
        self.refuse_drafts = refuse_drafts

    async def post(self, text: str, *, markdown: bool = True) -> str:
        if self.refuse_drafts and not markdown:
            raise SendError("Forbidden: this chat takes no drafts", permanent=True)
        self.messages.append(text)
        self.shown.append(text)
        return str(len(self.messages))

    async def edit(self, message_id: str, text: str, *, markdown: bool = True) -> None:
        self.messages[int(message_id) - 1] = text
        self.shown.append(text)

    async def typing(self) -> None:
        self.typing_calls += 1


async def stream(renderer: TurnRenderer, text: str) -> None:
    for word in text.split(" "):
        renderer.feed(TextChunk(word + " "))
        await asyncio.sleep(0.005)


async def test_drafts_stay_within_the_limit_and_the_answer_is_split_at_the_end() -> None:
    chat = Chat()
    renderer = TurnRenderer(chat, EDITING, FAST)
    answer = " ".join(f"word{n}" for n in range(40))
    await stream(renderer, answer)
    renderer.feed(TurnDone(answer))
    await asyncio.wait_for(renderer.task, 10)

    assert all(len(text) <= 60 for text in chat.shown)
    assert " ".join(chat.messages) == answer
    assert len(chat.messages) > 1 and chat.typing_calls > 0


async def test_a_chat_that_refuses_drafts_still_gets_the_answer() -> None:
    chat = Chat(refuse_drafts=True)
    renderer = TurnRenderer(chat, EDITING, FAST)
    await stream(renderer, "partial thoughts")
    renderer.feed(TurnError("overloaded", retryable=True))
    await asyncio.wait_for(renderer.task, 10)

    assert chat.messages == ["partial thoughts\n\n⚠️ Sorry, that failed: overloaded"]
