"""web_fetch against a local HTTP server, and its refusal of private addresses and other schemes."""

from __future__ import annotations

import functools
import gzip
import json
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from countbot.config.settings import WebToolSettings
from countbot.tools.base import ToolContext
from countbot.web_access.address_check import address_refusal
from countbot.web_access.http_client import WebClient
from countbot.web_access.web_fetch import WebFetchTool
from tests.support.loop_watch import RESPONSIVE, LoopWatch
from tests.web_access.local_http import LocalHTTPServer, Reply

PAGE = b"""<html><head><title>Tide &amp; Times</title>
<style>body { color: red }</style><script>var tracking = "evil-script";</script></head>
<body><h1>High tide</h1><p>At <b>06:12</b> today. <a href="/more">More</a></p></body></html>"""

HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.fixture
def server() -> Iterator[LocalHTTPServer]:
    routes = {
        "/page": Reply(200, PAGE, HTML),
        "/data.json": Reply(
            200, json.dumps({"answer": 42}).encode(), {"Content-Type": "application/json"}
        ),
        "/moved": Reply(302, b"", {"Location": "/page"}),
        "/to-ftp": Reply(301, b"", {"Location": "ftp://files.example.com/x"}),
        "/loop": Reply(302, b"", {"Location": "/loop"}),
        "/big.txt": Reply(200, b"0123456789" * 1000, {"Content-Type": "text/plain"}),
        "/image.png": Reply(200, b"\x89PNG\r\n\x1a\n", {"Content-Type": "image/png"}),
    }
    with LocalHTTPServer(routes) as running:
        yield running


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext("s1", tmp_path)


def local_fetch(client: WebClient, max_bytes: int = 2_000_000) -> WebFetchTool:
    return WebFetchTool(WebToolSettings(allow_private=True, max_bytes=max_bytes), client)


