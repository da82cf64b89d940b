"""Size limits of the daemon's HTTP and WebSocket surfaces, against a real daemon over loopback.

Each refusal comes before the oversized input is held in memory, and with the documented status:
413 for bodies, 431 for headers, an error frame for WebSocket frames; the daemon keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client

from tests.support.loop_watch import RESPONSIVE, health_latency
from tests.web.conftest import TOKEN, DaemonFactory


async def raw_request(port: int, head: bytes, body_chunks: int = 0, chunk: bytes = b"") -> bytes:
    """Send `head` and then `body_chunks` x `chunk`; return whatever the server answered."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head)
        for _ in range(body_chunks):
            writer.write(chunk)
            await writer.drain()
        return await asyncio.wait_for(reader.read(65536), 20)
    except (ConnectionResetError, BrokenPipeError):
        return b"connection reset"
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def test_a_huge_login_form_is_refused_before_it_is_read(
    start_daemon: DaemonFactory,
) -> None:
    async with start_daemon(token=TOKEN) as daemon:
        head = (
            b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: 209715200\r\n\r\n"
        )
        answer = await raw_request(daemon.port, head)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
        # Chunked, so no length is declared: cut off while streaming.
        head = (
            b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        piece = b"token=" + b"x" * 994
        chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
        answer = await raw_request(daemon.port, head, 20, chunk)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:80]
        async with daemon.http() as http:
            assert (
                await http.get("/api/health", headers={"Authorization": f"Bearer {TOKEN}"})
            ).status_code == 200


async def test_api_bodies_past_the_limit_get_413(start_daemon: DaemonFactory) -> None:
    async with start_daemon(max_body_bytes=4096) as daemon, daemon.http() as http:
        big = '{"title": "' + "x" * 5000 + '"}'
        response = await http.post(
            "/api/sessions", content=big, headers={"content-type": "application/json"}
        )
        assert response.status_code == 413 and "limit 4,096" in response.json()["error"]
        absurd = {"content-type": "application/json", "content-length": "9" * 5000}
        answer = await raw_request(
            daemon.port,
            b"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + b"".join(f"{k}: {v}\r\n".encode() for k, v in absurd.items())
            + b"\r\n",
        )
        assert answer.startswith((b"HTTP/1.1 413", b"HTTP/1.1 400")), answer[:80]
        ok = await http.post(
            "/api/sessions",
            content='{"title": "fine"}',
            headers={"content-type": "application/json"},
        )
        assert ok.status_code == 201


def post_whole_body(port: int, size: int, headers: dict[str, str]) -> tuple[int, bytes]:
    """What Python's http.client does: send the whole body, only then read the answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        body = b'{"title": "' + b"x" * size + b'"}'
        connection.request("POST", "/api/sessions", body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


async def test_a_50_mb_json_body_gets_a_413_the_client_can_read(
    start_daemon: DaemonFactory,
) -> None:
    async with start_daemon() as daemon:
        json_type = {"Content-Type": "application/json"}
        for headers in ({**json_type, "Connection": "close"}, json_type):
            status, body = await asyncio.to_thread(post_whole_body, daemon.port, 50 << 20, headers)
            assert status == 413 and b"limit 1,048,576" in body, headers
        async with daemon.http() as http:
            sent = await http.post("/api/sessions", content=b"[" * (50 << 20), headers=json_type)
            assert sent.status_code == 413
            assert (await http.get("/api/health")).status_code == 200


async def test_a_huge_header_gets_431_and_the_daemon_keeps_serving(
    start_daemon: DaemonFactory,
) -> None:
    async with start_daemon(max_header_bytes=8192) as daemon:
        head = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
        answer = await raw_request(daemon.port, head, 64, b"a" * 65536)
        assert answer.startswith(b"HTTP/1.1 431"), answer[:80]
        async with daemon.http() as http:
            assert (
                await http.get("/api/health", headers={"X-Fine": "y" * 4000})
            ).status_code == 200


async def test_an_oversized_websocket_frame_gets_an_error_frame(
    start_daemon: DaemonFactory,
) -> None:
    async with start_daemon(max_frame_bytes=4096) as daemon:
        client = await daemon.ws()
        await client.send({"type": "message", "session_id": None, "content": "x" * 10_000})
        error = await client.until("error")
        assert "frame too large" in error["error"]
        await client.send({"type": "ping"})
        await client.until("pong")
        await client.close()


async def test_the_api_answers_promptly_while_hostile_requests_stream_in(
    start_daemon: DaemonFactory,
) -> None:
    async with start_daemon(max_header_bytes=8192) as daemon:
        header_flood = asyncio.create_task(
            raw_request(
                daemon.port,
                b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ",
                32,
                b"a" * 65536,
            )
        )
        login_flood = asyncio.create_task(
            raw_request(
                daemon.port,
                b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                64,
                b"10000\r\n" + b"x" * 0x10000 + b"\r\n",
            )
        )
        both = asyncio.ensure_future(asyncio.gather(header_flood, login_flood))
        worst = await health_latency(daemon.base, {}, both)
        answers = await both
        assert answers[0].startswith(b"HTTP/1.1 431")
        assert worst < RESPONSIVE, f"/api/health took {worst * 1000:.0f} ms"
