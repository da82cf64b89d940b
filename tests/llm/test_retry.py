"""The retry policy: capped exponential backoff with full jitter, Retry-After honoured."""

from __future__ import annotations

from countbot.llm.retry import RetryPolicy


def test_backoff_doubles_up_to_the_cap_scaled_by_jitter() -> None:
    policy = RetryPolicy(max_retries=10, base_delay=1.0, max_delay=8.0, rng=lambda: 1.0)

    assert [policy.delay(n) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def test_full_jitter_can_wait_anywhere_down_to_zero() -> None:
    assert RetryPolicy(rng=lambda: 0.0).delay(3) == 0.0
    assert RetryPolicy(base_delay=2.0, rng=lambda: 0.25).delay(2) == 1.0


def test_retry_after_replaces_backoff_but_is_capped() -> None:
    policy = RetryPolicy(max_retry_after=60.0, rng=lambda: 0.0)

    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=3600.0) == 60.0
    assert policy.delay(1, retry_after=-5.0) == 0.0


def test_no_delay_once_retries_are_used_up() -> None:
    policy = RetryPolicy(max_retries=2)

    assert policy.delay(3) is None
    assert RetryPolicy(max_retries=0).delay(1) is None