async def test_html_becomes_readable_text_with_title(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await local_fetch(web_client).execute({"url": server.url("/page")}, ctx)
    assert result.status == "ok"
    assert f"URL: {server.url('/page')}" in result.content
    assert "Status: 200" in result.content and "Title: Tide & Times" in result.content
    assert "# High tide" in result.content and "**06:12**" in result.content
    assert "evil-script" not in result.content and "color: red" not in result.content


async def test_json_passes_through(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await local_fetch(web_client).execute({"url": server.url("/data.json")}, ctx)
    assert result.content.endswith('{"answer": 42}')


async def test_redirects_are_followed(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await local_fetch(web_client).execute({"url": server.url("/moved")}, ctx)
    assert f"URL: {server.url('/page')}" in result.content and "High tide" in result.content


async def test_every_redirect_hop_is_checked(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    to_ftp = await local_fetch(web_client).execute({"url": server.url("/to-ftp")}, ctx)
    looping = await local_fetch(web_client).execute({"url": server.url("/loop")}, ctx)
    assert to_ftp.status == "error" and "only http and https" in to_ftp.content
    assert looping.status == "error" and "redirects" in looping.content


async def test_the_body_is_capped_at_max_bytes(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await local_fetch(web_client, max_bytes=1000).execute(
        {"url": server.url("/big.txt")}, ctx
    )
    body = result.content.split("\n\n", 1)[1]
    assert body == "0123456789" * 100
    assert "only the first 1,000 bytes" in result.content


async def test_binary_content_is_refused(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await local_fetch(web_client).execute({"url": server.url("/image.png")}, ctx)
    assert result.status == "error" and "image/png" in result.content


async def test_error_statuses_are_shown_to_the_model(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await local_fetch(web_client).execute({"url": server.url("/missing")}, ctx)
    assert result.status == "ok" and "Status: 404" in result.content


async def test_a_hostname_is_fetched_from_its_checked_address(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await local_fetch(web_client).execute(
        {"url": server.url("/page", host="localhost")}, ctx
    )
    assert "High tide" in result.content
    assert server.seen[-1].headers["Host"] == f"localhost:{server.port}"


async def test_private_addresses_are_refused_before_any_request(
    server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    tool = WebFetchTool(WebToolSettings(), web_client)
    for url in (server.url("/page"), server.url("/page", host="localhost")):
        result = await tool.execute({"url": url}, ctx)
        assert result.status == "error" and "refused" in result.content
    assert server.seen == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://10.0.0.1/admin",
        "http://[::1]:8080/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:192.168.1.1]/",
        "https://0.0.0.0/",
    ],
)
async def test_local_and_private_hosts_are_refused(
    url: str, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await WebFetchTool(WebToolSettings(), web_client).execute({"url": url}, ctx)
    assert result.status == "error"
    assert "only public addresses" in result.content and "allow_private" in result.content


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/file", "gopher://x"])
async def test_other_schemes_are_refused(url: str, ctx: ToolContext, web_client: WebClient) -> None:
    result = await WebFetchTool(WebToolSettings(), web_client).execute({"url": url}, ctx)
    assert result.status == "error" and "only http and https" in result.content


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("8.8.8.8", False),
        ("2606:4700:4700::1111", False),
        ("127.0.0.1", True),
        ("10.1.2.3", True),
        ("172.16.0.1", True),
        ("192.168.0.10", True),
        ("100.64.0.1", True),
        ("169.254.169.254", True),
        ("224.0.0.1", True),
        ("::1", True),
        ("fe80::1", True),
        ("fd00::1", True),
        ("::ffff:127.0.0.1", True),
        ("2002:7f00:1::1", True),
        # IPv4 inside IPv6 transition addresses is checked as the IPv4 address it reaches.
        ("64:ff9b::a9fe:a9fe", True),  # NAT64 well-known prefix to the metadata service
        ("64:ff9b::10.0.0.1", True),
        ("64:ff9b::8.8.8.8", False),
        ("64:ff9b:1::8.8.8.8", True),  # local-use NAT64 translates into the operator's network
        ("2002:a9fe:a9fe::1", True),  # 6to4
        ("2002:808:808::1", False),
        ("2001:0:a00:1::ffff:f5ff:fffe", True),  # Teredo, client 10.0.0.1 (obfuscated)
        ("::127.0.0.1", True),  # IPv4-compatible
        ("::ffff:0:192.168.1.1", True),  # IPv4-translated
    ],
)
def test_address_refusal(address: str, refused: bool) -> None:
    assert (address_refusal(address) is not None) == refused


# --- hostile pages: bounded memory, a responsive loop -------------------------------------------


def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9)


@functools.cache
def letters_gzipped_twice(size: int) -> bytes:
    """`size` bytes of "a", gzipped twice: a few KB that expand to `size`."""
    inner = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"a" * (1 << 20)
    once = b"".join(inner.compress(block) for _ in range(size >> 20)) + inner.flush()
    return gzip_bytes(once)


@functools.cache
def deflated_letters(size: int) -> bytes:
    """`size` bytes of "a", zlib-deflated."""
    deflate = zlib.compressobj(9)
    block = b"a" * (1 << 20)
    return b"".join(deflate.compress(block) for _ in range(size >> 20)) + deflate.flush()


@pytest.fixture
def hostile_server() -> Iterator[LocalHTTPServer]:
    bomb = letters_gzipped_twice(256 << 20)
    deflated = deflated_letters(200 << 20)
    plain_html = b"<html><head><title>Tide</title></head><body><p>Calm seas</p></body></html>"
    routes = {
        "/bomb": Reply(200, bomb, {"Content-Type": "text/plain", "Content-Encoding": "gzip, gzip"}),
        "/deflate-bomb": Reply(
            200,
            deflated,
            {"Content-Type": "text/plain", "Content-Encoding": "deflate"},
        ),
        "/gzip-page": Reply(200, gzip_bytes(plain_html), {**HTML, "Content-Encoding": "gzip"}),
        "/raw-deflate": Reply(
            200,
            zlib.compress(b"raw deflate body", 9)[2:-4],
            {"Content-Type": "text/plain", "Content-Encoding": "deflate"},
        ),
        "/br": Reply(
            200, b"\x0b\x02\x80hello\x03", {"Content-Type": "text/plain", "Content-Encoding": "br"}
        ),
        "/corrupt": Reply(
            200, b"\x1f\x8b not gzip", {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
        ),
        "/titles": Reply(200, b"<html><title>" * 12_000, HTML),
        "/unclosed": Reply(200, b"<html>" + b"<title" * 20_000, HTML),
        "/comments": Reply(200, b"<!---->" * 285_000, HTML),
        "/dotted-i": Reply(200, "<p>İ".encode() * 400_000, HTML),
        "/paragraphs": Reply(200, "<p>İ".encode() * 40_000, HTML),
    }
    with LocalHTTPServer(routes) as running:
        yield running


@pytest.mark.parametrize("path", ["/bomb", "/deflate-bomb"])
async def test_a_decompression_bomb_is_capped_while_decoding(
    hostile_server: LocalHTTPServer, ctx: ToolContext, path: str, web_client: WebClient
) -> None:
    fetch = local_fetch(web_client, max_bytes=100_000)
    url = hostile_server.url(path)
    async with LoopWatch() as watch:
        result = await fetch.execute({"url": url}, ctx)
    assert result.status == "ok"
    assert "only the first 100,000 bytes were read" in result.content
    assert watch.worst < RESPONSIVE, watch.describe()
    tracemalloc.start()
    try:
        await fetch.execute({"url": url}, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 << 20, f"peak {peak / 1e6:.0f} MB while reading a capped body"


async def test_compressed_pages_are_read(
    hostile_server: LocalHTTPServer, ctx: ToolContext, web_client: WebClient
) -> None:
    result = await local_fetch(web_client).execute({"url": hostile_server.url("/gzip-page")}, ctx)
    assert "Title: Tide" in result.content and "Calm seas" in result.content
    result = await local_fetch(web_client).execute({"url": hostile_server.url("/raw-deflate")}, ctx)
    assert "raw deflate body" in result.content
    assert hostile_server.seen[0].headers["Accept-Encoding"] == "gzip, deflate"


@pytest.mark.parametrize(("path", "says"), [("/br", "br"), ("/corrupt", "corrupt")])
async def test_unreadable_encodings_are_a_clear_error(
    hostile_server: LocalHTTPServer, ctx: ToolContext, path: str, says: str, web_client: WebClient
) -> None:
    result = await local_fetch(web_client).execute({"url": hostile_server.url(path)}, ctx)
    assert result.status == "error" and says in result.content


@pytest.mark.parametrize("path", ["/titles", "/unclosed", "/comments", "/dotted-i"])
async def test_pages_of_repeated_markup_keep_the_loop_responsive(
    hostile_server: LocalHTTPServer, ctx: ToolContext, path: str, web_client: WebClient
) -> None:
    async with LoopWatch() as watch:
        result = await local_fetch(web_client).execute({"url": hostile_server.url(path)}, ctx)
    assert result.status == "ok"
    assert watch.worst < RESPONSIVE, watch.describe()


@pytest.mark.parametrize("path", ["/unclosed", "/paragraphs"])
async def test_a_page_is_read_in_memory_a_small_multiple_of_its_size(
    hostile_server: LocalHTTPServer, ctx: ToolContext, path: str, web_client: WebClient
) -> None:
    # One-letter paragraphs were two little strings each (33x the page: 65 MB for 2 MB) before
    # the converter joined its parts as it went.
    size = len(hostile_server.routes[path].body)
    fetch = local_fetch(web_client)
    await fetch.execute({"url": hostile_server.url("/gzip-page")}, ctx)  # imports httpx
    tracemalloc.start()
    try:
        result = await fetch.execute({"url": hostile_server.url(path)}, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "ok"
    assert peak < 8 * size, f"peak {peak / size:.1f}x the page"


# --- the shared client carries nothing from one fetch to the next --------------------------------


async def test_no_cookie_or_connection_is_kept_between_fetches(
    ctx: ToolContext, web_client: WebClient
) -> None:
    """A page's cookie is never sent back, and a connection made for one host name never serves
    another at the same address (over TLS, it was verified for the first name only)."""
    routes = {
        "/set": Reply(
            200, b"set", {"Set-Cookie": "tracker=abc; Path=/", "Content-Type": "text/plain"}
        ),
        "/page": Reply(200, PAGE, HTML),
    }
    with LocalHTTPServer(routes, keep_alive=True) as server:
        fetch = local_fetch(web_client)
        for url in (server.url("/set"), server.url("/page"), server.url("/page", host="localhost")):
            result = await fetch.execute({"url": url}, ctx)
            assert result.status == "ok"
    assert [seen.path for seen in server.seen] == ["/set", "/page", "/page"]
    assert all("Cookie" not in seen.headers for seen in server.seen)
    assert len({seen.port for seen in server.seen}) == 3, "a connection was reused"


# --- UTF-16 without a byte order mark ----------------------------------------------------------

TIDES = "<html><head><title>Tide</title></head><body><p>潮汐 at 06:12</p></body></html>"


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        # Declared utf-16: the order the NULs of its ASCII show, little-endian here.
        (TIDES.encode("utf-16-le"), "text/html; charset=utf-16", "潮汐 at 06:12"),
        (TIDES.encode("utf-16-be"), "text/html; charset=UTF-16", "潮汐 at 06:12"),
        # No ASCII to tell by: big-endian, as RFC 2781 says.
        ("潮汐表".encode("utf-16-be"), "text/plain; charset=utf-16", "潮汐表"),
        # Plainly UTF-16 whatever else was declared, or nothing.
        (TIDES.encode("utf-16-le"), "text/html", "潮汐 at 06:12"),
        (TIDES.encode("utf-16-be"), "text/html; charset=iso-8859-1", "潮汐 at 06:12"),
        (b"/stop", "text/plain", "/stop"),  # no NUL: not UTF-16
    ],
)
async def test_utf16_without_a_byte_order_mark_is_read(
    ctx: ToolContext, web_client: WebClient, body: bytes, content_type: str, expected: str
) -> None:
    with LocalHTTPServer({"/p": Reply(200, body, {"Content-Type": content_type})}) as server:
        result = await local_fetch(web_client).execute({"url": server.url("/p")}, ctx)
    assert result.status == "ok", result.content
    assert result.content.endswith(expected)
