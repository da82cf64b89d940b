"""The email channel end to end: imaplib reads the fake provider's inbox (IDLE or polling),
smtplib sends through aiosmtpd, turns answered by the scripted model through the real gateway.
"""

from __future__ import annotations

from countbot.config.settings import Settings
from countbot.runtime.deliveries import DeliveryTarget
from tests.channels.email.conftest import ALICE, use_fake_mail
from tests.channels.fake_mail import BOT, PASSWORD, FakeMail, mail
from tests.channels.harness import Bot, running_bot
from tests.channels.scenarios import (
    assert_secret_masked,
    user_texts,
)
from tests.support.scripted_model import Reply, ScriptedModelServer


async def test_an_html_mail_is_answered_in_its_thread(
    bot: Bot, fake_mail: FakeMail, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("## Plan\n\nThe **quick** fox."))
    sent = await fake_mail.deliver(
        mail(
            ALICE,
            "",
            subject="Dinner",
            html="<p>What should I <b>cook</b>?</p><script>evil()</script><ul><li>pasta</li></ul>",
        )
    )

    assert await fake_mail.wait_for_replies(ALICE) == ["Plan\n\nThe quick fox."]
    (reply,) = fake_mail.sent
    assert reply["Subject"] == "Re: Dinner" and reply["From"] == BOT
    assert reply["In-Reply-To"] == sent["Message-ID"]
    assert reply["References"] == sent["Message-ID"]
    asked = user_texts(model_server.requests[0])
    assert "Dinner" in asked and "What should I **cook**?" in asked and "- pasta" in asked
    assert "evil" not in asked
    assert all(m.seen for m in fake_mail.inbox)
    assert bot.state()["connection"] == "ok (IDLE)" and "IDLE" in fake_mail.commands
    assert_secret_masked(bot, "password", PASSWORD)


async def test_a_forged_sender_is_ignored(
    bot: Bot, fake_mail: FakeMail, model_server: ScriptedModelServer
) -> None:
    await fake_mail.deliver(mail(ALICE, "no authentication at all", auth=None))
    await fake_mail.deliver(mail(ALICE, "dkim and spf failed", auth="fail"))
    forged = mail(ALICE, "a header of another server", auth=None)
    forged["Authentication-Results"] = "evil.test; dkim=pass header.d=example.com"
    await fake_mail.deliver(forged)
    model_server.script(Reply.text("Real."))
    await fake_mail.deliver(mail(ALICE, "the real one"))

    assert await fake_mail.wait_for_replies(ALICE) == ["Real."]
    assert len(model_server.requests) == 1
    assert "the real one" in user_texts(model_server.requests[0])


async def test_a_reply_continues_its_thread_and_a_new_mail_starts_another(
    bot: Bot, fake_mail: FakeMail, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Paris."), Reply.text("About 2 million."), Reply.text("Hi!"))
    first = await fake_mail.deliver(mail(ALICE, "capital of France?", subject="Quiz"))
    await fake_mail.wait_for_replies(ALICE, 1)
    answer = fake_mail.sent[0]
    follow_up = await fake_mail.deliver(
        mail(
            ALICE,
            "and its population?\n\nOn Monday, assistant wrote:\n> Paris.",
            subject="Re: Quiz",
            in_reply_to=str(answer["Message-ID"]),
            references=(str(first["Message-ID"]), str(answer["Message-ID"])),
        )
    )
    await fake_mail.wait_for_replies(ALICE, 2)
    await fake_mail.deliver(mail(ALICE, "something else", subject="Other"))
    await fake_mail.wait_for_replies(ALICE, 3)

    second = str(model_server.requests[1]["messages"])
    assert "capital of France?" in second and "Paris." in second, "the thread lost its history"
    assert "assistant wrote" not in user_texts(model_server.requests[1]), "quote not cut"
    assert "France" not in str(model_server.requests[2]["messages"]), "a new mail shared it"
    ids = [first["Message-ID"], answer["Message-ID"], follow_up["Message-ID"]]
    assert fake_mail.sent[1]["References"].split() == ids
    assert fake_mail.sent[1]["In-Reply-To"] == follow_up["Message-ID"]


async def test_stop_ends_a_slow_turn(
    bot: Bot, fake_mail: FakeMail, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("word " * 200, chunks=100, delay=0.1))
    first = await fake_mail.deliver(mail(ALICE, "write a lot", subject="Essay"))
    session = f"email:{ALICE}/{first['Message-ID']}"
    await fake_mail.wait_until(lambda: bot.gateway.busy(session), "the turn")
    await fake_mail.deliver(
        mail(ALICE, "/stop", subject="Re: Essay", references=(str(first["Message-ID"]),))
    )
    await fake_mail.wait_until(lambda: any("Stopped." in t for t in fake_mail.texts_to(ALICE)))
    assert not bot.gateway.busy(session)


async def test_an_outage_loses_and_repeats_nothing(
    bot: Bot, fake_mail: FakeMail, model_server: ScriptedModelServer
) -> None:
    model_server.responder = lambda body: Reply.text(f"answer {len(model_server.requests)}")
    first = await fake_mail.deliver(mail(ALICE, "before the outage"))
    await fake_mail.wait_for_replies(ALICE, 1)

    await fake_mail.outage()
    await fake_mail.wait_until(lambda: bot.state()["state"] != "running", "the channel to notice")
    await fake_mail.deliver(mail(ALICE, "sent during the outage"))
    await fake_mail.deliver(first)  # the same mail again (a copy filed back into the inbox)
    await fake_mail.recover()

    await fake_mail.wait_until(
        lambda: len(fake_mail.sent) >= 2 and bot.state()["state"] == "running"
    )
    await fake_mail.wait_until(lambda: all(m.seen for m in fake_mail.inbox), "all mail read")
    assert fake_mail.texts_to(ALICE) == ["answer 1", "answer 2"]
    asked = [user_texts(r) for r in model_server.requests]
    assert len(asked) == 2 and "during the outage" in asked[1]


async def test_files_go_out_and_a_refusal_is_not_counted(
    bot: Bot, fake_mail: FakeMail, settings: Settings
) -> None:
    report = settings.workspace / "report.csv"
    report.write_text("a,b\n1,2\n")
    result = await bot.runtime.deliveries.deliver(
        DeliveryTarget("email", ALICE), "Your files", [report]
    )
    assert result.delivered
    assert fake_mail.texts_to(ALICE) == ["Your files", "report.csv is attached."]
    (attached,) = fake_mail.sent[1].iter_attachments()
    assert attached.get_filename() == "report.csv"
    assert attached.get_content() in ("a,b\n1,2\n", b"a,b\n1,2\n")

    fake_mail.refused.add("gone@example.com")
    refused = await bot.runtime.deliveries.deliver(DeliveryTarget("email", "gone@example.com"), "x")
    assert not refused.delivered and "refused" in refused.detail and not refused.retryable


async def test_a_server_without_idle_is_polled(
    settings: Settings, fake_mail: FakeMail, model_server: ScriptedModelServer
) -> None:
    fake_mail.idle = False
    use_fake_mail(settings, fake_mail)
    async with running_bot(settings, fake_mail, "email") as bot:
        model_server.script(Reply.text("Polled."))
        await fake_mail.deliver(mail(ALICE, "anyone there?"))
        assert await fake_mail.wait_for_replies(ALICE) == ["Polled."]
        assert bot.state()["connection"] == "ok (polling)" and "IDLE" not in fake_mail.commands
