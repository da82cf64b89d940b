"""Failover that remembers: a model that keeps failing rests, and later calls skip it at once."""

from __future__ import annotations

from countbot.llm.cooldown import Cooldowns
from countbot.llm.direct_provider import DirectProvider
from countbot.llm.provider_options import ProviderOptions
from countbot.llm.types import ChatRequest, StreamDone, TextPart, UserMessage
from tests.support.scripted_model import Reply, ScriptedModelServer

HELLO = ChatRequest((UserMessage((TextPart("hi"),)),))


async def no_sleep(_: float) -> None:
    return None


async def test_a_failing_primary_rests_and_the_next_calls_go_straight_to_the_fallback(
    model_server: ScriptedModelServer,
) -> None:
    now = [1000.0]
    cooldowns = Cooldowns(clock=lambda: now[0])
    primary_down = [True]

    def by_model(body: dict) -> Reply:
        if body["model"] == "primary" and primary_down[0]:
            return Reply.error(503, "overloaded")
        return Reply.text(f"from {body['model']}")

    model_server.responder = by_model
    provider = DirectProvider(
        "openai/primary",
        ProviderOptions(
            api_base=model_server.base_url,
            api_key="sk-test",
            fallbacks=["openai/backup"],
            max_retries=2,
            sleep=no_sleep,
            cooldowns=cooldowns,
        ),
    )

    async def answer() -> tuple[str, list[str]]:
        model_server.reset()
        events = [e async for e in provider.stream(HELLO)]
        assert isinstance(events[-1], StreamDone)
        return events[-1].message.text, [b["model"] for b in model_server.requests]

    try:
        assert await answer() == ("from backup", ["primary"] * 3 + ["backup"])
        (resting,) = cooldowns.current()
        assert resting.model == "openai/primary" and resting.seconds_left == 30
        assert "overloaded" in resting.reason or "503" in resting.reason
        assert await answer() == ("from backup", ["backup"])  # no retries on the resting model
        now[0] += 31  # back after 30 s: tried first again, fails, rests twice as long
        assert await answer() == ("from backup", ["primary"] * 3 + ["backup"])
        assert cooldowns.current()[0].seconds_left == 60
        now[0] += 61
        primary_down[0] = False
        assert await answer() == ("from primary", ["primary"])
        assert cooldowns.current() == []
    finally:
        await provider.aclose()


def test_cooldowns_double_up_to_a_cap_and_keep_every_model_reachable() -> None:
    now = [0.0]
    cooldowns = Cooldowns(clock=lambda: now[0])
    for _ in range(10):
        cooldowns.failed("a", "down")
    assert cooldowns.current()[0].seconds_left == 900
    cooldowns.failed("b", "down")
    assert cooldowns.order(["a", "b", "c"]) == ["c", "b", "a"]
