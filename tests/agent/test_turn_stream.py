"""One model call of a turn (`agent/turn_stream.py`) against the scripted model server."""

from __future__ import annotations

import asyncio

from countbot.agent.cancel import CancelToken
from countbot.agent.model_choice import ModelChoice
from countbot.agent.turn_context import TurnContext
from countbot.agent.turn_stream import ModelOutcome, call_model
from countbot.config.settings import AgentSettings
from countbot.llm.direct_provider import DirectProvider
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.types import TextPart, UserMessage
from tests.support.scripted_model import Reply, ScriptedModelServer


async def _call(model_server: ScriptedModelServer, token: CancelToken) -> ModelOutcome:
    provider = DirectProvider("openai/m", ProviderOptions(api_base=model_server.base_url))
    context = TurnContext("s1", "", ModelChoice(provider), (), AgentSettings(), token)
    messages = [UserMessage((TextPart("write a lot"),))]
    items = []
    try:
        items = [item async for item in call_model(context, messages)]
    finally:
        await provider.aclose()
    assert isinstance(items[-1], ModelOutcome)  # the outcome is always the last item
    return items[-1]


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
