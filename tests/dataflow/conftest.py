"""Attackers on loopback and a daemon whose model obeys them.

Two "hosts" are two loopback addresses (127.0.0.1 and 127.0.0.2), each with its own HTTP server
that serves pages and records every request; a third serves SearXNG's JSON API. The daemon
fetches them with `tools.web.allow_private` on, since every test server is on loopback.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from countbot.config.loader import load_settings
from countbot.web.daemon import bind_listener, serve_daemon
from tests.support.scripted_model import ScriptedModelServer
from tests.web.conftest import Daemon, WsClient, write_config

PIN = "4821"


class Site:
    """An HTTP server on one loopback address: `pages` (path -> text) and every request seen."""

    def __init__(self, address: str, pages: dict[str, str] | None = None) -> None:
        self.pages = pages or {}
        self.requests: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requests.append(self.path)
                path = urlsplit(self.path).path
                if path == "/search":
                    body = json.dumps(site.search(parse_qs(urlsplit(self.path).query)))
                    self._send(200, body, "application/json")
                elif path in site.pages:
                    self._send(200, site.pages[path], "text/plain; charset=utf-8")
                else:
                    self._send(404, "not found", "text/plain")

            def _send(self, status: int, body: str, kind: str) -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer((address, 0), Handler)
        self.base = f"http://{address}:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def search(self, query: dict[str, list[str]]) -> dict[str, Any]:
        words = query.get("q", [""])[0]
        return {"results": [{"title": f"About {words}", "url": f"{self.base}/r", "content": ""}]}

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def saw(self, value: str) -> bool:
        """Whether any request carried `value` (as written or in the encodings the tests use)."""
        encoded = value.encode()
        forms = {value, value[::-1], encoded.hex(), base64.b64encode(encoded).decode()}
        return any(form in request for request in self.requests for form in forms)


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site, Site]]:
    """The page the user names (127.0.0.1), a second host (127.0.0.2) and a search service."""
    made = [Site("127.0.0.1"), Site("127.0.0.2"), Site("127.0.0.3")]
    try:
        yield made[0], made[1], made[2]
    finally:
        for site in made:
            site.close()


DaemonStarter = Callable[..., contextlib.AbstractAsyncContextManager[Daemon]]


@pytest.fixture
def attack_daemon(
    tmp_path: Path, model_server: ScriptedModelServer, sites: tuple[Site, Site, Site]
) -> DaemonStarter:
    """A daemon fetching loopback pages and searching the fake SearXNG; `**changes` per test."""

    @contextlib.asynccontextmanager
    async def start(configure: Callable[[Any], None] | None = None) -> AsyncIterator[Daemon]:
        settings = load_settings(write_config(tmp_path, model_server))
        settings.tools.web.allow_private = True  # every test server is on loopback
        settings.tools.web.search_backend = "searxng"
        settings.tools.web.search_url = sites[2].base
        settings.tools.exec.approval_timeout = 10
        if configure is not None:
            configure(settings)
        with bind_listener("127.0.0.1", 0) as listener:
            async with serve_daemon(settings, listener) as running:
                yield Daemon(running.port, running.context, settings)

    return start


async def turn(daemon: Daemon, text: str, *, session: str = "s1", answer: str = "deny") -> WsClient:
    """Send `text` over the WebSocket and answer every approval question with `answer`."""
    client = await daemon.ws()
    await client.send({"type": "message", "session_id": session, "content": text})
    while True:
        frame = await client.recv()
        if frame["type"] == "approval_request":
            response = {"type": "approval_response", "id": frame["id"], "decision": answer}
            await client.send(response)
        if frame["type"] in ("done", "error", "cancelled"):
            break
    await client.close()
    return client


async def audit_records(daemon: Daemon, kind: str = "outbound") -> list[dict[str, Any]]:
    """The audit log's records of `kind`, once everything written so far is on disk."""
    await daemon.context.runtime.audit.flush()
    path = daemon.settings.data_dir / "audit.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [record for line in lines if (record := json.loads(line)).get("type") == kind]
