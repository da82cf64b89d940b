"""Text as the full-text index sees it: words for spaced scripts, single characters for the rest.

SQLite's `unicode61` tokenizer splits on spaces and punctuation, so a run of Chinese (or Japanese,
Thai, Korean without spaces) would be one giant token. Before indexing, every character of an
unsegmented script gets spaces around it; a query turns such a run into overlapping two-character
phrases (`"牙 医"`), the classic bigram search. That finds one- and two-character terms, which
the `trigram` tokenizer cannot (it needs three), and BM25 still ranks rare bigrams above common
ones. English words go through the `porter` stemmer on both sides.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# Scripts written without spaces between words: CJK ideographs (and extensions, compatibility),
# kana, Hangul, Thai, Lao, Khmer, Myanmar.
_UNSEGMENTED = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff"
)


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """One unsegmented character, a run of them, a spaced word: compiled at first use (a cost
    paid by every process that imports the index at start-up otherwise)."""
    return (
        re.compile(f"([{_UNSEGMENTED}])"),
        re.compile(f"[{_UNSEGMENTED}]+"),
        re.compile(rf"[^\W{_UNSEGMENTED}_]+", re.UNICODE),
    )


# Words that say nothing about which fact is meant; dropping them keeps OR queries selective.
_STOPWORD_TEXT = """a about above after again all also am an and any are as at be been before
    being below
    between both but by can could did do does doing done down during each even ever for from
    further get got had has have having he her here hers herself him himself his how i if in
    into is it its itself just know let like me might more most much must my myself no nor not
    now of off on once only or other our ours ourselves out over own please remember said same
    say she should so some such tell than that the their theirs them themselves then there these
    they this those through to too under until up us very want was we were what when where which
    while who whom why will with would you your yours yourself yourselves"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Characters too common in Chinese to mean anything alone (used only for one-character runs).
_CJK_STOP_CHARS = frozenset("的了是我你他她它们在有和就不也都还吗呢吧啊么这那个什")


# Greetings, thanks and assent: a message of nothing else is about nothing memory holds (auto-
# recall brought a months-old "Hello!" back for every "hello").
_PHATIC_TEXT = """hello hi hey hiya howdy thanks thank thx cheers bye goodbye good morning
    afternoon evening night ok okay yes yeah yep nope sure great cool nice fine alright welcome"""
PHATIC = frozenset(_PHATIC_TEXT.split())
_PHATIC_CJK = (
    "早上好",
    "晚上好",
    "你好",
    "您好",
    "谢谢",
    "多谢",
    "早安",
    "晚安",
    "再见",
    "拜拜",
    "好的",
    "哈喽",
    "在吗",
)
# A number of fewer digits is a quantity (2+2, 15% of 80), not a key like a code or a year: it
# counts in a message's content, but a message of nothing else has nothing to recall.
_KEY_DIGITS = 3
# Two words are the same for `coverage` when they share this long a prefix (or are one the other's
# prefix, from three letters): "allergic"/"allergies", "plan"/"planned", as the stemmer would.
_STEM_PREFIX = 5


@dataclass(frozen=True, slots=True)
class ContentUnits:
    """What a message is about, as auto-recall's relevance rule counts it: content words and the
    characters of unsegmented scripts (each one a unit: a word boundary is unknown there)."""

    words: frozenset[str]
    chars: frozenset[str]

    def __bool__(self) -> bool:
        """Whether the message is about anything memory may hold (not only small numbers)."""
        return bool(self.chars) or any(_is_key(word) for word in self.words)

    def coverage(self, text: str) -> float:
        """The share of the units `text` holds: 1.0 when it holds all of them."""
        if not self:
            return 0.0
        held = sum(char in text for char in self.chars)
        if self.words:
            lowered = text.lower()
            found = set(_words(lowered))
            held += sum(_has_word(word, lowered, found) for word in self.words)
        return held / (len(self.words) + len(self.chars))


def content_units(text: str) -> ContentUnits:
    """The content of a message: words (numbers too) that are not stopwords or greetings, and
    the unsegmented-script characters that are not the commonest nor a greeting's."""
    for phrase in () if text.isascii() else _PHATIC_CJK:
        text = text.replace(phrase, " ")
    words = {
        word
        for word in _words(text.lower())
        if word not in STOPWORDS and word not in PHATIC and (len(word) > 1 or word.isdigit())
    }
    chars: set[str] = set()
    if not text.isascii():
        for run in _patterns()[1].findall(text):
            chars.update(char for char in run if char not in _CJK_STOP_CHARS)
    return ContentUnits(frozenset(words), frozenset(chars))


def _is_key(word: str) -> bool:
    return len(word) >= _KEY_DIGITS or not word.isdigit()


def _words(text: str) -> list[str]:
    """The spaced-script words of lowercased `text`."""
    return (_ascii_word() if text.isascii() else _patterns()[2]).findall(text)


def _has_word(word: str, text: str, found: set[str]) -> bool:
    """Whether lowercased `text` (its words `found`) has `word`, or a word sharing its first
    letters with it: as many as the shorter has, up to `_STEM_PREFIX`, and at least three
    ("allergies" has "allergic", "planned" has "plan", as the stemmer would). Set lookups and
    a substring search: auto-recall checks a few hits per turn, on the event loop."""
    if word in found:
        return True
    if word.isdigit() or len(word) < 3:
        return False
    cut = min(len(word), _STEM_PREFIX)
    if any(word[:k] in found for k in range(3, cut)):
        return True  # a shorter word of the text that the word starts with
    prefix = word[:cut]
    at = text.find(prefix)
    while at >= 0:  # a word of the text starting with the word's first letters
        if at == 0 or not text[at - 1].isalnum():
            return True
        at = text.find(prefix, at + 1)
    return False


@functools.cache
def _ascii_word() -> re.Pattern[str]:
    """A spaced word in ASCII text, which has no unsegmented character: this pattern compiles
    at once, so a process that only sees ASCII (a `chat -m` in English) never compiles the
    others."""
    return re.compile(r"[^\W_]+")


def indexable(text: str) -> str:
    """`text` with each unsegmented-script character standing alone, for `unicode61`."""
    if text.isascii():
        return text
    char, _, _ = _patterns()
    return char.sub(r" \1 ", text)


def query_terms(text: str) -> list[str]:
    """The FTS5 phrases for a free-text query: content words and CJK bigrams, deduplicated."""
    ascii_only = text.isascii()
    word_of = _ascii_word() if ascii_only else _patterns()[2]
    terms: list[str] = []
    for word in word_of.findall(text):
        word = word.lower()
        if (len(word) > 1 or word.isdigit()) and word not in STOPWORDS:
            terms.append(f'"{word}"')
    for run in () if ascii_only else _patterns()[1].findall(text):
        if len(run) == 1:
            if run not in _CJK_STOP_CHARS:
                terms.append(f'"{run}"')
            continue
        terms.extend(f'"{run[i]} {run[i + 1]}"' for i in range(len(run) - 1))
    return list(dict.fromkeys(terms))


def estimate_recall_tokens(text: str) -> int:
    """A model-agnostic token estimate: a CJK character is about one token, Latin ~4 characters.

    Used for the auto-recall budget, where loading a real tokenizer per turn would cost more than
    the precision is worth.
    """
    if text.isascii():
        return (len(text) + 3) // 4
    unsegmented = sum(len(run) for run in _patterns()[1].findall(text))
    return unsegmented + (len(text) - unsegmented + 3) // 4
