from __future__ import annotations

from countbot.agent.context.memo import IdentityMemo


def test_a_value_is_found_only_for_the_very_same_object_and_the_oldest_go_past_the_weight() -> None:
    memo: IdentityMemo[str] = IdentityMemo(max_weight=10)
    first, equal = {"id": 1}, {"id": 1}
    memo.put(first, "one", 4)
    assert memo.get(first) == "one"
    assert memo.get(equal) is None  # equal is not the same record
    second, third = {"id": 2}, {"id": 3}
    memo.put(second, "two", 4)
    memo.put(first, "one again", 4)  # put again: now the newest
    memo.put(third, "three", 4)
    assert (memo.get(first), memo.get(second), memo.get(third)) == ("one again", None, "three")
