"""The delivery path into Telegram (what the scheduler and the `message` tool use): it reports
what the Bot API really answered."""

from __future__ import annotations

from pathlib import Path

from countbot.runtime.deliveries import DeliveryTarget
from tests.channels.harness import ALICE, Bot

TARGET = DeliveryTarget("telegram", str(ALICE))


async def test_text_and_files_are_delivered_and_reported(bot: Bot, tmp_path: Path) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.4 fake")
    chart = tmp_path / "chart.png"
    chart.write_bytes(b"\x89PNG fake")
    text = "\n\n".join(f"Paragraph {n}: " + "lorem ipsum " * 40 for n in range(12))

    result = await bot.runtime.deliveries.deliver(TARGET, text, [report, chart])

    assert result.delivered, result.detail
    sent = [c for c in bot.fake.calls if c.method.startswith("send") and c.status == 200]
    assert [c.method for c in sent] == ["sendMessage", "sendMessage", "sendDocument", "sendPhoto"]
    assert len(result.message_ids) == 4
    assert sent[2].files["document"] == b"%PDF-1.4 fake"
    assert sent[3].files["photo"] == b"\x89PNG fake"


async def test_a_refusal_is_reported_as_not_delivered(bot: Bot) -> None:
    bot.fake.refuse("sendMessage", status=403, description="Forbidden: bot was blocked by the user")

    result = await bot.runtime.deliveries.deliver(TARGET, "Your reminder")

    assert not result.delivered and not result.retryable
    assert "blocked by the user" in result.detail
    assert bot.fake.chat_messages(ALICE) == []


async def test_a_flood_limit_is_waited_out_and_then_delivered(bot: Bot) -> None:
    bot.fake.refuse("sendMessage", retry_after=1)

    result = await bot.runtime.deliveries.deliver(TARGET, "Your reminder")

    assert result.delivered, result.detail
    assert bot.fake.chat_messages(ALICE) == ["Your reminder"]
    assert bot.fake.violations == []


async def test_nothing_is_delivered_while_the_channel_is_down(bot: Bot) -> None:
    await bot.manager.stop()

    result = await bot.runtime.deliveries.deliver(TARGET, "Your reminder")

    assert not result.delivered and "not running" in result.detail
