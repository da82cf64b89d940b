"""Checks every chat platform's end-to-end tests share: a long listing split intact, a picture
that reached the model, and a scheduled job delivered into a chat.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

from countbot.config.loader import MASK
from countbot.config.settings import Settings
from countbot.scheduler.assembly import start_scheduler
from countbot.scheduler.book import JobDraft
from countbot.scheduler.jobs import Delivery
from tests.channels.harness import Bot
from tests.scheduler.conftest import FakeClock, jobs_on
from tests.support.scripted_model import Reply, ScriptedModelServer

# A 1x1 JPEG is not needed: the bytes only have to arrive unchanged.
PHOTO = b"\xff\xd8\xff\xe0fake-jpeg-bytes\xff\xd9"


def user_texts(request: dict) -> str:
    """Everything the model was shown as the last user message, as one string."""
    content = request["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


def assert_secret_masked(bot: Bot, key: str, secret: str) -> None:
    """The Channels page shows the channel's secret as set, never its value."""
    assert bot.state()["settings"][key] == MASK
    assert secret not in json.dumps(bot.manager.states())


def long_listing(lines: int) -> tuple[str, str]:
    """(a code listing, an answer that wraps it in prose and ends with "Run it.")."""
    code = "\n".join(f"print('line {n:04d} of a long listing')" for n in range(lines))
    return code, f"{'Here it is. ' * 100}\n\n```python\n{code}\n```\n\nRun it."


def assert_listing_intact(messages: list[str], code: str, limit: int, *, fences: bool) -> None:
    """Every message within `limit`, no fence broken (or none shown), no line lost or cut."""
    assert len(messages) >= 2 and all(len(m) <= limit for m in messages)
    for message in messages:
        if fences:
            assert message.count("```") % 2 == 0, "a code fence was broken"
        else:
            assert "```" not in message, "this platform shows no Markdown fences"
    listed = [line for m in messages for line in m.splitlines() if "print(" in line]
    assert "\n".join(listed) == code, "a line of the listing was lost or cut"


def assert_model_saw_photo(model_server: ScriptedModelServer, settings: Settings) -> None:
    """The model got PHOTO inline and the text with it; the workspace kept a copy."""
    content = model_server.requests[0]["messages"][-1]["content"]
    images = [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
    assert images == [f"data:image/jpeg;base64,{base64.b64encode(PHOTO).decode()}"]
    assert "what is this?" in user_texts(model_server.requests[0])
    assert [p.read_bytes() for p in (settings.workspace / "media").iterdir()] == [PHOTO]


async def run_due_job(
    bot: Bot, model_server: ScriptedModelServer, channel: str, chat_id: str, answer: str
) -> None:
    """A weekday-08:00 job due now runs and counts as delivered to `channel:chat_id`."""
    bot.settings.timezone = "UTC"
    clock = FakeClock(datetime(2026, 3, 27, 6, 0, tzinfo=UTC))  # a Friday
    scheduler = await start_scheduler(jobs_on(bot.runtime, clock), bot.gateway, paused=True)
    try:
        model_server.script(Reply.text(answer))
        draft = JobDraft("Hi", "cron", "0 8 * * 1-5", "Greet me", Delivery(channel, chat_id))
        await scheduler.service.book.create(draft)
        clock.now = datetime(2026, 3, 27, 8, 0, 1, tzinfo=UTC)
        (run,) = await scheduler.service.run_due()
        assert run.status == "ok" and run.delivered
    finally:
        await scheduler.stop()
