"""The offline model's tokenizer vocabulary in a MARISA trie rather than Python strings.

The package's pure-Python tokenizer keeps its 128,000 pieces as a list of strings and every
prefix of every piece in a dict (251,000 strings: much of the vector worker's own memory, the
most of it). Its code asks only `prefixes.get(text[i:j])` (a piece's id + 1, 0 for a prefix that
is no piece, None past every piece) and `pieces[id]`, `len(pieces)`. `Prefixes` and `Pieces`
answer the same from one trie (marisa-trie) and two arrays of ints, a small fraction of it, so the
tokenizer's own code runs on them and cuts every text into the same tokens
(tests/memory_index/test_mapped_model.py). A lookup is a call into the trie: tokenizing and
embedding a text take a little more CPU than with the dicts (docs/vector_search.md).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import overload

import marisa_trie


class Prefixes:
    """The tokenizer's `prefix -> piece id + 1 (0: only a prefix)` dict, read-only."""

    __slots__ = ("_trie", "_values")

    def __init__(self, trie: marisa_trie.Trie, values: array[int]) -> None:
        self._trie = trie
        self._values = values  # by the trie's key id

    def get(self, key: str, default: int | None = None) -> int | None:
        index = self._trie.get(key)
        return default if index is None else self._values[index]


class Pieces(Sequence[str]):
    """The tokenizer's piece strings by piece id, read-only."""

    def __init__(self, trie: marisa_trie.Trie, keys: array[int]) -> None:
        self._trie = trie
        self._keys = keys  # each piece's key id in the trie

    def __len__(self) -> int:
        return len(self._keys)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._trie.restore_key(key) for key in self._keys[index]]
        return self._trie.restore_key(self._keys[index])


def compact(prefixes: dict[str, int], pieces: list[str]) -> tuple[bytes, bytes, bytes]:
    """The trie, the values by key id and the pieces' key ids, as bytes to store."""
    trie = marisa_trie.Trie(prefixes)
    values = array("i", bytes(4 * len(trie)))
    for key, value in prefixes.items():
        values[trie[key]] = value
    keys = array("i", [trie[piece] for piece in pieces])  # every piece is its own prefix
    return trie.tobytes(), values.tobytes(), keys.tobytes()


def attach(trie: bytes, values: bytes, keys: bytes) -> tuple[Prefixes, Pieces]:
    """What `compact` stored, ready to stand in for the tokenizer's dict and list."""
    loaded = marisa_trie.Trie().frombytes(trie)
    return Prefixes(loaded, array("i", values)), Pieces(loaded, array("i", keys))
