"""Channel bookkeeping: each chat's session and each channel's update cursor."""

from __future__ import annotations

from countbot.store.channel_state import ChannelStateStore
from countbot.store.database import Database


async def test_a_chat_keeps_the_session_it_was_given(db: Database) -> None:
    state = ChannelStateStore(db)
    assert await state.session_for("telegram", "100") is None
    await state.assign_session("telegram", "100", "telegram:100:a1")
    await state.assign_session("telegram", "100", "telegram:100:b2")
    assert await state.session_for("telegram", "100") == "telegram:100:b2"
    assert await state.session_for("telegram", "200") is None


async def test_a_cursor_only_moves_forward(db: Database) -> None:
    state = ChannelStateStore(db)
    assert await state.cursor("telegram") == 0
    await state.advance("telegram", 1005)
    await state.advance("telegram", 1003)
    assert await state.cursor("telegram") == 1005
    assert await state.cursor("other") == 0
