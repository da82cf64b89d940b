from __future__ import annotations

import asyncio
from typing import Any

import pytest

from countbot.store.database import Database
from countbot.store.sessions import SessionStore


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "content": text, "images": [], "context": "", "ts": 1.0}


def assistant(text: str) -> dict[str, Any]:
    return {"type": "assistant", "text": text, "tool_calls": [], "ts": 2.0}


async def fill(sessions: SessionStore, session_id: str, count: int) -> list[int]:
    return [await sessions.append(session_id, user(f"message {n}")) for n in range(count)]


async def test_create_get_rename_delete(sessions: SessionStore) -> None:
    created = await sessions.create(title="Plans", channel="telegram", chat_id="42")

    assert len(created.id) == 12
    assert await sessions.get(created.id) == created
    assert (created.title, created.channel, created.chat_id) == ("Plans", "telegram", "42")
    assert created.message_count == 0

    assert await sessions.rename(created.id, "Holiday plans")
    renamed = await sessions.get(created.id)
    assert renamed is not None and renamed.title == "Holiday plans"

    assert await sessions.delete(created.id)
    assert await sessions.get(created.id) is None
    assert not await sessions.delete(created.id)
    assert not await sessions.rename(created.id, "gone")


async def test_create_refuses_a_taken_id_and_ensure_keeps_the_existing_session(
    sessions: SessionStore,
) -> None:
    first = await sessions.create("web:main", title="Mine", channel="web")
    with pytest.raises(ValueError, match="already exists"):
        await sessions.create("web:main")

    assert await sessions.ensure("web:main", channel="telegram") == first
    fresh = await sessions.ensure("telegram:7", channel="telegram", chat_id="7")
    assert (fresh.id, fresh.channel, fresh.chat_id, fresh.title) == (
        "telegram:7",
        "telegram",
        "7",
        "",
    )


async def test_append_creates_the_session_counts_and_titles_it_from_the_first_user_message(
    sessions: SessionStore,
) -> None:
    await sessions.append("s", {"type": "note", "text": "started"})
    await sessions.append(
        "s",
        user(
            "  What is the weather\nlike in Lisbon tomorrow morning, and should I pack an umbrella?"
        ),
    )
    await sessions.append("s", user("A later question"))

    info = await sessions.get("s")
    assert info is not None
    assert info.message_count == 3
    assert info.title == "What is the weather like in Lisbon tomorrow morning, and sho"
    assert len(info.title) == 60


async def test_a_title_set_by_the_user_is_kept(sessions: SessionStore) -> None:
    await sessions.create("s", title="My title")
    await sessions.append("s", user("not the title"))
    info = await sessions.get("s")
    assert info is not None and info.title == "My title"


async def test_records_round_trip_with_their_ids_and_page_backwards(
    sessions: SessionStore,
) -> None:
    ids = await fill(sessions, "s", 7)
    await fill(sessions, "other", 3)

    newest = await sessions.messages("s", limit=3)
    assert [r["id"] for r in newest] == ids[4:]
    assert newest[-1] == {**user("message 6"), "id": ids[6]}

    older = await sessions.messages("s", before_id=newest[0]["id"], limit=3)
    assert [r["id"] for r in older] == ids[1:4]
    oldest = await sessions.messages("s", before_id=older[0]["id"], limit=3)
    assert [r["id"] for r in oldest] == ids[:1]
    assert await sessions.messages("s", before_id=ids[0]) == []
    assert await sessions.messages("missing") == []


async def test_a_record_read_back_and_appended_again_gets_a_new_id(
    sessions: SessionStore,
) -> None:
    (first,) = await fill(sessions, "s", 1)
    (record,) = await sessions.messages("s")
    second = await sessions.append("copy", record)
    assert second != first
    assert await sessions.messages("copy") == [{**record, "id": second}]


async def test_append_needs_a_type(sessions: SessionStore) -> None:
    with pytest.raises(ValueError, match="type"):
        await sessions.append("s", {"content": "no type"})
    assert await sessions.get("s") is None


async def test_window_holds_the_newest_unsummarized_records_and_the_summary(
    sessions: SessionStore,
) -> None:
    ids = await fill(sessions, "s", 10)

    window = await sessions.load_window("s", 4)
    assert [r["id"] for r in window.records] == ids[6:]
    assert window.summary is None
    assert [r["id"] for r in await sessions.load_unsummarized("s", 3)] == ids[:3]

    await sessions.mark_summarized("s", ids[2], "They counted to two.")

    window = await sessions.load_window("s", 100)
    assert [r["id"] for r in window.records] == ids[3:]
    assert window.summary == "They counted to two."
    assert [r["id"] for r in await sessions.load_unsummarized("s", 2)] == ids[3:5]
    info = await sessions.get("s")
    assert info is not None
    assert (info.summarized_through, info.summary) == (ids[2], "They counted to two.")
    # The full log is still there for people to read.
    assert len(await sessions.messages("s", limit=100)) == 10


