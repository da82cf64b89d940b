"""Finding the user's private values in what a tool would send out.

Private text is indexed once, as it enters a turn: *values* (digit runs of four or more, such
as PINs, account and phone numbers; tokens of six or more characters mixing letters and digits,
such as passwords and keys; e-mail addresses) and *phrases* (every 20-character run of the text,
sampled every 4 characters, so any shared run of 23 characters or more is found). Both sides are
compared in one normal form: lower case, letters and digits only, so case, spaces and separators
do not hide a value; values are also found written backwards. An outbound payload is looked at
as written, percent-decoded (twice, `+` as space), with each base64/base64url run decoded (at
every alignment; runs of one letter case or digits only are words, not base64) and each hex run
decoded. What a model can compute beyond that (a cipher, spelled-out
digits, one character per request) is not matched: the destination rules cover it.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from urllib.parse import unquote_plus

PHRASE = 20
STRIDE = 4
_MIN_VALUE = 4
_TOKEN_LENGTH = 6
_MAX_HITS = 20
# Runs longer than this are not decoded as base64/hex (the decoding would be the cost).
_MAX_RUN = 8192

_SEPARATORS = re.compile(r"[\W_]+")
_DIGITS = re.compile(r"\d{4,}")
_SPACED_DIGITS = re.compile(r"\+?\d(?:[ ./-]?\d){5,}")
# Tokens with a digit in them (passwords, keys, codes), and e-mail addresses.
_DIGIT_TOKEN = re.compile(r"(?<![\w.+-])(?=[\w.+-]*\d)[\w.+-]+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{6,}={0,2}")
_HEX = re.compile(r"[0-9a-fA-F]{8,}")


def normalize(text: str) -> str:
    """Lower case, letters and digits only (any script): how both sides are compared."""
    return _SEPARATORS.sub("", text.lower())


def private_values(text: str) -> set[str]:
    """The value-like pieces of a private text, in normal form (see the module docstring)."""
    found = {normalize(m) for m in _DIGITS.findall(text)}
    found.update(normalize(m) for m in _SPACED_DIGITS.findall(text))
    if "@" in text:
        found.update(normalize(m) for m in _EMAIL.findall(text))
    for token in _DIGIT_TOKEN.findall(text):
        value = normalize(token)
        if len(value) >= _TOKEN_LENGTH and not value.isdigit():
            found.add(value)
    return {value for value in found if len(value) >= _MIN_VALUE}


@dataclass(frozen=True, slots=True)
class Hit:
    """A private piece found in a payload: its normal form and where it came from."""

    value: str
    source: str


class PrivateIndex:
    """Values and sampled phrases of the private text a turn has seen, with their sources."""

    def __init__(self) -> None:
        self._values: dict[str, dict[str, str]] = {}
        self._phrases: dict[str, str] = {}
        self.indexed_chars = 0

    def add(self, source: str, text: str) -> None:
        """Index `text` (bounded by the caller: this is linear in its length)."""
        for value in private_values(text):
            for form in (value, value[::-1]):  # a value sent backwards is the same value
                self._values.setdefault(form[:_MIN_VALUE], {}).setdefault(form, source)
        flat = normalize(text)
        phrases = self._phrases
        for start in range(0, len(flat) - PHRASE + 1, STRIDE):
            phrases.setdefault(flat[start : start + PHRASE], source)
        self.indexed_chars += len(text)

    def find(self, forms: str) -> list[Hit]:
        """Private pieces in `forms` (from `payload_forms`), at most a handful, no repeats."""
        hits: dict[str, Hit] = {}
        values, phrases = self._values.get, self._phrases.get
        for start in range(len(forms) - _MIN_VALUE + 1):
            bucket = values(forms[start : start + _MIN_VALUE])
            if bucket:
                for value, source in bucket.items():
                    if forms.startswith(value, start):
                        hits.setdefault(value, Hit(value, source))
            phrase = forms[start : start + PHRASE]
            source = phrases(phrase)
            if source is not None:
                hits.setdefault(phrase, Hit(phrase, source))
            if len(hits) >= _MAX_HITS:
                break
        return list(hits.values())


def payload_forms(payload: str) -> str:
    """Every reading of `payload` the matcher compares, normalized and joined by NULs."""
    texts = [payload]
    for _ in range(2):
        decoded = unquote_plus(texts[-1])
        if decoded == texts[-1]:
            break
        texts.append(decoded)
    decoded_runs = [run for text in texts for run in _decoded_runs(text)]
    return "\0".join(form for text in texts + decoded_runs if (form := normalize(text)))


def _decoded_runs(text: str) -> list[str]:
    found = []
    for run in _BASE64.findall(text):
        # A word in one case (or a number) is text, not base64: base64 of a value mixes them.
        plain = run.isdigit() or (run.isalpha() and (run.islower() or run.isupper()))
        if len(run) <= _MAX_RUN and not plain:
            found.extend(_base64_readings(run.rstrip("=")))
    for run in _HEX.findall(text):
        if len(run) <= _MAX_RUN:
            for offset in (0, 1):
                piece = run[offset:]
                found.append(bytes.fromhex(piece[: len(piece) // 2 * 2]).decode("utf-8", "replace"))
    return found


def _base64_readings(run: str) -> list[str]:
    """The run decoded from each of its first four positions (a value may start mid-run)."""
    readings = []
    standard = run.replace("-", "+").replace("_", "/")
    for offset in range(4):
        piece = standard[offset:]
        piece = piece[: len(piece) // 4 * 4 + (len(piece) % 4 if len(piece) % 4 > 1 else 0)]
        try:
            raw = base64.b64decode(piece + "=" * (-len(piece) % 4))
        except (binascii.Error, ValueError):
            continue
        readings.append(raw.decode("utf-8", "replace"))
    return readings
