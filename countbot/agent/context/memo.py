"""Values made from an object, remembered by the object's identity while it is kept.

A session's window comes back as the same record objects turn after turn (the store keeps them),
so the history entries made from them, and their upper-bound copies, need making only once. The
memo holds each object it answers for, so its id cannot be reused by another object meanwhile;
it forgets the oldest past a total weight (about the characters it keeps alive, plus a fixed cost
an item for the objects around them, so a daemon of many short messages keeps thousands of
items, not tens of thousands); what is still in use is simply made and put again.
"""

from __future__ import annotations

from typing import Generic, TypeVar

V = TypeVar("V")

# Characters of text a memo may keep alive; a window of ordinary turns is a few hundred KB.
MEMO_WEIGHT = 2_000_000
# What an item weighs beyond its text: the key record, the value and their containers (a short
# message's objects take a few hundred bytes whatever its length).
ITEM_COST = 500


class IdentityMemo(Generic[V]):
    """`get` what `put` stored for the very same object; see the module docstring."""

    def __init__(self, max_weight: int = MEMO_WEIGHT, item_cost: int = ITEM_COST) -> None:
        self._max_weight = max_weight
        self._item_cost = item_cost
        self._items: dict[int, tuple[object, V, int]] = {}  # in the order they were put
        self._weight = 0

    def get(self, key: object) -> V | None:
        item = self._items.get(id(key))
        return item[1] if item is not None and item[0] is key else None

    def put(self, key: object, value: V, weight: int) -> V:
        """Remember `value` for `key` (returned, for chaining)."""
        old = self._items.pop(id(key), None)
        if old is not None:
            self._weight -= old[2]
        weight += self._item_cost
        self._items[id(key)] = (key, value, weight)
        self._weight += weight
        while self._weight > self._max_weight and len(self._items) > 1:
            oldest = next(iter(self._items))
            self._weight -= self._items.pop(oldest)[2]
        return value