async def test_a_late_summary_behind_the_current_one_is_ignored(sessions: SessionStore) -> None:
    ids = await fill(sessions, "s", 6)
    await sessions.mark_summarized("s", ids[3], "newer")
    await sessions.mark_summarized("s", ids[1], "stale")

    window = await sessions.load_window("s", 10)
    assert window.summary == "newer"
    assert [r["id"] for r in window.records] == ids[4:]


async def test_window_of_an_unknown_session_is_empty(sessions: SessionStore) -> None:
    window = await sessions.load_window("nobody", 10)
    assert (window.records, window.summary) == ([], None)
    assert await sessions.load_unsummarized("nobody", 10) == []


async def test_delete_removes_the_messages_too(db: Database, sessions: SessionStore) -> None:
    await fill(sessions, "s", 5)
    await fill(sessions, "keep", 2)
    assert await sessions.delete("s")

    count = await db.run(
        lambda c: c.execute("SELECT COUNT(*) FROM messages WHERE session_id = 's'").fetchone()[0]
    )
    assert count == 0
    assert await sessions.messages("s") == []
    assert len(await sessions.messages("keep")) == 2
    # A new session under the same id starts empty.
    await sessions.append("s", user("again"))
    assert [r["content"] for r in await sessions.messages("s")] == ["again"]


async def test_list_is_most_recently_active_first_and_pages(sessions: SessionStore) -> None:
    for name in ("a", "b", "c"):
        await sessions.create(name)
    await sessions.append("a", user("bump"))

    assert [s.id for s in await sessions.list()] == ["a", "c", "b"]
    assert [s.id for s in await sessions.list(limit=2, offset=1)] == ["c", "b"]


async def test_list_query_matches_titles_and_conversation_text(sessions: SessionStore) -> None:
    await sessions.create("trip", title="Trip to Porto")
    await sessions.append("cake", user("How long do I bake a cheesecake?"))
    await sessions.append("cake", assistant("About 55 minutes at 160°C."))
    await sessions.append("tools", {"type": "tool_result", "content": "porto.txt", "ts": 3.0})
    await sessions.append("pct", user("Is 100% cotton better?"))

    assert [s.id for s in await sessions.list(query="porto")] == ["trip"]
    assert [s.id for s in await sessions.list(query="CHEESECAKE")] == ["cake"]
    assert [s.id for s in await sessions.list(query="160°C")] == ["cake"]
    assert [s.id for s in await sessions.list(query="100%")] == ["pct"]
    assert await sessions.list(query="0%c") == []


async def test_concurrent_appends_keep_every_record_in_order(sessions: SessionStore) -> None:
    ids = await asyncio.gather(*(sessions.append(f"s{n % 3}", user(f"m{n}")) for n in range(150)))

    assert len(set(ids)) == 150
    assert ids == sorted(ids)
    for k in range(3):
        stored = await sessions.messages(f"s{k}", limit=1000)
        assert [r["content"] for r in stored] == [f"m{n}" for n in range(k, 150, 3)]
        info = await sessions.get(f"s{k}")
        assert info is not None and info.message_count == 50


async def stored_window(db: Database, session_id: str, limit: int) -> list[dict[str, Any]]:
    """The window as a fresh read of the file gives it (no cache), in a second store."""
    return (await SessionStore(db).load_window(session_id, limit)).records


async def test_the_window_kept_between_reads_follows_appends_rewinds_and_summaries(
    db: Database, sessions: SessionStore
) -> None:
    ids = await fill(sessions, "s", 6)
    assert [r["id"] for r in (await sessions.load_window("s", 4)).records] == ids[2:]
    # Appends after the read show at once, as stored (an `id` in the record is not kept).
    ids.append(await sessions.append("s", user("six")))
    ids.append(await sessions.append("s", {**assistant("seven \ud800"), "id": 1}))
    window = await sessions.load_window("s", 4)
    assert window.records == await stored_window(db, "s", 4)
    assert window.records[-1]["text"] == "seven \ufffd"
    # A wider read than the one kept goes to the file.
    assert [r["id"] for r in (await sessions.load_window("s", 8)).records] == ids
    # A rewind drops the tail, a summary the head.
    assert await sessions.rewind("s", ids[6]) == ""
    assert [r["id"] for r in (await sessions.load_window("s", 8)).records] == ids[:6]
    await sessions.mark_summarized("s", ids[3], "Counted to three.")
    window = await sessions.load_window("s", 8)
    assert ([r["id"] for r in window.records], window.summary) == (ids[4:6], "Counted to three.")
    assert await sessions.delete("s")
    assert (await sessions.load_window("s", 8)).records == []


async def test_a_window_read_sees_what_another_connection_wrote(
    db: Database, sessions: SessionStore
) -> None:
    await fill(sessions, "s", 3)
    await sessions.load_window("s", 10)
    other = await Database.open(db.path)  # another process, as far as SQLite can tell
    try:
        await SessionStore(other).append("s", user("from the CLI"))
    finally:
        await other.close()
    await sessions.get("s")  # the next call on this connection notices the foreign write
    window = await sessions.load_window("s", 10)
    assert [r["content"] for r in window.records][-1] == "from the CLI"
