"""The one way CountBot imports litellm: lazily, once, off the event loop, and quietly.

Importing litellm takes seconds and, unconfigured, fetches a price list from the internet, retries
on its own and prints help banners; CountBot does its own retries and error reporting.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import threading
from types import ModuleType

# litellm imports these lazily during its first call, on the event loop (about a second in all,
# the MCP handler for any call with tools); importing them here keeps that off the loop. Names
# a different litellm version lacks are skipped.
_FIRST_CALL_MODULES = (
    "openai.resources",
    "litellm.proxy._types",
    "litellm._service_logger",
    "litellm.llms.litellm_proxy",
    "litellm.litellm_core_utils.default_encoding",
    "litellm.responses.mcp.chat_completions_handler",
)

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
    import litellm

    litellm.suppress_debug_info = True
    # Providers reject parameters they do not know (e.g. temperature on reasoning models).
    litellm.drop_params = True
    # Retries, fallbacks and error reporting are ours (llm/retry.py, LiteLLMProvider).
    litellm.num_retries = 0
    litellm.turn_off_message_logging = True
    litellm.disable_streaming_logging = True
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    for module in _FIRST_CALL_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    return litellm
