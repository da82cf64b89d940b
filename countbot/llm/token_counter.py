"""Counting tokens offline: tiktoken reading the tokenizer files litellm ships, never downloading.

tiktoken looks for its files in `TIKTOKEN_CACHE_DIR` under the SHA-1 of their download URL, which
is how litellm bundles them (`litellm_core_utils/tokenizers/`). Pointing the variable there, as
litellm itself does at import, makes tiktoken read them locally without importing litellm. Other
vendors' tokenizers are not public: their counts are estimates with cl100k_base, as litellm's are.
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
    import tiktoken

TOKENIZER_FOLDER = ("litellm_core_utils", "tokenizers")
# Model families tokenized with o200k_base; everything else is counted with cl100k_base.
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")
# OpenAI's framing per message (role, separators) and for the reply's priming.
_PER_MESSAGE = 3
_PER_REPLY = 3

_lock = threading.Lock()
_loaded: set[str] = set()


class TokenizerUnavailable(RuntimeError):
    """The bundled tokenizer files are not there (litellm missing or too old)."""


@functools.lru_cache(maxsize=64)
def encoding_name(model: str) -> str:
    """The tiktoken encoding for `model` (routing prefixes ignored; asked per history entry)."""
    name = model.rsplit("/", 1)[-1].lower()
    return "o200k_base" if name.startswith(_O200K_PREFIXES) else "cl100k_base"


@functools.lru_cache(maxsize=4)
def encoding(name: str) -> tiktoken.Encoding:
    """A tiktoken encoding loaded from the bundled files (blocking, once per encoding)."""
    folder = litellm_data(*TOKENIZER_FOLDER)
    if folder is None:
        raise TokenizerUnavailable("litellm's bundled tokenizer files were not found")
    import tiktoken

    with _lock:
        # litellm sets the same variable to the same folder when it is imported.
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
        try:
            loaded = tiktoken.get_encoding(name)
        except Exception as exc:  # tiktoken would otherwise try the network and fail offline
            raise TokenizerUnavailable(f"cannot load tokenizer {name}: {exc}") from exc
        _loaded.add(name)
        return loaded


def is_loaded(model: str) -> bool:
    """Whether `model`'s tokenizer is in memory already (loading it costs ~40 MB and ~0.1 s)."""
    return encoding_name(model) in _loaded


def count_text(text: str, model: str) -> int:
    """Tokens in `text` for `model`."""
    return len(encoding(encoding_name(model)).encode(text, disallowed_special=()))


def count_messages(messages: Iterable[Message], model: str) -> int:
    """Tokens a request with these messages uses for `model`, framing included (images are not
    counted: their cost depends on the vendor's resizing)."""
    enc = encoding(encoding_name(model))
    total = _PER_REPLY
    for wire in to_openai_messages(list(messages)):
        total += _PER_MESSAGE
        for key, value in wire.items():
            if isinstance(value, str):
                total += len(enc.encode(value, disallowed_special=()))
            elif key == "content" and isinstance(value, list):
                total += sum(
                    len(enc.encode(part.get("text", ""), disallowed_special=())) for part in value
                )
            elif key == "tool_calls":
                for call in value:
                    function = call["function"]
                    text = function["name"] + function["arguments"]
                    total += len(enc.encode(text, disallowed_special=()))
    return total
