"""Splits a shell command into its simple commands, the way the guard needs to see them.

One pass over the text, so the cost grows linearly with it: quotes are removed from words
(`r'm'` reads as `rm`), a quoted string with spaces in it is data and becomes `…` (so writing
"never run rm -rf /" into a README is not a command), except when it is the program of
`sh -c`, `eval`, `python -c`, `perl -e`… which is split as a command itself (a few levels deep).
`$(…)`, backticks, `<(…)` and grouping parentheses start a new simple command that remembers the
command it sits in. Not a shell parser: good enough for a tripwire, never a security boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A quoted string right after one of these is a program, not data.
_PROGRAM_FLAGS = frozenset({"-c", "-e", "-E", "-lc", "-ic", "-ec", "-xc", "--command", "--eval"})
_PROGRAM_TAKERS = frozenset({"eval", "watch", "ssh", "su", "sudo", "doas", "pkexec"})
_MAX_DEPTH = 3
# A run of characters that mean nothing to the scanner: taken in one step.
_PLAIN = re.compile(r"[^\\'\"$<>()`{}&|;\n \t\r]+")
_ENDS = ("", " ", "\t", "\n", ";", "&", "|", ")")
_SEPARATORS = {"&&": "&&", "||": "||", ";;": ";", "|&": "|"}
DATA = "…"


@dataclass(frozen=True, slots=True)
class Segment:
    """One simple command: its words, what joined it to the previous one, where it sits."""

    words: tuple[str, ...]
    # ";", "&&", "||", "|", "&", "\n", "$(", "<(", ">(", "`", "(", ")", "-c" ("" for the first).
    joiner: str
    # For a command inside `$(…)`/`<(…)`/backticks or `sh -c '…'`: the enclosing command's name.
    parent: str

    @property
    def text(self) -> str:
        return " ".join(self.words)


def split_commands(command: str) -> list[Segment]:
    """The simple commands in `command`, in order."""
    scanner = _Scanner()
    scanner.scan(command, 0)
    scanner.end_segment("")
    return scanner.segments


class _Scanner:
    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self._words: list[str] = []
        self._word: list[str] = []
        self._in_word = False
        self._joiner = ""
        # (what opened it, the enclosing command's name) for each open substitution or program.
        self._open: list[tuple[str, str]] = []

    def scan(self, text: str, depth: int) -> None:
        i, n = 0, len(text)
        while i < n:
            plain = _PLAIN.match(text, i)
            if plain:
                self._add(plain.group())
                i = plain.end()
                continue
            char, pair = text[i], text[i : i + 2]
            if char == "\\" and i + 1 < n:
                self._add(text[i + 1] if text[i + 1] != "\n" else "")
                i += 2
            elif char in "'\"" or pair in ("$'", '$"'):
                i = self._quoted(text, i + (char == "$"), depth)
            elif pair in ("$(", "<(", ">("):
                self._push(pair)
                i += 2
            elif char == "`":
                self._pop() if self._open and self._open[-1][0] == "`" else self._push("`")
                i += 1
            elif not self._in_word and (char == "(" or pair in ("{ ", "{\n")):
                self.end_segment("(")
                i += 1
            elif char == ")" or (
                char == "}" and not self._in_word and text[i + 1 : i + 2] in _ENDS
            ):
                self._pop() if self._open and self._open[-1][0] != "-c" else self.end_segment(")")
                i += 1
            elif pair in _SEPARATORS:
                self.end_segment(_SEPARATORS[pair])
                i += 2
            elif char in ";|&\n" and not self._redirects(text, i):
                self.end_segment(char)
                i += 1
            elif char in " \t\r":
                self._end_word()
                i += 1
            else:
                self._add(char)
                i += 1

    @staticmethod
    def _redirects(text: str, i: int) -> bool:
        """`&>file`, `2>&1`, `<&3`: the & belongs to a redirection, it separates nothing."""
        return text[i] == "&" and (text[i + 1 : i + 2] == ">" or (i > 0 and text[i - 1] in "<>"))

    def _quoted(self, text: str, i: int, depth: int) -> int:
        quote, end = text[i], i + 1
        while end < len(text) and text[end] != quote:
            end += 2 if quote == '"' and text[end] == "\\" else 1
        content = text[i + 1 : end]
        if quote == '"' and ("$(" in content or "`" in content):
            # Substitutions run inside double quotes: read them as code, in this same command.
            self.scan(content, depth)
        elif self._takes_program() and depth < _MAX_DEPTH:
            self._push("-c")
            self.scan(content, depth + 1)
            self._pop()
        elif any(space in content for space in " \t\n"):
            self._add(DATA)
        else:
            self._add(content)
        return end + 1

    def _takes_program(self) -> bool:
        previous = self._words[-1] if self._words and not self._in_word else ""
        first = self._words[0].rsplit("/", 1)[-1] if self._words else ""
        return previous in _PROGRAM_FLAGS or first in _PROGRAM_TAKERS

    def _push(self, opener: str) -> None:
        """A nested command starts; the words so far are the command it sits in."""
        self._end_word()
        words = self._words
        if opener == "-c" and len(words) > 1 and words[-1] in _PROGRAM_FLAGS:
            parent = words[-2]  # `nohup sh -c '…'`: the program runs in sh
        else:
            parent = words[0] if words else (self._open[-1][1] if self._open else "")
        self._flush()
        self._open.append((opener, parent))
        self._joiner = opener

    def _pop(self) -> None:
        self.end_segment(")")
        if self._open:
            self._open.pop()

    def _add(self, text: str) -> None:
        self._in_word = True
        self._word.append(text)

    def _end_word(self) -> None:
        if self._in_word:
            self._words.append("".join(self._word))
        self._word, self._in_word = [], False

    def _flush(self) -> None:
        if self._words:
            parent = self._open[-1][1] if self._open else ""
            self.segments.append(Segment(tuple(self._words), self._joiner, parent))
        self._words = []

    def end_segment(self, joiner: str) -> None:
        self._end_word()
        self._flush()
        self._joiner = joiner
