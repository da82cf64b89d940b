"""The child server on its own: litellm talks to it like any OpenAI-compatible server, it wants
its key, and it stops with its owner."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from countbot.llm.litellm_provider import LiteLLMProvider
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.types import ChatRequest, StreamDone, TextPart, UserMessage
from countbot.local_model.catalogue import DEFAULT_MODEL, find
from countbot.local_model.server import LocalServer, LocalServerError, LocalServerOptions

pytest.importorskip("xllamacpp", reason="the local extra: pip install -e '.[local]'")

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(300)]


async def test_litellm_streams_from_the_child_and_the_child_stops_with_its_owner(
    models_dir: Path,
) -> None:
    entry = find(DEFAULT_MODEL)
    assert entry is not None
    server = LocalServer(LocalServerOptions(models_dir / entry.file, threads=1))
    url = await server.url()
    pid = server.pid
    try:
        async with httpx.AsyncClient(trust_env=False) as http:
            assert (await http.get(url + "/models")).status_code == 401  # loopback, but keyed
        provider = LiteLLMProvider(
            "openai/smollm2", ProviderOptions(api_base=url, api_key=server.api_key, max_retries=0)
        )
        request = ChatRequest((UserMessage((TextPart("Say hi."),)),), max_tokens=8)
        events = [event async for event in provider.stream(request)]
        done = events[-1]
        assert isinstance(done, StreamDone) and done.message.text.strip()
        assert done.usage.completion_tokens > 0
    finally:
        await server.stop()
    assert server.pid is None and pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone, not orphaned


async def test_a_missing_model_file_is_said_in_words(tmp_path: Path) -> None:
    server = LocalServer(LocalServerOptions(tmp_path / "nope.gguf"))
    with pytest.raises(LocalServerError, match="countbot models pull"):
        await server.url()
