"""Per-turn tool selection against the scripted model: what each request really offers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from countbot.agent.turn_request import TurnRequest
from countbot.config.settings import McpServerSettings
from countbot.runtime.assembly import Runtime, open_runtime
from countbot.scheduler.assembly import JobsFeature
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.support.settings import make_settings

ROOT = Path(__file__).resolve().parents[2]


def offered(body: dict) -> list[str]:
    """The tool names a request offered: native tools, or a constrained reply's call schemas."""
    if body.get("tools"):
        return [t["function"]["name"] for t in body["tools"]]
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    return [
        option["properties"]["tool"]["enum"][0]
        for option in schema.get("anyOf", [])
        if "tool" in option.get("properties", {})
    ]


async def ask(runtime: Runtime, text: str, session: str = "s1") -> None:
    async for _ in runtime.agent.process_message(TurnRequest(text, session)):
        pass


async def test_a_small_model_gets_no_tools_for_a_greeting_and_the_right_one_for_a_task(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    settings.model.tool_calls = "constrained"  # as for the built-in model and its window
    settings.model.context_window = 4096
    model_server.responder = lambda body: Reply.text('{"answer": "Hi!"}')
    runtime = await open_runtime(settings)
    try:
        for text in ("Hello!", "How are you today?", "What is the capital of France?"):
            await ask(runtime, text)
        await ask(runtime, "Create a file called hello.txt containing hi")
        await ask(runtime, "List the files in my workspace")
        await ask(runtime, "Save a note: buy milk")
    finally:
        await runtime.close()
    picks = [offered(body) for body in model_server.requests]
    assert picks == [[], [], [], ["write_file"], ["list_dir"], ["memory_write"]]
    assert "response_format" not in model_server.requests[0]  # a plain answer, no JSON asked
    # Bounded answers: a sixteenth of the window, not the default max_tokens of 4,096.
    assert {body["max_tokens"] for body in model_server.requests} == {256}


# Everyday requests as people write them, in English and Chinese, and what each is offered:
# a reading request never only a writing tool, composing text no tool at all.
EVERYDAY = {
    "Read notes.txt": ["read_file"],
    "Show me report.md": ["read_file"],
    "What's in notes.txt?": ["read_file"],
    "Summarize report.md": ["read_file"],
    "List the files in my workspace": ["list_dir"],
    "Delete old.txt": ["exec"],
    "Remember that my sister's birthday is May 3": ["memory_write"],
    "Remind me to call mom every day at 6pm": ["cron"],
    "Write one sentence about cats.": [],
    "Write an email to my boss asking for Friday off": [],
    "读一下 notes.txt": ["read_file"],
    "给我看看 report.md": ["read_file"],
    "notes.txt 里有什么？": ["read_file"],
    "总结一下 report.md": ["read_file"],
    "列出工作区里的文件": ["list_dir"],
    "删除 old.txt": ["exec"],
    "记住我妹妹的生日是5月3日": ["memory_write"],
    "每天下午6点提醒我给妈妈打电话": ["cron"],
    "写一首关于猫的短诗": [],
    "创建一个文件 todo.txt，内容是买面包": ["write_file"],
}


async def test_a_small_model_is_offered_what_everyday_requests_ask_in_either_language(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    settings.model.tool_calls = "constrained"
    settings.model.context_window = 4096
    settings.memory.recall = False
    model_server.responder = lambda body: Reply.text('{"answer": "OK."}')
    runtime = await open_runtime(settings, features=[JobsFeature()])  # the daemon's `cron`
    try:
        for index, text in enumerate(EVERYDAY):
            await ask(runtime, text, session=f"s{index}")
    finally:
        await runtime.close()
    picks = dict(zip(EVERYDAY, (offered(body) for body in model_server.requests), strict=True))
    assert picks == EVERYDAY


async def test_web_search_without_a_backend_is_never_offered(
    runtime: Runtime, model_server: ScriptedModelServer
) -> None:
    model_server.script(Reply.text("ok"))
    await ask(runtime, "search the web for news")
    names = offered(model_server.requests[0])
    assert "web_search" not in names and "web_fetch" in names and "read_file" in names


async def test_mcp_tools_past_the_budget_come_by_name_or_relevance(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    # Estimated at 3.6 characters a token, the core tools and both servers' exceed 2,800.
    settings = make_settings(tmp_path, model_server, tool_budget=2800)
    env = {"PYTHONPATH": str(ROOT)}
    server = McpServerSettings(
        command=sys.executable, args=["-m", "tests.support.mcp_server", "stdio"], env=env
    )
    settings.mcp.servers = {"alpha": server, "beta": server}
    model_server.responder = lambda body: Reply.text("ok")
    runtime = await open_runtime(settings)
    try:
        for connection in runtime.mcp.connections.values():
            assert await connection.wait_ready(60), connection.last_error
        everything = runtime.tools.names()
        await ask(runtime, "Hello there")
        await ask(runtime, "Ask the beta server to echo hi")
        await ask(runtime, "add 2 and 3")
    finally:
        await runtime.close()
    greeting, by_name, by_topic = (offered(body) for body in model_server.requests)
    core = [name for name in everything if "__" not in name and name != "web_search"]
    assert greeting == core  # the core tools always; no MCP tool for a greeting
    assert {n for n in by_name if "__" in n} == {n for n in everything if n.startswith("beta__")}
    assert "alpha__add" in by_topic or "beta__add" in by_topic
    assert not any(name.endswith("__crash") for name in by_topic)
    assert json.dumps(model_server.requests[1]).count("beta__") >= 2
