"""What per-turn tool selection saves: prompt tokens per request with 0 and 5 MCP servers.

Five real MCP servers (`tests/support/mcp_server.py` over stdio, nine tools each) beside the
built-in tools; each everyday request is sent once through the real agent loop to the scripted
model, and the tokens of the request body the server received are counted (gpt-4o's tokenizer).
"before" offers every tool (`agent.tool_budget` unbounded, as before selection); "after" is the
default budget. Also: what a small model (the built-in one, constrained tool calls) is offered.

    python bench/tool_selection.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import McpServerSettings, Settings
from countbot.runtime.assembly import open_runtime
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings
from tests.support.wire_tokens import wire_tokens

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ("github", "calendar", "notes", "music", "shop")
REQUESTS = (
    "Hello!",
    "What is the capital of France?",
    "Create a file called todo.txt with my three tasks",
    "Ask the calendar server to echo my meeting time",
    "add 17 and 25",
)
UNBOUNDED = 10**9


def settings_for(folder: Path, server: ScriptedModelServer, servers: int, budget: int) -> Settings:
    settings = make_settings(folder, server, tool_budget=budget)
    settings.model.name = "openai/gpt-4o"
    command = McpServerSettings(
        command=sys.executable,
        args=["-m", "tests.support.mcp_server", "stdio"],
        env={"PYTHONPATH": str(ROOT)},
    )
    settings.mcp.servers = {name: command for name in SERVERS[:servers]}
    return settings


async def tokens_per_request(
    server: ScriptedModelServer, servers: int, budget: int, small: bool = False
) -> list[tuple[int, int]]:
    """(prompt tokens, tools offered) of each request, each in a fresh session."""
    server.reset()
    server.responder = lambda body: Reply.text("ok")
    with tempfile.TemporaryDirectory() as folder:
        settings = settings_for(Path(folder), server, servers, budget)
        if small:
            settings.model.tool_calls = "constrained"
        runtime = await open_runtime(settings)
        try:
            for connection in runtime.mcp.connections.values():
                assert await connection.wait_ready(60), connection.last_error
            for number, text in enumerate(REQUESTS):
                request = TurnRequest(text, f"bench-{number}")
                async for _ in runtime.agent.process_message(request):
                    pass
        finally:
            await runtime.close()
    return [(wire_tokens(body), offered(body)) for body in server.requests]


def offered(body: dict) -> int:
    if body.get("tools"):
        return len(body["tools"])
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    return sum("tool" in option.get("properties", {}) for option in schema.get("anyOf", []))


async def main() -> None:
    with ScriptedModelServer() as server:
        none = await tokens_per_request(server, 0, 4000)
        before = await tokens_per_request(server, 5, UNBOUNDED)
        after = await tokens_per_request(server, 5, 4000)
        small = await tokens_per_request(server, 5, 4000, small=True)
    print("Prompt tokens per request (tools offered), gpt-4o tokenizer; 5 MCP servers x 9 tools")
    header = f"{'request':<52} {'0 servers':>11} {'5, before':>12} {'5, after':>12} {'saved':>6}"
    print(header + f" {'small model':>12}")
    for text, a, b, c, d in zip(REQUESTS, none, before, after, small, strict=True):
        saved = 1 - c[0] / b[0]
        cells = [f"{n:,} ({k})" for n, k in (a, b, c)]
        print(
            f"{text[:52]:<52} {cells[0]:>11} {cells[1]:>12} {cells[2]:>12} {saved:>6.0%}"
            f" {f'{d[0]:,} ({d[1]})':>12}"
        )
    totals = [sum(n for n, _ in column) for column in (none, before, after, small)]
    print(
        f"{'total':<52} {totals[0]:>11,} {totals[1]:>12,} {totals[2]:>12,}"
        f" {1 - totals[2] / totals[1]:>6.0%} {totals[3]:>12,}"
    )


if __name__ == "__main__":
    asyncio.run(main())
