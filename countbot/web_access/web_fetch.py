"""web_fetch: fetches one http(s) page and returns it as readable text.

The model must not be able to reach the user's router, cloud metadata or local services, so unless
`allow_private` is set every hop (the first URL and each redirect) is resolved here, all of its
addresses are checked, and the connection goes to a checked address (Host header and TLS SNI keep
the name). A DNS answer that changes between check and connect (rebinding) therefore cannot steer
the request to a private address.
"""

from __future__ import annotations

import asyncio
import re
import socket
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from countbot.common.cooperative import Steps, run_steps
from countbot.config.settings import WebToolSettings
from countbot.text.declared_charset import decoded_steps
from countbot.tools.base import Egress, Tool, ToolContext, ToolResult, ToolTransientError
from countbot.tools.schema import params, text
from countbot.web_access.address_check import address_refusal
from countbot.web_access.bounded_decoding import ACCEPT_ENCODING, BodyDecoder, UnsupportedEncoding
from countbot.web_access.http_client import WebClient

if TYPE_CHECKING:
    import httpx

USER_AGENT = "CountBot/0.1 (personal assistant; web_fetch)"
_MAX_REDIRECTS = 5
_TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/yaml"}
)
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


class FetchRefused(Exception):
    """A URL web_fetch will not fetch; the message says why."""


@dataclass(frozen=True, slots=True)
class _Fetched:
    url: httpx.URL
    status: int
    content_type: str
    body: bytes
    truncated: bool


