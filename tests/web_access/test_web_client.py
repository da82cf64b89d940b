"""The web tools of a runtime share one HTTP client: built at the first call in a worker thread
(with what the first request imports), closed with the runtime."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx
import pytest

from countbot.config.settings import Settings, WebToolSettings
from countbot.llm.types import ToolCall
from countbot.runtime.assembly import open_runtime
from countbot.tools.base import ToolContext
from tests.web_access.local_http import LocalHTTPServer, Reply

SEARCH = {"results": [{"title": "Tide tables", "url": "https://tides.example/", "content": ""}]}


async def test_fetches_and_searches_share_one_client_closed_with_the_runtime(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[httpx.AsyncClient] = []
    build = httpx.AsyncClient.__init__

    def counted(client: httpx.AsyncClient, *args: Any, **kwargs: Any) -> None:
        made.append(client)
        build(client, *args, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "__init__", counted)
    routes = {
        "/page": Reply(200, b"Calm seas", {"Content-Type": "text/plain"}),
        "/searx/search": Reply(
            200, json.dumps(SEARCH).encode(), {"Content-Type": "application/json"}
        ),
    }
    with LocalHTTPServer(routes) as server:
        settings.tools.web = WebToolSettings(
            allow_private=True, search_backend="searxng", search_url=server.url("/searx/")
        )
        runtime = await open_runtime(settings)
        try:
            ctx = ToolContext("s1", settings.workspace)
            calls = [("web_fetch", {"url": server.url("/page")})] * 2
            calls += [("web_search", {"query": "tide"})] * 2
            for number, (name, args) in enumerate(calls):
                result = await runtime.tools.execute(ToolCall(f"c{number}", name, "", args), ctx)
                assert result.status == "ok", result.content
        finally:
            await runtime.close()
    assert len(made) == 1, f"{len(made)} clients for {len(calls)} calls"
    assert made[0].is_closed


FIRST_FETCH = """
import asyncio, sys, threading
from pathlib import Path
from countbot.config.settings import WebToolSettings
from countbot.tools.base import ToolContext
from countbot.web_access.http_client import WebClient
from countbot.web_access.web_fetch import WebFetchTool
from tests.web_access.local_http import LocalHTTPServer, Reply

on_the_loop = []

class Watch:  # sees every import; records those the event loop's thread makes
    def find_spec(self, name, path=None, target=None):
        if threading.current_thread() is threading.main_thread():
            on_the_loop.append(name)
        return None

async def main():
    client = WebClient()
    fetch = WebFetchTool(WebToolSettings(allow_private=True), client)
    page = Reply(200, b"<html><title>T</title><p>Calm</p></html>", {"Content-Type": "text/html"})
    with LocalHTTPServer({"/": page}) as server:
        sys.meta_path.insert(0, Watch())
        result = await fetch.execute({"url": server.url("/")}, ToolContext("s", Path(".")))
        sys.meta_path.pop(0)
    await client.aclose()
    print(result.status)
    print(" ".join(on_the_loop))

asyncio.run(main())
"""
# What the first request would load at first use: the HTTP stack and the page converter.
LOADED_OFF_THE_LOOP = ("httpx", "httpcore", "anyio", "sniffio", "h11", "countbot.text.html_text")


def test_the_first_fetch_imports_nothing_of_the_http_stack_on_the_event_loop() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_FETCH], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    status, imported = done.stdout.splitlines()
    assert status == "ok"
    assert [m for m in imported.split() if m.startswith(LOADED_OFF_THE_LOOP)] == []
