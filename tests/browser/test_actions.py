"""The browser tool against the loopback test site: every action says what really happened."""

from __future__ import annotations

import base64

import pytest

from countbot.tools.base import ToolContext
from tests.browser.conftest import Browse, needs_chromium
from tests.browser.site import DOWNLOAD, PASSWORD, LoopbackSite, page

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]


async def test_a_page_rendered_by_javascript_is_read_with_references(
    browse: Browse, site: LoopbackSite
) -> None:
    opened = await browse("open", url=site.url("/list"))
    assert opened.status == "ok"
    assert "# Fruit" in opened.content and "- Apple" in opened.content
    clicked = await browse("click", ref=browse.ref("Load more"))
    assert clicked.status == "ok"
    assert 'Clicked button "Load more"' in clicked.content
    assert "New text on the page:\n  Cherry\n  Damson" in clicked.content


async def test_a_reference_from_before_a_navigation_is_refused(
    browse: Browse, site: LoopbackSite
) -> None:
    await browse("open", url=site.url("/"))
    old = browse.ref("The list")
    moved = await browse("click", ref=old)
    assert f"The tab moved to {site.url('/list')}" in moved.content
    stale = await browse("click", ref=old)
    assert stale.status == "error"
    assert f"{old} was read from {site.url('/')}" in stale.content
    assert "Take a snapshot" in stale.content
    unknown = await browse("click", ref="e999")
    assert unknown.status == "error" and "there is no reference e999" in unknown.content


async def test_an_overlay_is_named_and_the_click_waits_for_the_user_to_clear_it(
    browse: Browse, site: LoopbackSite
) -> None:
    await browse("open", url=site.url("/overlay"))
    buy, accept = browse.ref("Buy now"), browse.ref("Accept")
    hidden = await browse("click", ref=buy)
    assert hidden.status == "error"
    assert 'is hidden by div#consent "We use cookies. Accept"' in hidden.content
    assert "Bought!" not in hidden.content
    await browse("click", ref=accept)
    bought = await browse("click", ref=buy)
    assert bought.status == "ok" and "New text on the page:\n  Bought!" in bought.content


async def test_a_disabled_button_is_not_pressed(browse: Browse, site: LoopbackSite) -> None:
    await browse("open", url=site.url("/disabled"))
    result = await browse("click", ref=browse.ref("Send"))
    assert result.status == "error" and 'button "Send"' in result.content
    assert "is disabled" in result.content


async def test_a_link_to_a_missing_page_reports_the_status(
    browse: Browse, site: LoopbackSite
) -> None:
    await browse("open", url=site.url("/"))
    result = await browse("click", ref=browse.ref("A missing page"))
    assert result.status == "error"
    assert f"The server answered 404 Not Found for {site.url('/missing')}" in result.content
    back = await browse("back")
    assert back.status == "ok" and f"Went back to {site.url('/')}" in back.content


async def test_a_slow_page_is_waited_for(browse: Browse, site: LoopbackSite) -> None:
    await browse("open", url=site.url("/"))
    result = await browse("click", ref=browse.ref("A slow page"))
    assert result.status == "ok" and "Finally loaded." in result.content


async def test_a_link_that_opens_a_new_tab_switches_to_it(
    browse: Browse, site: LoopbackSite
) -> None:
    await browse("open", url=site.url("/"))
    result = await browse("click", ref=browse.ref("List in a new tab"))
    assert f'It opened a new tab, now the current one: {site.url("/list")} "List"' in result.content
    snapshot = await browse("snapshot")
    assert "# Fruit" in snapshot.content
    closed = await browse("close")
    assert f"the tab showing {site.url('/')} is current now" in closed.content


async def test_an_iframe_is_read_and_its_button_clicked(browse: Browse, site: LoopbackSite) -> None:
    opened = await browse("open", url=site.url("/frame"))
    assert 'frame "inner":\nInside the frame.' in opened.content
    result = await browse("click", ref=browse.ref("Press me"))
    assert result.status == "ok" and "New text on the page:\n  Pressed" in result.content


async def test_a_frame_of_another_site_is_read_and_acted_on(
    browse: Browse, site: LoopbackSite, other_origins: tuple[LoopbackSite, LoopbackSite]
) -> None:
    other_site = other_origins[0]
    site.pages["/widget-page"] = page(
        "Our page",
        f"<p>Our own text.</p><iframe title='widget' src='{other_site.url('/widget')}'></iframe>",
    )
    opened = await browse("open", url=site.url("/widget-page"))
    assert 'frame "widget":\nA widget of its own origin.' in opened.content
    press, next_page = browse.ref("Press me"), browse.ref("Next")
    # What is typed into the frame goes to the frame's site (the data-flow check's destination).
    typing = {"action": "type", "ref": browse.ref("Note"), "text": "hello"}
    sent = await browse.tool.egress(typing, ToolContext(browse.session, browse.workspace))
    assert sent is not None and sent.destination == "127.0.0.2"
    pressed = await browse("click", ref=press)
    assert pressed.status == "ok" and "New text on the page:\n  Pressed" in pressed.content
    again = await browse("snapshot")
    assert 'frame "widget":\nA widget of its own origin.' in again.content
    press, next_page = browse.ref("Pressed"), browse.ref("Next")
    moved = await browse("click", ref=next_page)
    assert moved.status == "ok" and "Inside the frame." in moved.content
    stale = await browse("click", ref=press)
    assert stale.status == "error"
    assert f"was read in a frame that has changed since (now {other_site.url('/inner')})" in (
        stale.content
    )
    assert ("GET", "/widget", "") in other_site.requests


