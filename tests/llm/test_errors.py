"""Failures are classified so the agent retries what can succeed and explains what cannot."""

from __future__ import annotations

import email.utils
import json
import time
from types import ModuleType

import httpx
import pytest

from countbot.llm.errors import classify_error, redact
from countbot.llm.litellm_import import load_litellm

KEY = "sk-live-9d8c7b6a5f4e3d2c"
REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    return load_litellm()


def status_error(status: int, headers: dict[str, str] | None = None) -> httpx.HTTPStatusError:
    response = httpx.Response(status, headers=headers, request=REQUEST)
    return httpx.HTTPStatusError(f"HTTP {status}", request=REQUEST, response=response)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (TimeoutError(), "timeout"),
        (httpx.ReadTimeout("read timed out"), "timeout"),
        (httpx.ConnectError("connection refused"), "unreachable"),
        (httpx.ConnectError("connection failed"), "connection"),
        (httpx.RemoteProtocolError("peer closed connection"), "connection"),
        # litellm 1.110's wording for a stream that ended before the provider's finish.
        (
            httpx.RemoteProtocolError("Stream ended before a finish_reason was received"),
            "cut_off",
        ),
        (ConnectionResetError(104, "Connection reset by peer"), "connection"),
    ],
)
def test_network_failures_are_retryable(exc: BaseException, kind: str) -> None:
    failure = classify_error(exc)

    assert (failure.kind, failure.retryable, failure.status_code) == (kind, True, None)


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (429, "rate_limit", True),
        (408, "timeout", True),
        (409, "server", True),
        (500, "server", True),
        (503, "server", True),
        (529, "server", True),
        (400, "bad_request", False),
        (401, "auth", False),
        (403, "auth", False),
        (404, "not_found", False),
        (422, "bad_request", False),
    ],
)
def test_http_statuses(status: int, kind: str, retryable: bool) -> None:
    failure = classify_error(status_error(status))

    assert (failure.kind, failure.retryable) == (kind, retryable)


def test_retry_after_seconds_ms_and_http_date() -> None:
    in_30s = email.utils.formatdate(time.time() + 30, usegmt=True)

    seconds = classify_error(status_error(429, {"Retry-After": "12"}))
    millis = classify_error(status_error(429, {"retry-after-ms": "1500"}))
    dated = classify_error(status_error(503, {"Retry-After": in_30s}))
    garbage = classify_error(status_error(503, {"Retry-After": "soon"}))

    assert seconds.retry_after == 12.0
    assert millis.retry_after == 1.5
    assert dated.retry_after is not None and 20 < dated.retry_after <= 30
    assert garbage.retry_after is None


def test_litellm_special_cases_are_not_retried(litellm: ModuleType) -> None:
    window = litellm.ContextWindowExceededError("maximum context length is 8192", "m", "openai")
    policy = litellm.ContentPolicyViolationError("flagged", "m", "openai")

    assert classify_error(window).kind == "context_window"
    assert not classify_error(window).retryable
    assert classify_error(policy).kind == "content_policy"
    assert not classify_error(policy).retryable


def test_litellm_client_side_failures_carry_no_invented_status(litellm: ModuleType) -> None:
    timeout = classify_error(litellm.Timeout("Request timed out", "m", "openai"))
    connection = classify_error(litellm.APIConnectionError("refused", "openai", "m"))

    assert (timeout.kind, timeout.status_code, timeout.retryable) == ("timeout", None, True)
    assert (connection.kind, connection.status_code) == ("connection", None)


def test_mid_stream_wrapper_is_classified_by_its_cause(litellm: ModuleType) -> None:
    cause = litellm.APIConnectionError("Response payload is not completed", "openai", "m")
    wrapped = litellm.exceptions.MidStreamFallbackError("stream failed", "m", "openai", cause)

    failure = classify_error(wrapped)

    assert failure.kind == "connection"
    assert "Response payload is not completed" in failure.message


def test_message_is_plain_and_has_no_library_prefixes(litellm: ModuleType) -> None:
    exc = litellm.RateLimitError("OpenAIException - You exceeded your quota", "openai", "m")

    failure = classify_error(exc)

    assert failure.message == (
        "Rate limited by the model provider (HTTP 429): You exceeded your quota"
    )


def test_json_error_bodies_are_reduced_to_the_providers_message(litellm: ModuleType) -> None:
    openai_style = {"error": {"message": f"Slow down, {KEY}", "type": "rate_limit_error"}}
    anthropic_style = {"type": "error", "error": {"type": "overloaded", "message": "Overloaded"}}
    rate = litellm.RateLimitError(f"OpenAIException - {json.dumps(openai_style)}", "openai", "m")
    busy = litellm.InternalServerError(
        f"AnthropicException - {json.dumps(anthropic_style)}", "anthropic", "m"
    )
    odd = RuntimeError(json.dumps({"detail": "no message field here"}))

    assert classify_error(rate).message == (
        "Rate limited by the model provider (HTTP 429): Slow down, sk-***"
    )
    assert classify_error(busy).message.endswith("(HTTP 500): Overloaded")
    assert "no message field here" in classify_error(odd).message


def test_nested_library_prefixes_are_all_removed(litellm: ModuleType) -> None:
    window = litellm.ContextWindowExceededError("maximum context length is 8192", "m", "openai")

    assert classify_error(window).message == (
        "The conversation is too long for the model's context window (HTTP 400): "
        "maximum context length is 8192"
    )


def test_api_key_is_masked_in_messages(litellm: ModuleType) -> None:
    exc = litellm.AuthenticationError(f"Incorrect API key provided: {KEY}", "openai", "m")
    custom = "my-own-proxy-token-42"
    other = ValueError(f"Authorization: Bearer {custom} rejected, api_key={custom}")

    assert KEY not in classify_error(exc).message
    assert KEY[:12] not in classify_error(exc).message
    assert custom not in classify_error(other, secrets=[custom]).message
    assert custom not in classify_error(other).message


def test_unknown_errors_are_not_retried_and_name_their_type() -> None:
    failure = classify_error(ValueError())

    assert (failure.kind, failure.retryable) == ("unknown", False)
    assert "ValueError" in failure.message


def test_long_details_are_shortened() -> None:
    assert len(classify_error(RuntimeError("x" * 5000)).message) < 600


def test_redact_leaves_ordinary_text_alone() -> None:
    text = "max_tokens=4096 is too large for key-value caches"

    assert redact(text) == text
