"""The login page shown when an access token is set; a right token buys an HttpOnly cookie."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from countbot.web.access import COOKIE_NAME, AccessPolicy

# Slows guessing down without a lockout a typo would trigger.
FAILED_LOGIN_DELAY = 0.5
MAX_FORM_BYTES = 4096
COOKIE_MAX_AGE = 400 * 24 * 3600
# `html.escape`'s table: the html package's entity table, which an idle daemon need not hold.
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"})

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>CountBot · sign in</title>
<link rel="stylesheet" href="/static/styles.css"></head>
<body class="login-page"><main class="login">
<h1>CountBot</h1>
<form method="post" action="/login">
<label for="token">Access token (<code>web.token</code> in config.yaml)</label>
<input id="token" name="token" type="password" autocomplete="current-password" autofocus required>
<button type="submit">Sign in</button>
{error}
</form></main></body></html>
"""


def login_page(error: str = "", status: int = 200) -> HTMLResponse:
    shown = f'<p class="login-error" role="alert">{error.translate(_ESCAPES)}</p>' if error else ""
    return HTMLResponse(_PAGE.format(error=shown), status)


async def login(request: Request) -> Response:
    """GET shows the form; POST checks the token and sets the session cookie."""
    policy: AccessPolicy = request.app.state.policy
    if policy.token is None:
        return RedirectResponse("/", 303)
    if request.method == "GET":
        return login_page()
    body = await request.body()
    form = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))
    token = (form.get("token") or [""])[0]
    if not policy.token_matches(token):
        await asyncio.sleep(FAILED_LOGIN_DELAY)
        return login_page("That token is not right.", 401)
    response = RedirectResponse("/", 303)
    response.set_cookie(
        COOKIE_NAME,
        policy.cookie_value(),
        max_age=COOKIE_MAX_AGE,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response
