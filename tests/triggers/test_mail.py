"""A watched mailbox through the real daemon: a mail arriving over IMAP IDLE starts one turn,
its sender's proof said plainly; the owner's mailbox is left as it was."""

from __future__ import annotations

import asyncio
from typing import Any

from countbot.common.authorship import Author
from tests.channels.fake_mail import AUTHSERV, BOT, PASSWORD, FakeMail, mail
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.triggers.conftest import DaemonWithTriggers, settled


def _mailboxes(fake: FakeMail) -> dict[str, Any]:
    box = {
        "address": BOT,
        "password": PASSWORD,
        "imap_host": "127.0.0.1",
        "imap_port": fake.imap_port,
        "imap_security": "none",
        "authserv_id": AUTHSERV,
        "poll_interval": 30,
        "prompt": "If this mail is a receipt, tell me the amount.",
    }
    return {"mailboxes": {"receipts": box}}


async def _event_ids(daemon: Any) -> list[int]:
    async with daemon.http() as http:
        return [e["id"] for e in (await http.get("/api/triggers/events")).json()["events"]]


async def test_a_mail_arriving_over_idle_starts_one_turn(
    trigger_daemon: DaemonWithTriggers, model_server: ScriptedModelServer, fake_mail: FakeMail
) -> None:
    model_server.script(Reply.text("A receipt for 12.40 EUR."))
    await fake_mail.deliver(mail("shop@example.com", "an old newsletter", subject="News"))
    config = _mailboxes(fake_mail)
    async with trigger_daemon(config) as daemon:
        await fake_mail.wait_until(lambda: "IDLE" in fake_mail.commands, "the watcher to IDLE")
        forged = mail("shop@example.com", "Total: 12.40 EUR", subject="Your receipt", auth="fail")
        await fake_mail.deliver(forged)
        for _ in range(1200):
            if ids := await _event_ids(daemon):
                break
            await asyncio.sleep(0.05)
        async with daemon.http() as http:
            event = await settled(http, ids[0])
    async with trigger_daemon(config) as daemon:
        await fake_mail.wait_until(lambda: fake_mail.commands.count("IDLE") >= 2, "IDLE again")
        assert await _event_ids(daemon) == ids  # the restart took nothing in again
    assert (event["status"], event["answer"]) == ("delivered", "A receipt for 12.40 EUR.")
    (request,) = model_server.requests
    text = str(request["messages"][-1]["content"])
    source = Author("trigger", "mailbox:receipts").describe()
    assert f'<external source="{source}">' in text
    assert "Total: 12.40 EUR" in text and "'Your receipt'" in text and "News" not in text
    assert "NOT vouched for" in text  # its authentication failed: the From may be forged
    assert not any(stored.seen for stored in fake_mail.inbox)
