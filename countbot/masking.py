"""Masking of secrets in text that leaves the process: tool output, logs, the audit trail.

One compiled alternation covers the registered secret values and the well-known token shapes, so
masking a page of output is a single regex pass. A masked secret keeps at most its first four
characters (`sk-a…****`), enough for a person to recognise which key it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "…****"
_MIN_KNOWN_LENGTH = 8

# Key names whose values are secrets (`api_key=…`, `"token": "…"`, `DB_PASSWORD: …`).
_SECRET_KEY_WORD = r"api[_-]?key|apikey|token|secret|passw(?:or)?d"
_SECRET_KEY_RE = re.compile(_SECRET_KEY_WORD, re.IGNORECASE)
_PRIVATE_KEY_END = r"-----END [A-Z0-9 ]*PRIVATE KEY-----"
_KEY_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]{16,}")

# Each pattern has a `pre` group (kept as is) and a `sec` group (masked); a third group, when
# present, is kept too. Values of secret-named keys shorter than six characters or purely numeric
# stay visible: `max_tokens: 4096` is configuration, not a credential.
_PATTERNS: tuple[str, ...] = (
    # Private key blocks; a block cut short (a truncated output) is masked to the end of the text.
    r"(?P<pre>-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(?P<sec>[\s\S]*?)"
    rf"(?P<post>{_PRIVATE_KEY_END}|\Z)",
    rf"(?P<pre>(?i:{_SECRET_KEY_WORD})[\w.-]{{0,40}}[\"']?\s*[:=]\s*(?P<q>[\"'])?)"
    r"(?P<sec>(?!\d+\b)(?(q)[^\"'\n]{6,}|[^\s\"',;&}]{6,}))",
    r"(?P<pre>\b(?i:bearer)\s+)(?P<sec>[A-Za-z0-9._~+/=-]{8,})",
    r"(?P<pre>)(?P<sec>\bsk-[A-Za-z0-9_-]{16,})",
    r"(?P<pre>)(?P<sec>\b\d{8,10}:[A-Za-z0-9_-]{35}\b)",
    r"(?P<pre>)(?P<sec>\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}))",
    r"(?P<pre>)(?P<sec>\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)",
    r"(?P<pre>)(?P<sec>\bxox[abposre]-[A-Za-z0-9-]{10,})",
    r"(?P<pre>)(?P<sec>\bAIza[0-9A-Za-z_-]{35})",
)


def mask_value(secret: str) -> str:
    """The recognisable stand-in for one secret: a short prefix, never more than a quarter."""
    return secret[: min(4, len(secret) // 4)] + MASK


def _numbered(pattern: str, index: int) -> str:
    """Python forbids repeated group names, so every alternative gets its own suffix."""
    for name in ("pre", "sec", "post", "q"):
        pattern = pattern.replace(f"(?P<{name}>", f"(?P<{name}{index}>")
        pattern = pattern.replace(f"(?({name})", f"(?({name}{index})")
    return pattern


class SecretMasker:
    """Masks registered secret values and well-known token shapes in text and nested data."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        self._known: set[str] = set()
        self._regex: re.Pattern[str] | None = None
        for value in known:
            self.add(value)

    def add(self, value: str) -> None:
        """Register a secret value (an API key from config); values under 8 chars are ignored."""
        value = value.strip()
        if len(value) >= _MIN_KNOWN_LENGTH and value not in self._known:
            self._known.add(value)
            self._regex = None

    def mask(self, text: str) -> str:
        return _mask_headless_keys(self._compiled().sub(self._replace, text))

    def contains_secret(self, text: str) -> bool:
        return self._compiled().search(text) is not None

    def mask_obj(self, obj: Any) -> Any:
        """A copy of dicts/lists/tuples with secrets masked; values of secret-named keys always."""
        if isinstance(obj, str):
            return self.mask(obj)
        if isinstance(obj, dict):
            return {key: self._mask_item(key, value) for key, value in obj.items()}
        if isinstance(obj, list | tuple):
            return type(obj)(self.mask_obj(item) for item in obj)
        return obj

    def _mask_item(self, key: Any, value: Any) -> Any:
        if isinstance(key, str) and isinstance(value, str) and value and _SECRET_KEY_RE.search(key):
            return mask_value(value)
        return self.mask_obj(value)

    def _compiled(self) -> re.Pattern[str]:
        if self._regex is None:
            alternatives = [_numbered(p, i) for i, p in enumerate(_PATTERNS)]
            if self._known:
                # Longest first, so a value that contains another is masked whole.
                values = sorted(self._known, key=len, reverse=True)
                known = "|".join(re.escape(v) for v in values)
                alternatives.insert(0, f"(?P<pre{len(_PATTERNS)}>)(?P<sec{len(_PATTERNS)}>{known})")
            self._regex = re.compile("|".join(alternatives))
        return self._regex

    @staticmethod
    def _replace(match: re.Match[str]) -> str:
        groups = match.groupdict()
        index = next(i for i in range(len(_PATTERNS) + 1) if groups.get(f"sec{i}") is not None)
        secret = groups[f"sec{index}"]
        return groups[f"pre{index}"] + mask_value(secret) + (groups.get(f"post{index}") or "")


def _mask_headless_keys(text: str) -> str:
    """Mask key bodies left above an END line whose BEGIN line was cut off by truncation.

    A line walk rather than a regex: scanning back from END over base64 lines is quadratic as a
    pattern on large base64 output.
    """
    if "PRIVATE KEY-----" not in text:
        return text
    kept: list[str] = []
    body: list[str] = []
    for line in text.splitlines(keepends=True):
        if _KEY_BODY_LINE.fullmatch(line.rstrip("\r\n")):
            body.append(line)
            continue
        is_end = re.match(_PRIVATE_KEY_END, line) is not None
        kept.append(MASK + "\n" if body and is_end else "".join(body))
        kept.append(line)
        body = []
    kept.extend(body)
    return "".join(kept)
