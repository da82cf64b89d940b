"""Counting tokens offline: tiktoken reading the tokenizer files litellm ships, never downloading.

tiktoken looks for its files in `TIKTOKEN_CACHE_DIR` under the SHA-1 of their download URL, which
is how litellm bundles them (`litellm_core_utils/tokenizers/`). Pointing the variable there, as
litellm itself does at import, makes tiktoken read them locally without importing litellm. Other
vendors' tokenizers are not public: their counts are estimates with cl100k_base, as litellm's are.

Only tiktoken's Rust tables are kept, not its `Encoding`: that object keeps the ranks it was built
from as a Python dict of bytes as well (measured retained in a process, after a collection: a
third less; docs/cold_start.md). Counting needs nothing the Rust side lacks.
Building those tables holds the GIL for the whole constructor (~0.1 s for cl100k_base, ~0.2 s for
o200k_base on a quiet machine; reading the ranks file before it is Python that lets other threads
run), so the daemon never loads an encoding: it asks `token_worker`, a child process, through
`token_process.TokenProcess`. This module is what that child runs.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from countbot.llm.model_info import litellm_data
from countbot.llm.openai_format import to_openai_messages
from countbot.llm.types import Message

if TYPE_CHECKING:
    from tiktoken._tiktoken import CoreBPE

TOKENIZER_FOLDER = ("litellm_core_utils", "tokenizers")
# Model families tokenized with o200k_base; everything else is counted with cl100k_base.
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")
# OpenAI's framing per message (role, separators) and for the reply's priming.
_PER_MESSAGE = 3
_PER_REPLY = 3

_lock = threading.Lock()


class TokenizerUnavailable(RuntimeError):
    """The bundled tokenizer files are not there (litellm missing or too old)."""


@functools.lru_cache(maxsize=64)
def encoding_name(model: str) -> str:
    """The tiktoken encoding for `model` (routing prefixes ignored; asked per history entry)."""
    name = model.rsplit("/", 1)[-1].lower()
    return "o200k_base" if name.startswith(_O200K_PREFIXES) else "cl100k_base"


class Tokenizer:
    """One encoding's Rust tables, counting text as tiktoken's `encode(text,
    disallowed_special=())` does: special tokens are counted as the text they are."""

    __slots__ = ("_core",)

    def __init__(self, core: CoreBPE) -> None:
        self._core = core

    def count(self, text: str) -> int:
        """Tokens in `text` (encoding releases the GIL: a thread may count a long text)."""
        try:
            return len(self._core.encode_ordinary(text))
        except UnicodeEncodeError:  # lone surrogates: replaced, as tiktoken's `encode` does
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return len(self._core.encode_ordinary(text))


@functools.lru_cache(maxsize=4)
def encoding(name: str) -> Tokenizer:
    """An encoding loaded from the bundled files (blocking, once per encoding)."""
    folder = litellm_data(*TOKENIZER_FOLDER)
    if folder is None:
        raise TokenizerUnavailable("litellm's bundled tokenizer files were not found")
    from tiktoken._tiktoken import CoreBPE
    from tiktoken_ext import openai_public

    with _lock:
        # litellm sets the same variable to the same folder when it is imported.
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        try:
            spec = getattr(openai_public, name)()
        except Exception as exc:  # tiktoken would otherwise try the network and fail offline
            raise TokenizerUnavailable(f"cannot load tokenizer {name}: {exc}") from exc
        # No special tokens: `encode_ordinary` never looks for them. The ranks' dict goes with
        # `spec` when this returns.
        return Tokenizer(CoreBPE(spec["mergeable_ranks"], {}, spec["pat_str"]))


def count_text(text: str, model: str) -> int:
    """Tokens in `text` for `model`."""
    return encoding(encoding_name(model)).count(text)


def count_texts(texts: Iterable[str], name: str) -> list[int]:
    """Tokens in each of `texts` with encoding `name`; without the bundled files, an upper bound
    (their UTF-8 bytes: a byte-level BPE token is at least one byte), so no budget is passed."""
    try:
        size = encoding(name).count
    except TokenizerUnavailable:
        return [len(text.encode("utf-8", "surrogatepass")) for text in texts]
    return [size(text) if text else 0 for text in texts]


def count_messages(messages: Iterable[Message], model: str) -> int:
    """Tokens a request with these messages uses for `model`, framing included (images are not
    counted: their cost depends on the vendor's resizing)."""
    size = encoding(encoding_name(model)).count
    total = _PER_REPLY
    for wire in to_openai_messages(list(messages)):
        total += _PER_MESSAGE
        for key, value in wire.items():
            if isinstance(value, str):
                total += size(value)
            elif key == "content" and isinstance(value, list):
                total += sum(size(part.get("text", "")) for part in value)
            elif key == "tool_calls":
                for call in value:
                    function = call["function"]
                    text = function["name"] + function["arguments"]
                    total += size(text)
    return total
