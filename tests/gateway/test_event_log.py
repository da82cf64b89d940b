"""Per-session numbering and the replay buffer a reconnecting client catches up from."""

from __future__ import annotations

from countbot.agent.events import TextChunk
from countbot.gateway.event_log import SessionLog


def _log_with(count: int, *, size: int = 5, first: int = 100) -> SessionLog:
    log = SessionLog("s", first, size)
    for n in range(count):
        log.append(TextChunk(str(n)))
    return log


def test_events_are_numbered_consecutively_from_the_first_seq() -> None:
    log = SessionLog("s", 100)
    seqs = [log.append(TextChunk(c)).seq for c in "abc"]
    assert seqs == [100, 101, 102]
    assert log.last_seq == 102


def test_replay_returns_exactly_the_missed_events() -> None:
    log = _log_with(4)
    missed, complete = log.since(101)
    assert complete
    assert [e.event.content for e in missed] == ["2", "3"]
    assert log.since(103) == ([], True)


def test_a_client_that_saw_nothing_of_this_stream_gets_all_and_a_warning() -> None:
    log = _log_with(3)
    missed, complete = log.since(99)
    assert complete and [e.seq for e in missed] == [100, 101, 102]
    missed, complete = log.since(5)  # from before a restart
    assert not complete and [e.seq for e in missed] == [100, 101, 102]
    missed, complete = log.since(10_000)  # from the future: another stream
    assert not complete


def test_a_gap_older_than_the_buffer_is_reported() -> None:
    log = _log_with(8, size=5)  # seqs 100..107, buffer holds 103..107
    missed, complete = log.since(101)
    assert not complete
    assert [e.seq for e in missed] == [103, 104, 105, 106, 107]
    assert log.since(102)[1]
