"""litellm is imported once, lazily, off the event loop, and configured to stay quiet."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from countbot.llm.litellm_import import OPENAI_HANDLER_SWITCH, load_litellm
from tests.llm.conftest import HeaderRecorder

FRESH_PROCESS = textwrap.dedent(
    """
    import asyncio, sys
    import countbot.llm.litellm_provider
    from countbot.llm.litellm_import import preload_litellm

    print("imported before preload:", "litellm" in sys.modules)

    async def main():
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        ticker = asyncio.create_task(tick())
        module = await preload_litellm()
        ticker.cancel()
        print("loop ticks during import:", ticks)
        print("same module again:", module is await preload_litellm())

    asyncio.run(main())
    """
)


def test_preload_imports_litellm_lazily_without_stalling_the_loop() -> None:
    result = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, timeout=60
    )

    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line)
    assert lines["imported before preload"] == "False", result.stderr
    assert int(lines["loop ticks during import"]) > 10
    assert lines["same module again"] == "True"


def test_litellm_is_configured_for_countbot() -> None:
    litellm = load_litellm()

    assert litellm.suppress_debug_info is True
    assert litellm.drop_params is True
    assert litellm.num_retries == 0
    # Message redaction is left off because nothing would receive the messages: no callbacks.
    assert litellm.turn_off_message_logging is False
    callbacks = ("callbacks", "success_callback", "failure_callback", "input_callback")
    assert all(getattr(litellm, name) == [] for name in callbacks)


async def test_openai_compatible_calls_bypass_the_openai_sdk(
    header_recorder: HeaderRecorder,
) -> None:
    """The per-call CPU saving in docs/llm_call.md rests on this; it fails if litellm drops it."""
    litellm = load_litellm()

    stream = await litellm.acompletion(
        model="openai/test-model",
        api_base=header_recorder.base_url,
        api_key="sk-test",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
    )
    chunks = [chunk async for chunk in stream]

    assert chunks
    agent = header_recorder.requests[-1].get("user-agent", "")
    assert "OpenAI/Python" not in agent, (
        f"litellm sent this call through the OpenAI SDK ({agent}): {OPENAI_HANDLER_SWITCH} "
        "no longer works in this litellm version; see docs/llm_call.md"
    )
