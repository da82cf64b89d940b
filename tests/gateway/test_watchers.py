"""Fan-out: every watcher gets every event; a slow one is dropped instead of blocking."""

from __future__ import annotations

from countbot.agent.events import TextChunk, TurnDone
from countbot.gateway.events import SessionEvent
from countbot.gateway.watchers import EventHub, Watcher


def _drain(watcher: Watcher) -> list[object]:
    items = []
    while not watcher.queue.empty():
        items.append(watcher.queue.get_nowait())
    return items


def test_two_watchers_see_the_same_numbered_stream() -> None:
    hub = EventHub()
    tab1, tab2 = Watcher(), Watcher()
    hub.subscribe("s", tab1)
    hub.subscribe("s", tab2)
    for text in ("a", "b"):
        hub.publish("s", TextChunk(text))
    first, second = _drain(tab1), _drain(tab2)
    assert first == second and len(first) == 2
    assert all(isinstance(e, SessionEvent) for e in first)


def test_a_full_watcher_is_dropped_and_the_others_keep_receiving() -> None:
    hub = EventHub()
    slow, fast = Watcher(max_pending=2), Watcher()
    hub.subscribe("s", slow)
    hub.subscribe("s", fast)
    for n in range(5):
        hub.publish("s", TextChunk(str(n)))
    assert slow.dropped.is_set()
    assert hub.watching("s") == 1
    assert len(_drain(fast)) == 5


def test_resubscribing_with_last_seq_replays_what_was_missed() -> None:
    hub = EventHub()
    tab = Watcher()
    hub.subscribe("s", tab)
    seen = hub.publish("s", TextChunk("seen")).seq
    hub.drop(tab)
    _drain(tab)
    hub.publish("s", TextChunk("missed 1"))
    hub.publish("s", TextChunk("missed 2"))
    assert hub.subscribe("s", tab, last_seq=seen)
    replayed = _drain(tab)
    assert [f["content"] for f in replayed] == ["missed 1", "missed 2"]  # type: ignore[index]
    assert [f["seq"] for f in replayed] == [seen + 1, seen + 2]  # type: ignore[index]


def test_a_session_created_again_after_eviction_never_reuses_a_seq() -> None:
    hub = EventHub(idle_logs=1)
    last = [hub.publish("a", TextChunk(str(n))).seq for n in range(3)][-1]
    hub.publish("b", TextChunk("x"))
    hub.publish("c", TextChunk("x"))  # pushes "a" out
    assert hub.publish("a", TextChunk("again")).seq > last


def test_a_connection_keeps_no_log_of_every_finished_chat_it_watched() -> None:
    """A tab left open over many chats: the finished ones beyond the hub's few recent logs are
    let go (a client that missed their end reloads the history), a chat whose turn runs and
    the recent ones keep theirs."""
    hub = EventHub(idle_logs=2)
    tab = Watcher()
    hub.subscribe("running", tab)
    started = hub.publish("running", TextChunk("streaming")).seq
    seen = {}
    for name in ("old", "recent 1", "recent 2"):
        hub.subscribe(name, tab)
        hub.publish(name, TextChunk("answer"))
        seen[name] = hub.publish(name, TurnDone("answer")).seq
    hub.publish("running", TextChunk("more"))
    second = Watcher()  # another tab, that missed the ends of these chats
    assert hub.subscribe("recent 2", second, last_seq=seen["recent 2"] - 2)
    assert hub.subscribe("running", second, last_seq=started)
    assert [f["type"] for f in _drain(second)] == ["stream", "done", "stream"]  # type: ignore[index]
    assert not hub.subscribe("old", second, last_seq=seen["old"] - 2)  # gone: it reloads
    assert _drain(second) == []
    assert hub.publish("old", TextChunk("next turn")).seq > seen["old"]


def test_a_connection_follows_only_its_recent_and_running_chats_it_sent_in() -> None:
    """A tab left open while its user sends in chat after chat: it keeps getting the events of
    a chat whose turn runs and of the few it sent in last, and of one it asked to watch, but
    holds no subscription to every finished chat it ever sent in."""
    hub = EventHub(sent_sessions=2)
    tab = Watcher()
    hub.subscribe("shown", tab)  # the chat the tab shows, asked for
    hub.follow_sent("shown", tab)
    hub.follow_sent("running", tab)
    hub.publish("running", TextChunk("streaming"))
    chats = [f"chat {n}" for n in range(100)]
    for name in chats:
        hub.follow_sent(name, tab)
        hub.publish(name, TextChunk("answer"))
        hub.publish(name, TurnDone("answer"))
    _drain(tab)
    assert sum(hub.watching(name) for name in chats) == 2
    for name in ("shown", "running", "chat 98", "chat 99", "chat 0", "chat 97"):
        hub.publish(name, TextChunk(f"news in {name}"))
    got = [item.session_id for item in _drain(tab) if isinstance(item, SessionEvent)]
    assert got == ["shown", "running", "chat 98", "chat 99"]
    hub.unsubscribe("shown", tab)  # the tab moved on: the chat it showed is let go too
    hub.publish("shown", TextChunk("after"))
    assert _drain(tab) == []
