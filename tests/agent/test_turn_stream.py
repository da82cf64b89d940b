"""One model call of a turn (`agent/turn_stream.py`) against the scripted model server."""

from __future__ import annotations

import asyncio

from countbot.agent.cancel import CancelToken
from countbot.agent.model_choice import ModelChoice
from countbot.agent.turn_stream import ModelTurn, stream_model
from countbot.llm.direct_provider import DirectProvider
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.types import TextPart, UserMessage
from tests.support.scripted_model import Reply, ScriptedModelServer


async def _call(model_server: ScriptedModelServer, token: CancelToken) -> ModelTurn:
    provider = DirectProvider("openai/m", ProviderOptions(api_base=model_server.base_url))
    out = ModelTurn()
    messages = [UserMessage((TextPart("write a lot"),))]
    try:
        async for _ in stream_model(ModelChoice(provider), messages, (), token, out):
            pass
    finally:
        await provider.aclose()
    return out


async def test_a_stop_that_came_before_the_call_ends_it_at_once(
    model_server: ScriptedModelServer,
) -> None:
    # The user's Stop landed between the loop's last look at the token and the model call (the
    # pump is cancelled before its first step): the call must end as cancelled, not wait forever.
    model_server.script(Reply.text("word " * 200, chunks=100, delay=0.1))
    token = CancelToken()
    token.cancel("cancelled by the user")
    out = await asyncio.wait_for(_call(model_server, token), 30)
    assert out.cancelled and out.text == ""
