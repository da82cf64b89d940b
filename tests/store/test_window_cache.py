from __future__ import annotations

from countbot.store.window_cache import WindowCache


def records(*ids: int) -> list[dict[str, object]]:
    return [{"type": "user", "id": i} for i in ids]


def test_a_window_is_served_only_while_it_can_answer_and_keeps_what_reads_asked_for() -> None:
    cache = WindowCache()
    cache.fill("s", records(1, 2, 3), [10, 10, 10], "earlier", limit=3, generation=0)
    assert cache.get("s", 2, 0) == (records(2, 3), "earlier")
    assert cache.get("s", 4, 0) is None  # a fourth record may be in the file
    assert cache.get("s", 2, 1) is None  # another connection wrote since
    cache.appended("s", {"type": "assistant", "id": 4}, 10)
    assert [r["id"] for r in cache.get("s", 3, 0)[0]] == [2, 3, 4]  # type: ignore[index]
    cache.fill("t", records(7), [10], None, limit=5, generation=0)
    assert cache.get("t", 5, 0) == (records(7), None)  # all it has: fewer than asked for
    assert cache.get("t", 0, 0) == ([], None)


def test_the_least_recently_used_sessions_go_first_past_the_bounds() -> None:
    cache = WindowCache(sessions=2, max_bytes=100)
    cache.fill("a", records(1), [40], None, limit=5, generation=0)
    cache.fill("b", records(2), [40], None, limit=5, generation=0)
    assert cache.get("a", 1, 0) is not None
    cache.fill("c", records(3), [10], None, limit=5, generation=0)  # three sessions: b goes
    assert cache.get("b", 1, 0) is None
    cache.appended("c", {"type": "user", "id": 4}, 60)  # 110 bytes: a goes
    assert cache.get("a", 1, 0) is None
    assert cache.get("c", 2, 0) is not None
    cache.drop("c")
    assert cache.get("c", 1, 0) is None
