"""Modules a library imports lazily at its first use, imported beforehand in a worker thread.

litellm imports several modules during its first call (the MCP handler for any call with tools),
and httpx's first request imports httpcore's and anyio's backends: on the event loop, where every
other session waits. The callers import these with the library, off the loop. A name a different
version of the library lacks is skipped. Measured by `bench/llm_call.py` and
`bench/agent_turn.py` (docs/llm_call.md, docs/agent_turn.md).
"""

from __future__ import annotations

import contextlib
import importlib

# What litellm imports during its first call (`llm/litellm_import.py` warms them).
LITELLM_FIRST_CALL = (
    "openai.resources",
    "litellm.proxy._types",
    "litellm._service_logger",
    "litellm.llms.litellm_proxy",
    "litellm.litellm_core_utils.default_encoding",
    "litellm.responses.mcp.chat_completions_handler",
)
# What httpx's first request imports: httpcore's anyio backend, anyio's asyncio backend and TLS
# streams (`web_access/http_client.py` warms them with the client).
HTTPX_FIRST_REQUEST = (
    "httpcore._backends.anyio",
    "anyio._backends._asyncio",
    "anyio.streams.tls",
)


def warm(names: tuple[str, ...]) -> None:
    """Import `names` now (blocking: call it in a worker thread); missing ones are skipped."""
    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