class WebFetchTool(Tool):
    name = "web_fetch"
    description = (
        "Fetch a web page (http or https) and return its title and readable text. JSON and plain "
        "text are returned as they are."
    )
    parameters = params(
        required={
            "url": text("An http:// or https:// URL."),
        },
    )
    idempotent = True
    brings = frozenset({"untrusted"})

    def __init__(self, settings: WebToolSettings, client: WebClient) -> None:
        self._settings = settings
        self._client = client
        # Our own deadline (settings.timeout) fires first and gives the clearer message.
        self.timeout = settings.timeout + 5.0

    async def egress(self, args: dict[str, Any], ctx: ToolContext) -> Egress:
        """The URL itself goes out: to its host, and to the DNS resolvers on the way."""
        url = str(args.get("url", ""))
        try:
            host = (urlsplit(url.strip()).hostname or "").lower()
        except ValueError:
            host = ""
        return Egress("url", host or "(no host)", url)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        client = await self._client.get()  # imports httpx in a worker thread at the first call
        import httpx

        url = args["url"]
        try:
            async with asyncio.timeout(self._settings.timeout):
                fetched = await self._fetch(client, url)
        except FetchRefused as exc:
            return ToolResult.error(f"refused to fetch {url}: {exc}")
        except (TimeoutError, httpx.TimeoutException):
            return ToolResult.error(f"fetching {url} timed out after {self._settings.timeout:g} s")
        except httpx.TransportError as exc:
            raise ToolTransientError(f"could not fetch {url}: {exc}") from exc
        return await run_steps(self._render(fetched))

    async def _fetch(self, client: httpx.AsyncClient, raw_url: str) -> _Fetched:
        import httpx

        try:
            url = httpx.URL(raw_url)
        except httpx.InvalidURL as exc:
            raise FetchRefused(f"not a valid URL ({exc})") from exc
        for _ in range(_MAX_REDIRECTS + 1):
            fetched, location = await self._get(client, url)
            if location is None:
                return fetched
            url = url.join(location)
        raise FetchRefused(f"more than {_MAX_REDIRECTS} redirects")

    async def _get(self, client: httpx.AsyncClient, url: httpx.URL) -> tuple[_Fetched, str | None]:
        """One hop, to the first checked address that accepts a connection."""
        import httpx

        if url.scheme not in ("http", "https"):
            raise FetchRefused(f"only http and https URLs are fetched, not {url.scheme or '?'}:")
        error: httpx.ConnectError | None = None
        for address in await self._addresses(url):
            try:
                return await self._get_from(client, url, address)
            except httpx.ConnectError as exc:
                error = exc
        assert error is not None  # _addresses never returns an empty list
        raise error

    async def _addresses(self, url: httpx.URL) -> list[str]:
        host = url.raw_host.decode("ascii")
        if not host:
            raise FetchRefused("the URL has no host")
        port = url.port or (443 if url.scheme == "https" else 80)
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise FetchRefused(f"cannot resolve {host} ({exc.strerror})") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if not self._settings.allow_private:
            for address in addresses:
                reason = address_refusal(address)
                if reason is not None:
                    raise FetchRefused(
                        f"{host} resolves to {reason}; only public addresses are fetched "
                        "(tools.web.allow_private permits local ones)"
                    )
        return addresses

    async def _get_from(
        self, client: httpx.AsyncClient, url: httpx.URL, address: str
    ) -> tuple[_Fetched, str | None]:
        host = url.raw_host.decode("ascii")
        headers = {
            "Host": url.netloc.decode("ascii"),
            "User-Agent": USER_AGENT,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        request = client.build_request(
            "GET",
            url.copy_with(host=address),
            headers=headers,
            timeout=self._settings.timeout,
            extensions={"sni_hostname": host} if url.scheme == "https" else {},
        )
        response = await client.send(request, stream=True)
        try:
            location = response.headers.get("location") if response.is_redirect else None
            body, truncated = b"", False
            if location is None:
                body, truncated = await self._read_capped(response)
        finally:
            await response.aclose()
        content_type = response.headers.get("content-type", "")
        return _Fetched(url, response.status_code, content_type, body, truncated), location

    async def _read_capped(self, response: httpx.Response) -> tuple[bytes, bool]:
        """The body up to max_bytes after decompression, decoded in bounded steps.

        httpx would inflate each network chunk whole (a decompression bomb in one chunk), so the
        raw bytes go through `BodyDecoder`, which never produces more than is asked for.
        """
        limit = self._settings.max_bytes
        try:
            decoder = BodyDecoder(response.headers.get("content-encoding", ""))
        except UnsupportedEncoding as exc:
            raise FetchRefused(str(exc)) from None
        chunks: list[bytes] = []
        size = 0
        try:
            async for raw in response.aiter_raw():
                for piece in decoder.feed(raw):
                    chunks.append(piece)
                    size += len(piece)
                    if size > limit:
                        return b"".join(chunks)[:limit], True
            for piece in decoder.finish():
                chunks.append(piece)
                size += len(piece)
                if size > limit:
                    return b"".join(chunks)[:limit], True
        except zlib.error as exc:
            raise FetchRefused(f"the compressed body is corrupt ({exc})") from None
        return b"".join(chunks), False

    def _render(self, fetched: _Fetched) -> Steps[ToolResult]:
        """The page as a result, in bounded steps: a page of megabytes is work for the whole
        loop."""
        media_type, _, params = fetched.content_type.partition(";")
        media_type = media_type.strip().lower()
        text = yield from decoded_steps(fetched.body, _declared_charset(params))
        title = ""
        if media_type in _HTML_TYPES or (not media_type and "<html" in text[:2048].lower()):
            # Imported with the client, in a worker thread (`http_client`): an idle daemon never
            # loads it.
            from countbot.text.html_text import html_text_steps, page_title_steps

            title = yield from page_title_steps(text)
            text = yield from html_text_steps(text)
        elif not _is_textual(media_type) or "\0" in text:
            return ToolResult.error(
                f"{fetched.url} is {media_type or 'binary'} content; web_fetch reads web pages, "
                "JSON and text"
            )
        lines = [f"URL: {fetched.url}", f"Status: {fetched.status}"]
        if title:
            lines.append(f"Title: {title}")
        if fetched.truncated:
            lines.append(f"Note: only the first {self._settings.max_bytes:,} bytes were read")
        return ToolResult("\n".join(lines) + "\n\n" + text.strip())


def _is_textual(media_type: str) -> bool:
    return (
        not media_type
        or media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type.endswith(("+json", "+xml"))
    )


def _declared_charset(content_type_params: str) -> str | None:
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type_params, re.IGNORECASE)
    return match.group(1) if match else None
