"""A Feishu voice note (an `audio` message, OGG/Opus like Feishu's) reaches the model as a
transcript, fetched through the message-resource API like any file."""

from __future__ import annotations

from tests.channels.fake_feishu import FakeFeishu
from tests.channels.feishu.conftest import ALICE
from tests.channels.harness import Bot
from tests.channels.scenarios import user_texts
from tests.support import media_files
from tests.support.scripted_model import Reply, ScriptedModelServer

ME = f"oc_p2p_{ALICE}"


async def test_an_audio_message_reaches_the_model_as_a_transcript(
    bot: Bot, fake_feishu: FakeFeishu, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("Cloudy."))
    fake_feishu.user_says("", user=ALICE, voice=media_files.ogg_opus())

    heard, answer = await fake_feishu.wait_for_messages(ME, 2)
    assert "what is the weather today" in heard and answer == "Cloudy."
    assert user_texts(model_server.requests[0]).endswith("\nwhat is the weather today")
    assert "resource" in fake_feishu.calls
