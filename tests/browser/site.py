"""A small web site on 127.0.0.1 for the browser tests: pages rendered by JavaScript, a login
with a session cookie, an overlay over a button, a disabled button, links, a 404, a slow page,
a new tab, an iframe, a widget to frame from another origin, a download, and a page carrying an
injected instruction; every request is recorded (what the site, or an attacker's, learned)."""

from __future__ import annotations

import contextlib
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PASSWORD = "swordfish"
DOWNLOAD = "name,count\napples,3\npears,5\n"
# A download larger than the tests' tools.browser.max_download_bytes.
BIG = 3_000_000


def page(title: str, body: str) -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"


PAGES = {
    "/": page(
        "Start",
        "<h1>Start</h1><p>Welcome to the test site.</p>"
        '<a href="/list">The list</a> <a href="/missing">A missing page</a> '
        '<a href="/slow">A slow page</a> <a href="/list" target="_blank">List in a new tab</a>',
    ),
    "/list": page(
        "List",
        "<h1>Fruit</h1><ul id='items'></ul><button id='more' onclick='more()'>Load more</button>"
        "<script>const add = (n) => { const li = document.createElement('li'); "
        "li.textContent = n; document.getElementById('items').append(li); };"
        "setTimeout(() => ['Apple', 'Banana'].forEach(add), 50);"
        "function more() { fetch('/api/more').then(r => r.json()).then(a => a.forEach(add)); }"
        "</script>",
    ),
    "/login": page(
        "Sign in",
        "<h1>Sign in</h1><form method='post' action='/login'>"
        "<label>User <input name='user'></label>"
        "<label>Password <input name='password' type='password'></label>"
        "<button type='submit'>Sign in</button></form>",
    ),
    "/overlay": page(
        "Offer",
        "<button id='buy' onclick=\"document.body.insertAdjacentHTML('beforeend', "
        "'<p>Bought!</p>')\">Buy now</button>"
        "<div id='consent' style='position:fixed;inset:0;background:#eee;z-index:10'>"
        '<p>We use cookies.</p><button onclick="this.parentElement.remove()">Accept</button>'
        "</div>",
    ),
    "/disabled": page("Form", "<button disabled>Send</button><p>Nothing to send yet.</p>"),
    "/select": page(
        "Choose",
        "<label>Size <select id='size' onchange=\"document.getElementById('out').textContent"
        " = 'Size: ' + this.value\"><option value='s'>Small</option><option value='l'>Large"
        "</option></select></label><p id='out'>Size: s</p>",
    ),
    "/frame": page(
        "Framed",
        "<p>Outside the frame.</p><iframe title='inner' src='/inner'></iframe>",
    ),
    "/inner": page(
        "Inner",
        "<p>Inside the frame.</p><button onclick=\"this.textContent = 'Pressed'\">Press me"
        "</button>",
    ),
    "/widget": page(
        "Widget",
        "<p>A widget of its own origin.</p><button onclick=\"this.textContent = 'Pressed'\">"
        "Press me</button> <a href='/inner'>Next</a> <label>Note <input name='note'></label>",
    ),
    "/download": page(
        "Files", "<a href='/report.csv'>The report</a> <a href='/big.bin'>Everything</a>"
    ),
    "/long": page(
        "Long",
        "".join(
            f"<h2>Section {n}</h2><p>{'Words of the section, plainly written. ' * 12}</p>"
            f"<a href='/s{n}'>More about section {n}</a>"
            for n in range(120)
        ),
    ),
}


class LoopbackSite:
    """The site on an ephemeral port of a loopback address; `requests` lists every (method,
    path, body)."""

    def __init__(self, address: str = "127.0.0.1") -> None:
        self.requests: list[tuple[str, str, str]] = []
        self.pages = dict(PAGES)
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                site.requests.append(("GET", self.path, ""))
                site.get(self)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                site.requests.append(("POST", self.path, body))
                site.post(self, body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer((address, 0), Handler)
        self._httpd.daemon_threads = True
        self.base = f"http://{address}:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def url(self, path: str) -> str:
        return self.base + path

    def saw(self, text: str) -> bool:
        """Whether any request (path or body) carried `text`."""
        return any(text in path or text in body for _, path, body in self.requests)

    def get(self, handler: BaseHTTPRequestHandler) -> None:
        path = urlsplit(handler.path).path
        if path == "/slow":
            time.sleep(1.0)
            send(handler, 200, page("Slow", "<p>Finally loaded.</p>"))
        elif path == "/big.bin":
            send(
                handler,
                200,
                "x" * BIG,
                "application/octet-stream",
                {"Content-Disposition": 'attachment; filename="big.bin"'},
            )
        elif path == "/api/more":
            send(handler, 200, '["Cherry", "Damson"]', "application/json")
        elif path == "/report.csv":
            send(
                handler,
                200,
                DOWNLOAD,
                "text/csv",
                {"Content-Disposition": 'attachment; filename="report.csv"'},
            )
        elif path == "/account":
            cookie = handler.headers.get("Cookie") or ""
            if "session=alice-ok" in cookie:
                send(handler, 200, page("Account", "<h1>Account</h1><p>Signed in as alice.</p>"))
            else:
                send(handler, 302, "", headers={"Location": "/login"})
        elif path in self.pages:
            send(handler, 200, self.pages[path])
        else:
            send(handler, 404, page("Not found", "<p>There is no such page.</p>"))

    def post(self, handler: BaseHTTPRequestHandler, body: str) -> None:
        form = parse_qs(body)
        if urlsplit(handler.path).path == "/login" and form.get("password") == [PASSWORD]:
            cookie = "session=alice-ok; Max-Age=86400; Path=/; HttpOnly"
            send(handler, 303, "", headers={"Location": "/account", "Set-Cookie": cookie})
        else:
            send(handler, 200, page("Received", "<p>Thank you.</p>"))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: str,
    kind: str = "text/html; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> None:
    data = body.encode()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the browser moved on
        _write(handler, status, data, kind, headers or {})


def _write(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: bytes,
    kind: str,
    headers: dict[str, str],
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)
