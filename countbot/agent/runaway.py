"""A runaway answer: a small model that lost its way repeats one passage until its limit.

SmolLM2 135M answers "Hello!" with a greeting, then the same greeting again and again until the
output limit, minutes on a CPU. A passage of some length repeated several times in a row at the
end of the answer ends the answer there, kept once. So does a wall of pictographs ("你好！" got
🔥 after 🔥): past a dozen in a row, the first few stay.
"""

from __future__ import annotations

import re

# The same passage this many times in a row is a runaway...
REPEATS = 3
# ...if it is at least this long and holds a letter (a table rule or a line of "=" is not).
MIN_PASSAGE = 16
# Only the answer's end is looked at, every few characters: bounded work per chunk.
TAIL = 900
CHECK_EVERY = 48
_LETTER = re.compile(r"[^\W\d_]")
# Emoji and other pictographs (with the joiner and variation selector they come with) in a row.
SYMBOL_RUN, SYMBOLS_KEPT = 12, 3
_PICTOGRAPHS = "\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u200d\ufe0f"
_SYMBOLS = re.compile(f"[{_PICTOGRAPHS}]{{{SYMBOL_RUN},}}$")


class RunawayWatch:
    """Feed it the growing answer; `repeated` says how much of its end is repetition."""

    def __init__(self) -> None:
        self._checked = 0

    def repeated(self, text: str) -> int:
        """Characters to drop so the passage repeated at the end of `text` stays once (0: none)."""
        if len(text) - self._checked < CHECK_EVERY:
            return 0
        self._checked = len(text)
        window = text[-TAIL:]
        tail = window.rstrip()
        for period in range(MIN_PASSAGE, len(tail) // REPEATS + 1):
            passage = tail[-period:]
            if tail.endswith(passage * REPEATS) and _LETTER.search(passage):
                # Back to where the repetition began; one copy of the passage from there stays.
                start = len(tail) - period * REPEATS
                while start > 0 and tail[start - 1] == tail[start - 1 + period]:
                    start -= 1
                return len(window) - (start + period)
        wall = _SYMBOLS.search(tail)
        return len(window) - (wall.start() + SYMBOLS_KEPT) if wall else 0