async def test_a_frame_of_another_origin_under_an_overlay_is_named(
    browse: Browse, site: LoopbackSite, other_origins: tuple[LoopbackSite, LoopbackSite]
) -> None:
    same_site = other_origins[1]
    site.pages["/covered-widget"] = page(
        "Covered",
        f"<iframe title='widget' src='{same_site.url('/widget')}'></iframe>"
        "<div id='sponsor' style='position:fixed;inset:0;background:#fff'>Sponsored</div>",
    )
    opened = await browse("open", url=site.url("/covered-widget"))
    result = await browse("click", ref=browse.ref("Press me"))
    assert result.status == "error"
    assert 'button "Press me"' in result.content
    assert 'is hidden by div#sponsor "Sponsored"' in result.content
    assert "Pressed" not in result.content and "A widget of its own origin." in opened.content


async def test_a_download_lands_in_the_workspace(browse: Browse, site: LoopbackSite) -> None:
    await browse("open", url=site.url("/download"))
    result = await browse("click", ref=browse.ref("The report"))
    assert "downloaded report.csv" in result.content and "to downloads/report" in result.content
    saved = sorted((browse.workspace / "downloads").glob("report*.csv"))
    assert saved and saved[-1].read_text() == DOWNLOAD
    await browse("snapshot")
    big = await browse("click", ref=browse.ref("Everything"))
    assert "big.bin was not kept: it is larger than tools.browser.max_download_bytes" in (
        big.content
    )
    assert not list((browse.workspace / "downloads").glob("big*"))


async def test_a_form_is_filled_and_the_login_kept(browse: Browse, site: LoopbackSite) -> None:
    await browse("open", url=site.url("/login"))
    user, password = browse.ref("User"), browse.ref("Password")
    await browse("type", ref=user, text="alice")
    typed = await browse("type", ref=password, text=PASSWORD, submit=True)
    assert "it now holds 9 characters (hidden)" in typed.content
    assert PASSWORD not in typed.content
    assert f"The tab moved to {site.url('/account')}" in typed.content
    assert "Signed in as alice." in typed.content
    again = await browse("open", url=site.url("/account"))
    assert "Signed in as alice." in again.content


async def test_an_option_is_selected(browse: Browse, site: LoopbackSite) -> None:
    opened = await browse("open", url=site.url("/select"))
    assert 'combobox "Size"' in opened.content and "options: Small | Large" in opened.content
    size = browse.ref("Size")
    chosen = await browse("select", ref=size, option="Large")
    assert 'Selected "Large"' in chosen.content and "Size: l" in chosen.content
    missing = await browse("select", ref=size, option="Huge")
    assert missing.status == "error" and "has no such option" in missing.content


async def test_a_screenshot_is_seen_and_saved(browse: Browse, site: LoopbackSite) -> None:
    await browse("open", url=site.url("/"))
    shot = await browse("screenshot")
    [image] = shot.images
    assert image.media_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
    saved = shot.content.split(" saved to ")[1].split(" in the workspace")[0]
    assert (browse.workspace / saved).read_bytes() == base64.b64decode(image.data)


async def test_waiting_for_text_says_what_the_page_shows_instead(
    browse: Browse, site: LoopbackSite
) -> None:
    await browse("open", url=site.url("/list"))
    found = await browse("wait_for", text="Banana")
    assert found.status == "ok" and 'The page shows "Banana"' in found.content


async def test_a_long_page_is_read_in_parts(browse: Browse, site: LoopbackSite) -> None:
    first = await browse("open", url=site.url("/long"))
    assert "Snapshot part 1 of" in first.content and "read on with page=2" in first.content
    second = await browse("snapshot", page=2)
    assert "Snapshot part 2 of" in second.content
    assert "## Section 0" in first.content and "## Section 0" not in second.content


async def test_what_may_not_be_opened_is_refused(browse: Browse) -> None:
    local = await browse("open", url="file:///etc/passwd")
    assert local.status == "error" and "only http:// and https:// URLs" in local.content
    nothing = await browse("click", ref="e1")
    assert "no page is open in this conversation" in nothing.content
