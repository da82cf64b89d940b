"""A bounded memory of recent ids (in process only): the messages a bot sent itself, which some
platforms echo back to it. What was received is remembered durably (`dedup.py`)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

REMEMBERED = 4096


class RecentIds:
    """Remembers the last `capacity` message keys; `first_time` is True only once per key."""

    def __init__(self, capacity: int = REMEMBERED) -> None:
        self._capacity = capacity
        self._seen: OrderedDict[Hashable, None] = OrderedDict()

    def first_time(self, key: Hashable) -> bool:
        if key in self._seen:
            self._seen.move_to_end(key)
            return False
        self._seen[key] = None
        if len(self._seen) > self._capacity:
            self._seen.popitem(last=False)
        return True

    def __contains__(self, key: Hashable) -> bool:
        return key in self._seen
