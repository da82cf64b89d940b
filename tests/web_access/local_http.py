"""A real HTTP server on 127.0.0.1, run in a thread, that answers from a table of routes."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass(frozen=True, slots=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Seen:
    """One request the server received: its path (with query), headers and the client's port
    (which connection it came on)."""

    path: str
    headers: dict[str, str]
    port: int = 0


class LocalHTTPServer:
    """Serves `routes` (path without query -> Reply) and records every request it receives;
    with `keep_alive` it speaks HTTP/1.1 and keeps each connection open for the next request."""

    def __init__(self, routes: dict[str, Reply], *, keep_alive: bool = False) -> None:
        self.routes = routes
        self.seen: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def do_GET(self) -> None:
                headers = dict(self.headers.items())
                server.seen.append(Seen(self.path, headers, self.client_address[1]))
                reply = server.routes.get(self.path.split("?")[0], Reply(404, b"not found"))
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> LocalHTTPServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
