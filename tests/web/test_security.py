"""Origin, Host and token checks: a web page the user visits cannot drive the assistant."""

from __future__ import annotations

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from countbot.config.settings import WebSettings
from countbot.web.access import AccessPolicy
from tests.web.conftest import TOKEN, Daemon, DaemonFactory

EVIL = "http://evil.example"
JSON = {"Content-Type": "application/json"}


async def test_websocket_from_another_origin_is_refused(daemon: Daemon) -> None:
    with pytest.raises(InvalidStatus) as refused:
        await daemon.ws(origin=EVIL)
    assert refused.value.response.status_code == 403


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_websocket_from_the_daemons_own_origin_works(daemon: Daemon, host: str) -> None:
    client = await daemon.ws(origin=f"http://{host}:{daemon.port}")
    await client.send({"type": "ping"})
    assert (await client.recv()) == {"type": "pong"}
    await client.close()


async def test_state_changes_from_another_origin_are_refused(daemon: Daemon) -> None:
    async with daemon.http() as http:
        refused = await http.post("/api/sessions", json={}, headers={"Origin": EVIL})
        assert refused.status_code == 403 and "origin" in refused.json()["error"]
        own = await http.post("/api/sessions", json={}, headers={"Origin": daemon.base})
        assert own.status_code == 201
        no_origin = await http.post("/api/sessions", json={})
        assert no_origin.status_code == 201
        listed = (await http.get("/api/sessions")).json()["sessions"]
        assert len(listed) == 2


async def test_an_allowed_extra_origin_may_connect(start_daemon: DaemonFactory) -> None:
    async with start_daemon(allowed_origins=["https://bot.example.org"]) as daemon:
        client = await daemon.ws(origin="https://bot.example.org")
        await client.send({"type": "ping"})
        assert (await client.recv()) == {"type": "pong"}
        await client.close()


async def test_a_foreign_host_name_is_refused_on_loopback(daemon: Daemon) -> None:
    # DNS rebinding: a page on rebound.example reaches 127.0.0.1 under its own name.
    async with daemon.http() as http:
        rebound = {"Host": f"rebound.example:{daemon.port}"}
        response = await http.get("/api/sessions", headers=rebound)
        assert response.status_code == 403


async def test_state_changes_need_a_json_body(daemon: Daemon) -> None:
    async with daemon.http() as http:
        form = await http.post(
            "/api/sessions",
            content=b"title=x",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert form.status_code == 415
        broken = await http.post("/api/sessions", content=b"{", headers=JSON)
        assert broken.status_code == 400 and "JSON" in broken.json()["error"]


async def test_a_body_over_the_limit_is_refused(start_daemon: DaemonFactory) -> None:
    async with start_daemon(max_body_bytes=4096) as daemon, daemon.http() as http:
        response = await http.put("/api/memory", json={"content": "x" * 10_000})
        assert response.status_code == 413


async def test_with_a_token_every_api_call_needs_it(start_daemon: DaemonFactory) -> None:
    async with start_daemon(token=TOKEN) as daemon, daemon.http() as http:
        for path in ("/api/health", "/api/sessions", "/api/settings"):
            refused = await http.get(path)
            assert refused.status_code == 401 and refused.json() == {
                "error": "authentication required"
            }
        bearer = await http.get("/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
        assert bearer.status_code == 200
        wrong = await http.get("/api/sessions", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert (await http.get(f"/api/sessions?token={TOKEN}")).status_code == 200
        assert (await http.get("/")).status_code == 200  # the UI itself is public


async def test_the_login_page_sets_a_strict_httponly_cookie(start_daemon: DaemonFactory) -> None:
    async with start_daemon(token=TOKEN) as daemon, daemon.http() as http:
        page = await http.get("/login")
        assert page.status_code == 200 and 'name="token"' in page.text
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        bad = await http.post("/login", content=b"token=guess", headers=form)
        assert bad.status_code == 401 and "not right" in bad.text
        good = await http.post("/login", content=f"token={TOKEN}".encode(), headers=form)
        assert good.status_code == 303 and good.headers["location"] == "/"
        cookie = good.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert TOKEN.lower() not in cookie
        assert (await http.get("/api/sessions")).status_code == 200  # the cookie jar has it
        client = await daemon.ws(additional_headers={"Cookie": good.headers["set-cookie"]})
        await client.send({"type": "ping"})
        assert (await client.recv()) == {"type": "pong"}
        await client.close()


async def test_with_a_token_the_websocket_needs_it(start_daemon: DaemonFactory) -> None:
    async with start_daemon(token=TOKEN) as daemon:
        anonymous = await daemon.ws()
        with pytest.raises(ConnectionClosed) as closed:
            await anonymous.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
        for kwargs in (
            {"additional_headers": {"Authorization": f"Bearer {TOKEN}"}},
            {"query": f"token={TOKEN}"},
        ):
            client = await daemon.ws(**kwargs)
            await client.send({"type": "ping"})
            assert (await client.recv()) == {"type": "pong"}
            await client.close()


async def test_settings_never_show_secrets(start_daemon: DaemonFactory) -> None:
    async with start_daemon(token=TOKEN) as daemon, daemon.http() as http:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        response = await http.get("/api/settings", headers=headers)
        assert response.status_code == 200
        assert "sk-test-0123456789abcdef" not in response.text and TOKEN not in response.text
        data = response.json()
        assert data["model"]["api_key"] == "********" and data["web"]["token"] == "********"


async def test_the_ui_is_served_with_a_strict_content_security_policy(daemon: Daemon) -> None:
    async with daemon.http() as http:
        page = await http.get("/")
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["cache-control"] == "no-cache"
        script = await http.get("/static/lib/socket.js")
        assert script.status_code == 200 and "content-security-policy" in script.headers
        assert (await http.get("/static/../config.yaml")).status_code == 404


def policy_for(**web: object) -> AccessPolicy:
    return AccessPolicy.from_settings(WebSettings(token="t" * 20, **web), 8686)


def test_the_bound_address_and_allowed_hosts_are_accepted_hosts() -> None:
    second_loopback = policy_for(host="127.0.0.2")
    assert second_loopback.host_allowed("127.0.0.2:8686")
    assert second_loopback.origin_allowed("http://127.0.0.2:8686")
    assert not second_loopback.host_allowed("attacker.example:8686")
    named = policy_for(host="0.0.0.0", allowed_hosts=["bot.home.arpa", "192.168.1.20"])
    for host in ("bot.home.arpa:8686", "192.168.1.20:8686", "localhost:8686"):
        assert named.host_allowed(host), host
    assert not named.host_allowed("rebound.attacker.example")
    assert named.origin_allowed("https://bot.home.arpa")
    assert named.origin_allowed("http://bot.home.arpa:8686")
    # No names listed on a public bind: any Host, the token guards (as before).
    assert policy_for(host="0.0.0.0").host_allowed("anything.example")
