"""web_search: web search through a pluggable backend (Brave Search API or a SearXNG instance).

Search backends are configured by the user, so unlike web_fetch they may live on a private
address (a SearXNG container on the LAN).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from countbot.config.settings import WebToolSettings
from countbot.tools.base import Egress, Tool, ToolContext, ToolResult, ToolTransientError
from countbot.tools.schema import integer, params, text
from countbot.web_access.http_client import WebClient

BRAVE_ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
_TAG = re.compile(r"<[^>]+>")
_NOT_CONFIGURED = (
    "web search is not configured. In config.yaml set tools.web.search_backend to 'brave' "
    "(and tools.web.search_api_key to a Brave Search API key) or to 'searxng' (and "
    "tools.web.search_url to the instance's URL, with the JSON format enabled)."
)


@dataclass(frozen=True, slots=True)
class SearchHit:
    title: str
    url: str
    snippet: str = ""


class SearchBackend(Protocol):
    async def search(self, query: str, count: int) -> list[SearchHit]:
        """Up to `count` hits; raises httpx errors, which the tool turns into results."""
        ...


async def _get_json(
    client: WebClient, url: str, params: dict[str, Any], headers: dict[str, str], seconds: float
) -> Any:
    http = await client.get()
    response = await http.get(url, params=params, headers=headers, timeout=seconds)
    response.raise_for_status()
    return response.json()


class BraveSearch:
    """The Brave Search web API (needs an API key)."""

    def __init__(
        self, api_key: str, client: WebClient, *, timeout: float, endpoint: str = BRAVE_ENDPOINT
    ) -> None:
        self._api_key = api_key
        self._client = client
        self._timeout = timeout
        self._endpoint = endpoint

    async def search(self, query: str, count: int) -> list[SearchHit]:
        headers = {"X-Subscription-Token": self._api_key, "Accept": "application/json"}
        params = {"q": query, "count": count}
        data = await _get_json(self._client, self._endpoint, params, headers, self._timeout)
        results = (data.get("web") or {}).get("results") or []
        return [
            SearchHit(r.get("title", ""), r.get("url", ""), r.get("description", ""))
            for r in results[:count]
        ]


class SearxngSearch:
    """A SearXNG instance's JSON API (`search.formats` must include `json`)."""

    def __init__(self, base_url: str, client: WebClient, *, timeout: float) -> None:
        self._url = base_url.rstrip("/") + "/search"
        self._client = client
        self._timeout = timeout

    async def search(self, query: str, count: int) -> list[SearchHit]:
        params = {"q": query, "format": "json"}
        headers = {"Accept": "application/json"}
        data = await _get_json(self._client, self._url, params, headers, self._timeout)
        return [
            SearchHit(r.get("title", ""), r.get("url", ""), r.get("content", ""))
            for r in (data.get("results") or [])[:count]
        ]


def search_backend(settings: WebToolSettings, client: WebClient) -> SearchBackend | None:
    """The backend the settings describe, or None when they describe none completely."""
    if settings.search_backend == "brave" and settings.search_api_key is not None:
        key = settings.search_api_key.get_secret_value()
        return BraveSearch(key, client, timeout=settings.timeout)
    if settings.search_backend == "searxng" and settings.search_url:
        return SearxngSearch(settings.search_url, client, timeout=settings.timeout)
    return None


class WebSearchTool(Tool):
    name = "web_search"
    description = (
        "Search the web. Returns titles, URLs and snippets; use web_fetch to read a result."
    )
    parameters = params(
        required={
            "query": text("What to search for.", minLength=1),
        },
        optional={
            "count": integer("Hits (5).", minimum=1, maximum=20),
        },
    )
    idempotent = True
    brings = frozenset({"untrusted"})

    def __init__(
        self, settings: WebToolSettings, client: WebClient, backend: SearchBackend | None = None
    ) -> None:
        self._client = client
        self._backend = backend or search_backend(settings, client)
        self.timeout = settings.timeout + 5.0

    def available(self) -> bool:
        return self._backend is not None

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress:
        return Egress("search", "search", str(args.get("query", "")))

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if self._backend is None:
            return ToolResult.error(_NOT_CONFIGURED)
        await self._client.get()  # imports httpx in a worker thread at the first call
        import httpx

        query = args["query"]
        try:
            hits = await self._backend.search(query, args.get("count", 5))
        except httpx.TimeoutException:
            return ToolResult.error(f"the search for {query!r} timed out")
        except httpx.TransportError as exc:
            raise ToolTransientError(f"the search service is unreachable: {exc}") from exc
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            if status == 429 or status >= 500:
                raise ToolTransientError(f"the search service answered HTTP {status}") from exc
            return ToolResult.error(
                f"the search service refused the query (HTTP {status}); check tools.web settings"
            )
        except ValueError:
            return ToolResult.error("the search service did not answer with JSON")
        if not hits:
            return ToolResult(f"No results for {query!r}.")
        return ToolResult("\n\n".join(_format(i, hit) for i, hit in enumerate(hits, 1)))


def _format(number: int, hit: SearchHit) -> str:
    lines = [f"{number}. {_plain(hit.title)}", f"   {hit.url}"]
    if snippet := _plain(hit.snippet):
        lines.append(f"   {snippet}")
    return "\n".join(lines)


def _plain(text: str) -> str:
    """Brave marks matches with <strong> and escapes entities; the model needs plain text."""
    from html import unescape  # loaded with the web tools' client (`http_client`): chat -m never

    return unescape(_TAG.sub("", text)).strip()
