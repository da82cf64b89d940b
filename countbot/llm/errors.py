"""Model-call failures as values: what went wrong, said plainly, and whether trying again can help.

Works on litellm's exception classes, the openai SDK's, httpx's and plain OS errors without
importing any of them: an exception of a library that is not loaded cannot be in hand.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Literal

FailureKind = Literal[
    "rate_limit",
    "timeout",
    "connection",
    "unreachable",
    "server",
    "auth",
    "context_window",
    "content_policy",
    "not_found",
    "bad_request",
    "cut_off",
    "not_a_stream",
    "unknown",
]

# "unreachable" is retryable for the fallbacks and the user, though a provider does not retry it.
_RETRYABLE_KINDS = frozenset(
    {"rate_limit", "timeout", "connection", "unreachable", "server", "cut_off"}
)
# litellm invents status codes for client-side failures (408 timeout, 500 connection): not HTTP's.
_NETWORK_KINDS = frozenset({"timeout", "connection", "unreachable"})
# How OpenAI-compatible servers word a request over the context window, or a refusal.
_CONTEXT_WINDOW_MARKERS = (
    "context length",
    "context_length_exceeded",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "reduce the length",
)
_CONTENT_POLICY_MARKERS = ("content_policy", "content policy", "content management policy")
# How a client library words a stream that ended before the provider's finish. Older litellm
# ended such a stream quietly (the stream accumulator notices the missing finish itself); newer
# litellm (1.110) raises httpx.RemoteProtocolError with this text. Both are a cut-off answer.
_CUT_OFF_MARKERS = ("stream ended before a finish_reason",)
# Why nothing answered at the address, by what the OS or the HTTP client said (lower case).
_UNREACHABLE_REASONS = (
    ("connection refused", "connection refused"),
    ("all connection attempts failed", "connection refused"),
    ("connect call failed", "connection refused"),
    ("name or service not known", "host not found"),
    ("nodename nor servname", "host not found"),
    ("temporary failure in name resolution", "host not found"),
    ("no route to host", "no route to host"),
    ("network is unreachable", "network unreachable"),
)
_MAX_DETAIL = 400
# (module, class) pairs checked only when the module is already loaded.
_TIMEOUT_CLASSES = (("httpx", "TimeoutException"), ("openai", "APITimeoutError"))
_CONNECTION_CLASSES = (
    ("httpx", "TransportError"),
    ("openai", "APIConnectionError"),
    ("aiohttp", "ClientConnectionError"),
    ("aiohttp", "ClientPayloadError"),
)

_SUMMARIES: dict[FailureKind, str] = {
    "rate_limit": "Rate limited by the model provider",
    "timeout": "The model did not answer in time",
    "connection": "The connection to the model provider failed",
    "unreachable": "Cannot reach the model provider",
    "server": "The model provider had an internal error",
    "auth": "The model provider rejected the API key or its permissions",
    "context_window": "The conversation is too long for the model's context window",
    "content_policy": "The model provider refused the request under its content policy",
    "not_found": "The model or endpoint was not found",
    "bad_request": "The model provider rejected the request",
    "cut_off": "The model's answer was cut off",
    "not_a_stream": "The model server did not answer with a stream",
    "unknown": "The model call failed",
}

# "sk-...", "Bearer ...", "api_key=..." style credentials that may be echoed in provider errors.
_SECRET_PATTERNS = (
    re.compile(r"\b((?:sk|pk|rk|gsk|xai)-)[A-Za-z0-9_\-*]{6,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)((?:api[_-]?key|token|secret)\s*[=:]\s*)['\"]?[^\s'\",&]{6,}"),
)
# litellm prefixes messages with "litellm.RateLimitError: RateLimitError: OpenAIException - ",
# sometimes twice ("litellm.ContextWindowExceededError: litellm.BadRequestError: ...").
_LIBRARY_PREFIX = re.compile(
    r"^(?:(?:litellm\.\w+|\w+(?:Error|Exception)):\s*)*(?:\w+Exception\s*-\s*)?"
)


@dataclass(frozen=True, slots=True)
class ModelFailure:
    """A classified failure; `message` is safe to show, `retry_after` in seconds."""

    message: str
    retryable: bool
    kind: FailureKind
    status_code: int | None = None
    retry_after: float | None = None


def classify_error(
    exc: BaseException, *, secrets: Iterable[str] = (), url: str | None = None
) -> ModelFailure:
    """Turn any exception raised by a model call into a `ModelFailure`.

    `url` is the address the call went to, named when nothing answers there.
    """
    cause = _unwrap(exc)
    reason = _unreachable_reason(exc)
    if reason is not None:
        where = redact(url, secrets) if url else "the model provider"
        return ModelFailure(f"Cannot reach {where}: {reason}", True, "unreachable")
    status = _status_code(cause)
    kind = _kind(cause, status)
    retryable = kind in _RETRYABLE_KINDS
    if kind in _NETWORK_KINDS:
        status = None
    summary = _SUMMARIES[kind] + (f" (HTTP {status})" if status is not None else "")
    # A bare timeout or reset says nothing more than the summary; an unknown error needs its type.
    detail = _detail(cause, secrets) or ("" if retryable else type(cause).__name__)
    message = f"{summary}: {detail}" if detail else summary
    return ModelFailure(message, retryable, kind, status, _retry_after(cause))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with the given secrets and anything shaped like a credential masked."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + "***", text)
    return text


def _unwrap(exc: BaseException) -> BaseException:
    """litellm re-raises stream failures as MidStreamFallbackError around the real cause."""
    original = getattr(exc, "original_exception", None)
    return original if isinstance(original, BaseException) else exc


def _unreachable_reason(exc: BaseException) -> str | None:
    """ "connection refused", "host not found", ... when the failure is that nothing answered at
    the address; None otherwise. Looks through litellm's and httpx's wrapping of the OS error."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen or len(seen) > 20:
            continue
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        text = str(current).lower()
        for marker, reason in _UNREACHABLE_REASONS:
            if marker in text:
                return reason
        for linked in (
            current.__cause__,
            current.__context__,
            getattr(current, "original_exception", None),
        ):
            if isinstance(linked, BaseException):
                stack.append(linked)
    return None


