"""litellm is imported once, lazily, off the event loop, and configured to stay quiet."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from countbot.llm.litellm_import import load_litellm

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
