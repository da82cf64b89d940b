"""Masking of secrets in text that leaves the process: tool output, logs, the audit trail.

One compiled alternation covers the registered secret values and the well-known token shapes. It
runs over a window of a few KB at a time (`mask_steps`), so a tool result of megabytes can be masked
on the event loop without stalling it: a match that reaches the end of what was read is read again
with more room, so a window boundary never splits a secret. A masked secret keeps at most its first
four characters (`sk-a…****`), enough for a person to recognise which key it was.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from typing import Any

from countbot.common.cooperative import Steps, finish

MASK = "…****"
_MIN_KNOWN_LENGTH = 8

# Key names whose values are secrets (`api_key=…`, `"token": "…"`, `DB_PASSWORD: …`,
# `aws_secret_access_key = …`, kube's `client-key-data: …`).
_SECRET_KEY_WORD = (
    r"api[_-]?key|apikey|token|secret|passw(?:or)?d|client[_-]key[_-]data|private[_-]?key"
)
_SECRET_KEY_RE = re.compile(_SECRET_KEY_WORD, re.IGNORECASE)
_PRIVATE_KEY_END = r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_KEY_BODY_LINE = re.compile(r"[A-Za-z0-9+/=]{16,}")
# A token starts where no token character stands before it. Without this, a long run of token
# characters would be scanned again from each of its positions: quadratic time on hostile output.
_START = r"(?<![\w-])"
# Text is masked a window at a time (a regex pass is slow per character, so a window is a short
# step); a match may reach `_MARGIN` characters past its window and still be judged whole (a
# longer one is read again with twice the room, so the margin sets the pace, not what is found).
_WINDOW = 2048
_MARGIN = 512
# What `str.splitlines` ends a line at.
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile(f"[{_LINE_BREAKS}]")


# Tokens recognisable by their prefix alone, masked whole. One alternative for all of them: the
# regex engine then tests the boundary once per position instead of once per shape.
_TOKEN_SHAPES = (
    # Provider keys: OpenAI sk-/sk-proj-, Anthropic sk-ant-, OpenRouter sk-or-, DeepSeek sk-.
    r"sk-[\w-]{16,}+",
    r"gsk_[A-Za-z0-9]{20,}+|hf_[A-Za-z0-9]{30,}+|xai-[A-Za-z0-9]{40,}+",
    r"pplx-[A-Za-z0-9]{40,}+|r8_[A-Za-z0-9]{30,}+|AIza[\w-]{35}",
    # Stripe secret and restricted keys, webhook secrets.
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}+|whsec_[A-Za-z0-9]{20,}+",
    # AWS access key ids (their secrets are caught by the `…secret…=` key rule).
    r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![\w-])",
    # GitHub, GitLab, Slack, npm, PyPI, SendGrid.
    r"gh[pousr]_[A-Za-z0-9]{36,}+|github_pat_\w{22,}+",
    r"gl(?:pat|dt|rt|ptt|soat|cbt)-[\w-]{20,}+",
    r"xox[abposre]-[A-Za-z0-9-]{10,}+|xapp-[A-Za-z0-9-]{10,}+",
    r"npm_[A-Za-z0-9]{36,}+|pypi-[\w-]{50,}+|SG\.[\w-]{16,}+\.[\w-]{16,}+",
)


def _token(body: str) -> str:
    """A whole token (masked from its first character) that starts at a token boundary."""
    return rf"(?P<pre>)(?P<sec>{_START}(?:{body}))"


# Each pattern has a `pre` group (kept as is) and a `sec` group (masked); a `post` group, when
# present, is kept too. Values of secret-named keys shorter than six characters or purely numeric
# stay visible: `max_tokens: 4096` is configuration, not a credential. Runs use possessive
# quantifiers (`++`): a failed match never backtracks through them, so masking stays linear.
_PATTERNS: tuple[str, ...] = (
    # Private key blocks (PEM, OpenSSH, PGP); a block cut short by truncation is masked to the end.
    r"(?P<pre>-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)(?P<sec>[\s\S]*?)"
    rf"(?P<post>{_PRIVATE_KEY_END}|\Z)",
    rf"(?P<pre>(?i:{_SECRET_KEY_WORD})[\w.-]{{0,40}}[\"']?[ \t]*+[:=][ \t]*+(?P<q>[\"'])?)"
    r"(?P<sec>(?!\d+\b)(?(q)[^\"'\n]{6,}+|[^\s\"',;&}]{6,}+))",
    r"(?P<pre>\b(?i:bearer)[ \t]++)(?P<sec>[A-Za-z0-9._~+/=-]{8,}+)",
    r"(?P<pre>\b(?i:authorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?(?i:basic)[ \t]++)"
    r"(?P<sec>[A-Za-z0-9+/=]{8,}+)",
    # Docker's config.json: "auth": "<base64 of user:password>".
    r"(?P<pre>\"auth\"[ \t]*+:[ \t]*+\")(?P<sec>[A-Za-z0-9+/=]{8,}+)",
    # .netrc: `machine h login u password p`, or a `password p` line of its own.
    r"(?P<pre>\blogin[ \t]++\S++[ \t]++password[ \t]++)(?P<sec>\S++)",
    r"(?m:(?P<pre>^[ \t]*+password[ \t]++)(?P<sec>\S++)(?P<post>[ \t]*+)$)",
    # Credentials in a URL: scheme://user:password@host keeps the user and the host.
    r"(?P<pre>(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}+://[^\s:/@]++:)(?P<sec>[^\s@/]++)"
    r"(?P<post>@)",
    _token("|".join(_TOKEN_SHAPES)),
    # JSON Web Tokens: header.payload.signature, the first two base64url JSON objects.
    r"(?P<pre>)(?P<sec>(?<![\w.-])eyJ[\w-]{5,}+\.eyJ[\w-]{5,}+\.[\w-]*+)",
    # Telegram bot tokens.
    r"(?P<pre>)(?P<sec>\b\d{8,10}:[A-Za-z0-9_-]{35}\b)",
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
        """Register a secret value (an API key from config); values under 8 chars are ignored.

        Its base64 forms are registered too, so `echo $KEY | base64` does not carry it out.
        """
        value = value.strip()
        if len(value) < _MIN_KNOWN_LENGTH or value in self._known:
            return
        self._known.add(value)
        self._known.update(_base64_forms(value))
        self._regex = None

    def mask(self, text: str) -> str:
        return finish(self.mask_steps(text))

    def mask_steps(self, text: str) -> Steps[str]:
        """`mask` as bounded steps (`countbot.common.cooperative`): one window of text per step."""
        return (yield from MaskedText(self, text).read_steps())

    def contains_secret(self, text: str) -> bool:
        return self._compiled().search(text) is not None

    def mask_obj(self, obj: Any) -> Any:
        """A copy of dicts/lists/tuples with secrets masked; values of secret-named keys always."""
        return finish(self.mask_obj_steps(obj))

    def mask_obj_steps(self, obj: Any) -> Steps[Any]:
        """`mask_obj` as bounded steps (`countbot.common.cooperative`)."""
        if isinstance(obj, str):
            return (yield from self.mask_steps(obj))
        if isinstance(obj, dict):
            masked = {}
            for key, value in obj.items():
                masked[key] = yield from self._mask_item_steps(key, value)
            return masked
        if isinstance(obj, list | tuple):
            items = []
            for item in obj:
                items.append((yield from self.mask_obj_steps(item)))
            return type(obj)(items)
        return obj

    def _mask_item_steps(self, key: Any, value: Any) -> Steps[Any]:
        if isinstance(key, str) and isinstance(value, str) and value and _SECRET_KEY_RE.search(key):
            return mask_value(value)
        return (yield from self.mask_obj_steps(value))

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


def _base64_forms(value: str) -> set[str]:
    """The base64 (and base64url) text that `value` becomes inside any longer encoded input.

    Encoded data is cut in 3-byte groups, so the value starts at one of three offsets; for each,
    only the characters that depend on the value's bytes alone are kept.
    """
    raw = value.encode("utf-8")
    forms: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        first = -(-8 * offset // 6)  # ceil: the first character made of value bits only
        last = 8 * (offset + len(raw)) // 6
        core = encoded[first:last]
        if len(core) >= _MIN_KNOWN_LENGTH:
            forms.update({core, core.replace("+", "-").replace("/", "_")})
    return forms


class MaskedText:
    """The masked form of one text, made only as far as it is read.

    A long tool result reaches the model a page at a time (`tools/paging.py`): masking megabytes to
    show its first page would stall the loop for long (docs/masking.md). `read_steps(n)` masks
    window by window until the first `n` masked characters are final, and a later call goes on from
    there. Final means what masking the whole text would give: a window ends only between matches
    (one that reaches past what was read is read again with more room), and lines that may be the
    body of a private key whose BEGIN line was cut off are held until the line after them says
    (`_KeyBodies`). So a secret across the cut of a page is masked as a whole.
    """

    def __init__(self, masker: SecretMasker | None, text: str) -> None:
        self.source_length = len(text)
        self._text = text
        self._regex = masker._compiled() if masker is not None else None
        self._position = 0
        self._margin = _MARGIN
        self._done: list[str] = []
        self._length = 0
        self._keys = _KeyBodies() if "PRIVATE KEY-----" in text else None

    @property
    def complete(self) -> bool:
        """Whether the whole text is masked (`length` is then the whole masked length)."""
        return self._position >= len(self._text)

    @property
    def length(self) -> int:
        """How many masked characters are made so far."""
        return self._length

    def read_steps(self, length: int | None = None) -> Steps[str]:
        """The first `length` masked characters (all of them: None, or when there are fewer),
        in bounded steps."""
        if self._regex is None:  # nothing to mask with
            self._position = self._length = len(self._text)
            return self._text[:length]
        text = self._text
        while (length is None or self._length < length) and self._position < len(text):
            stop = min(len(text), self._position + _WINDOW)
            reach = min(len(text), stop + self._margin)
            window: list[str] = []
            resume = self._mask_window(stop, reach, window)
            # A match that ran to the end of what was read is read again with more room.
            self._margin = self._margin * 2 if resume == self._position else _MARGIN
            self._position = resume
            self._add("".join(window))
            yield
        done = "".join(self._done)
        self._done = [done]
        return done[:length]

    def _add(self, masked: str) -> None:
        if self._keys is not None:
            masked = self._keys.feed(masked, final=self.complete)
        self._done.append(masked)
        self._length += len(masked)

    def _mask_window(self, stop: int, reach: int, parts: list[str]) -> int:
        """Mask the matches that start in [position, stop) into `parts`; where the next starts.

        The scan reads up to `reach` (lookbehinds see what lies before the window). A match that
        ends at `reach` may go on past it, so it is left for the next window to begin with.
        """
        assert self._regex is not None
        text, start = self._text, self._position
        done = start
        for match in self._regex.finditer(text, start, reach):
            if match.start() >= stop:
                break
            parts.append(text[done : match.start()])
            if match.end() == reach < len(text):
                return match.start()
            parts.append(SecretMasker._replace(match))
            done = match.end()
        end = max(done, stop)
        parts.append(text[done:end])
        return end


class _KeyBodies:
    """Masks key bodies left above an END line whose BEGIN line was cut off by truncation; fed
    the masked text piece by piece, it returns what is decided and holds the rest.

    A line walk rather than a regex: scanning back from END over base64 lines is quadratic as a
    pattern on large base64 output. A run of base64 lines is held until the line after it shows
    whether it was a key's body.
    """

    def __init__(self) -> None:
        self._carry: list[str] = []  # the last line, not ended yet
        self._body: list[str] = []  # base64 lines that may be a key's body

    def feed(self, piece: str, *, final: bool) -> str:
        if not final and _LINE_BREAK.search(piece) is None:
            self._carry.append(piece)
            return ""
        lines = "".join([*self._carry, piece]).splitlines(keepends=True)
        self._carry = []
        # A line not ended yet, or ended by "\r" whose "\n" may follow: read with what comes.
        if not final and lines and (lines[-1][-1] not in _LINE_BREAKS or lines[-1][-1] == "\r"):
            self._carry.append(lines.pop())
        kept: list[str] = []
        for line in lines:
            if _KEY_BODY_LINE.fullmatch(line.rstrip("\r\n")):
                self._body.append(line)
                continue
            is_end = re.match(_PRIVATE_KEY_END, line) is not None
            kept.append(MASK + "\n" if self._body and is_end else "".join(self._body))
            kept.append(line)
            self._body = []
        if final:
            kept.extend(self._body)
            self._body = []
        return "".join(kept)