def _status_code(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
    return status if isinstance(status, int) and 100 <= status <= 599 else None


def _kind(exc: BaseException, status: int | None) -> FailureKind:
    # The OpenAI client refuses to send without a key and litellm reports that as a 500;
    # retrying cannot help, and "internal error" would send the user looking in the wrong place.
    text = str(exc).lower()
    if "missing credentials" in text:
        return "auth"
    if any(marker in text for marker in _CUT_OFF_MARKERS):
        return "cut_off"
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        if isinstance(exc, litellm.ContextWindowExceededError):
            return "context_window"
        if isinstance(exc, litellm.ContentPolicyViolationError):
            return "content_policy"
        if isinstance(exc, litellm.Timeout):
            return "timeout"
        if isinstance(exc, litellm.APIConnectionError):
            return "connection"
    if _is_timeout(exc):
        return "timeout"
    if _is_connection_error(exc):
        return "connection"
    if status is None:
        return "unknown"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status in (400, 413):
        # What litellm recognizes by its classes, read from the provider's own words.
        text = str(getattr(exc, "message", "") or exc).lower()
        if any(marker in text for marker in _CONTEXT_WINDOW_MARKERS):
            return "context_window"
        if any(marker in text for marker in _CONTENT_POLICY_MARKERS):
            return "content_policy"
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    # 409 is a lock or conflict on the provider's side that clears by itself.
    if status == 409 or status >= 500:
        return "server"
    return "bad_request"


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError):
        return True
    return any(_loaded_isinstance(exc, module, name) for module, name in _TIMEOUT_CLASSES)


def _is_connection_error(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError | EOFError):
        return True
    return any(_loaded_isinstance(exc, module, name) for module, name in _CONNECTION_CLASSES)


def _loaded_isinstance(exc: BaseException, module: str, name: str) -> bool:
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(cls, type) and isinstance(exc, cls)


def _detail(exc: BaseException, secrets: Iterable[str]) -> str:
    raw = str(getattr(exc, "message", "") or exc)
    text = _provider_message(_LIBRARY_PREFIX.sub("", " ".join(raw.split())))
    text = redact(text, secrets)
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"


def _provider_message(text: str) -> str:
    """The provider's own words from a JSON error body, or `text` if it is not one.

    litellm's HTTP handler passes the body on verbatim (`{"error": {"message": ...}}` and the
    like), where the OpenAI SDK would have unwrapped it.
    """
    if not text.startswith("{"):
        return text
    try:
        body = json.loads(text)
    except ValueError:
        return text
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return message.strip() if isinstance(message, str) and message.strip() else text


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (Retry-After / retry-after-ms), if it said."""
    for source in (getattr(exc, "litellm_response_headers", None), _response_headers(exc)):
        if source is None:
            continue
        seconds = _parse_retry_after(source)
        if seconds is not None:
            return seconds
    return None


def _response_headers(exc: BaseException) -> Mapping[str, Any] | None:
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def _parse_retry_after(headers: Mapping[str, Any]) -> float | None:
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
