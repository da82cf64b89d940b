from __future__ import annotations

from countbot.agent.context.memo import ITEM_COST, MEMO_WEIGHT, IdentityMemo


def test_a_value_is_found_only_for_the_very_same_object_and_the_oldest_go_past_the_weight() -> None:
    memo: IdentityMemo[str] = IdentityMemo(max_weight=10, item_cost=0)
    first, equal = {"id": 1}, {"id": 1}
    memo.put(first, "one", 4)
    assert memo.get(first) == "one"
    assert memo.get(equal) is None  # equal is not the same record
    second, third = {"id": 2}, {"id": 3}
    memo.put(second, "two", 4)
    memo.put(first, "one again", 4)  # put again: now the newest
    memo.put(third, "three", 4)
    assert (memo.get(first), memo.get(second), memo.get(third)) == ("one again", None, "three")


def test_many_short_values_are_bounded_by_their_count_too() -> None:
    """A long-running daemon of short messages: each item costs its objects, not only its text."""
    memo: IdentityMemo[str] = IdentityMemo()
    keys = [{"id": n} for n in range(20_000)]
    for key in keys:
        memo.put(key, "a short message of seventy characters or so, like most chat turns", 70)
    kept = sum(memo.get(key) is not None for key in keys)
    assert kept == MEMO_WEIGHT // (70 + ITEM_COST)
    assert memo.get(keys[-1]) is not None and memo.get(keys[0]) is None
