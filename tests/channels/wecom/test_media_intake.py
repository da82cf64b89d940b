"""A WeCom voice note arrives already transcribed by WeCom: its words reach the model marked as
a transcript, with nothing downloaded or recognised here."""

from __future__ import annotations

from tests.channels.fake_wecom import FakeWeCom
from tests.channels.harness import Bot
from tests.channels.scenarios import user_texts
from tests.channels.wecom.conftest import ALICE
from tests.support.scripted_model import Reply, ScriptedModelServer


async def test_a_voice_note_reaches_the_model_as_wecoms_transcript(
    bot: Bot, fake_wecom: FakeWeCom, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Noted."))
    fake_wecom.user_says("remind me to call mum", user=ALICE, voice=True)

    assert await fake_wecom.wait_for_messages(ALICE) == ["Noted."]
    asked = user_texts(model_server.requests[0])
    assert "[Transcript of the user's voice note, by WeCom" in asked
    assert asked.endswith("\nremind me to call mum")
