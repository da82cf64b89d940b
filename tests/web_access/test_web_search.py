"""web_search against local fake SearXNG and Brave servers, and its configuration errors."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from countbot.config.secret import SecretStr
from countbot.config.settings import WebToolSettings
from countbot.tools.base import ToolContext, ToolTransientError
from countbot.web_access.http_client import WebClient
from countbot.web_access.web_search import BraveSearch, SearxngSearch, WebSearchTool, search_backend
from tests.web_access.local_http import LocalHTTPServer, Reply

JSON = {"Content-Type": "application/json"}
SEARXNG_RESULTS = {
    "results": [
        {"title": "Tide tables", "url": "https://tides.example/", "content": "High &amp; low"},
        {"title": "Moon", "url": "https://moon.example/", "content": ""},
        {"title": "Third", "url": "https://third.example/", "content": "more"},
    ]
}


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext("s1", tmp_path)


async def test_searxng_results_are_listed(ctx: ToolContext, web_client: WebClient) -> None:
    routes = {"/searx/search": Reply(200, json.dumps(SEARXNG_RESULTS).encode(), JSON)}
    with LocalHTTPServer(routes) as server:
        settings = WebToolSettings(search_backend="searxng", search_url=server.url("/searx/"))
        result = await WebSearchTool(settings, web_client).execute(
            {"query": "tide", "count": 2}, ctx
        )
    assert result.status == "ok"
    assert result.content == (
        "1. Tide tables\n   https://tides.example/\n   High & low\n\n2. Moon\n   https://moon.example/"
    )
    query = parse_qs(urlsplit(server.seen[0].path).query)
    assert query == {"q": ["tide"], "format": ["json"]}


async def test_brave_sends_the_key_and_strips_markup(
    ctx: ToolContext, web_client: WebClient
) -> None:
    body = {
        "web": {
            "results": [
                {
                    "title": "<strong>Tide</strong> times",
                    "url": "https://t.example/",
                    "description": "The <strong>tide</strong> today",
                }
            ]
        }
    }
    with LocalHTTPServer({"/brave": Reply(200, json.dumps(body).encode(), JSON)}) as server:
        backend = BraveSearch("brave-key-123", web_client, timeout=5, endpoint=server.url("/brave"))
        tool = WebSearchTool(WebToolSettings(), web_client, backend=backend)
        result = await tool.execute({"query": "tide"}, ctx)
    assert result.content == "1. Tide times\n   https://t.example/\n   The tide today"
    assert server.seen[0].headers["X-Subscription-Token"] == "brave-key-123"
    assert parse_qs(urlsplit(server.seen[0].path).query)["count"] == ["5"]


def test_the_backend_is_chosen_from_settings() -> None:
    brave = WebToolSettings(search_backend="brave", search_api_key=SecretStr("k" * 20))
    searxng = WebToolSettings(search_backend="searxng", search_url="http://127.0.0.1:8888")
    assert isinstance(search_backend(brave, WebClient()), BraveSearch)
    assert isinstance(search_backend(searxng, WebClient()), SearxngSearch)
    assert search_backend(WebToolSettings(search_backend="brave"), WebClient()) is None


@pytest.mark.parametrize(
    "settings",
    [
        WebToolSettings(),
        WebToolSettings(search_backend="brave"),
        WebToolSettings(search_backend="searxng"),
    ],
)
async def test_missing_configuration_names_the_keys_to_set(
    settings: WebToolSettings, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await WebSearchTool(settings, web_client).execute({"query": "tide"}, ctx)
    assert result.status == "error"
    for key in ("tools.web.search_backend", "tools.web.search_api_key", "tools.web.search_url"):
        assert key in result.content


async def test_no_results_and_service_errors(ctx: ToolContext, web_client: WebClient) -> None:
    routes = {
        "/empty/search": Reply(200, b'{"results": []}', JSON),
        "/denied/search": Reply(403, b"forbidden"),
        "/busy/search": Reply(503, b"busy"),
    }
    with LocalHTTPServer(routes) as server:

        def tool(path: str) -> WebSearchTool:
            settings = WebToolSettings(search_backend="searxng", search_url=server.url(path))
            return WebSearchTool(settings, web_client)

        empty = await tool("/empty").execute({"query": "zzz"}, ctx)
        denied = await tool("/denied").execute({"query": "zzz"}, ctx)
        with pytest.raises(ToolTransientError, match="503"):
            await tool("/busy").execute({"query": "zzz"}, ctx)
    assert empty.content == "No results for 'zzz'."
    assert denied.status == "error" and "HTTP 403" in denied.content
