"""Web sites on loopback addresses for tests: pages by path, SearXNG's search API, and a record
of every request (what an attacker's server would have learned)."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


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

    def __enter__(self) -> Site:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def saw(self, value: str) -> bool:
        """Whether any request carried `value` (as written or in the encodings the tests use)."""
        encoded = value.encode()
        forms = {value, value[::-1], encoded.hex(), base64.b64encode(encoded).decode()}
        return any(form in request for request in self.requests for form in forms)
