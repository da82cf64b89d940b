"""The one way CountBot imports litellm: lazily, once, off the event loop, quietly and lean.

Importing litellm takes seconds and, unconfigured, fetches a price list from the internet, retries
on its own and prints help banners; CountBot does its own retries and error reporting. Each model
call also costs CPU in litellm; the settings here are the ones measured to cut it without changing
what a call does (bench/llm_call.py, docs/llm_call.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from types import ModuleType

from countbot.speedups.warm_imports import LITELLM_FIRST_CALL, warm

# Module attributes CountBot sets on litellm (the benchmark compares them with litellm's defaults).
LITELLM_SETTINGS: dict[str, object] = {
    "suppress_debug_info": True,
    # Providers reject parameters they do not know (e.g. temperature on reasoning models).
    "drop_params": True,
    # Retries, fallbacks and error reporting are ours (llm/retry.py, LiteLLMProvider).
    "num_retries": 0,
}
# OpenAI and most OpenAI-compatible providers go through litellm's own HTTP handler (the one it
# already uses for DeepSeek, Groq and OpenRouter) instead of the OpenAI SDK, which re-walks every
# message and tool schema against its type hints on each request: the largest per-call cost, and
# one that grows with the history. litellm reads it on every call; setting it to False in the
# environment brings the SDK back.
OPENAI_HANDLER_SWITCH = "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"

_lock = threading.Lock()
_litellm: ModuleType | None = None


def load_litellm() -> ModuleType:
    """Import and configure litellm (blocking the first time; thread-safe)."""
    global _litellm
    if _litellm is None:
        with _lock:
            if _litellm is None:
                _litellm = _import_configured()
    return _litellm


async def preload_litellm() -> ModuleType:
    """`load_litellm` without blocking the event loop; free once litellm is loaded."""
    if _litellm is not None:
        return _litellm
    return await asyncio.to_thread(load_litellm)


def _import_configured() -> ModuleType:
    # Use the bundled model map instead of downloading one at import time, and skip .env loading.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_MODE"] = "PRODUCTION"
    os.environ.setdefault(OPENAI_HANDLER_SWITCH, "True")
    import litellm

    # Not set: turn_off_message_logging. CountBot registers no logging callbacks, so there is no
    # one to hide messages from, and with it on litellm deep-copies and redacts every request.
    for name, value in LITELLM_SETTINGS.items():
        setattr(litellm, name, value)
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warm(LITELLM_FIRST_CALL)  # what its first call would import on the event loop
    return litellm
