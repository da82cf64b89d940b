"""`countbot chat`, `onboard` and `doctor` as a user runs them: real subprocesses, real config."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from countbot.store.database import Database
from countbot.store.sessions import SessionStore
from countbot.store.tool_calls import ToolCallLog
from countbot.store.usage import UsageLog
from tests.support.scripted_model import Reply, ScriptedModelServer

COUNTBOT = [sys.executable, "-m", "countbot"]


def write_config(folder: Path, server: ScriptedModelServer, extra: str = "") -> Path:
    config = folder / "config.yaml"
    config.write_text(
        "model:\n"
        "  name: openai/test-model\n"
        f"  api_base: {server.base_url}\n"
        "  api_key: ${TEST_MODEL_KEY}\n"
        "  vision: false\n"
        "workspace: ws\n"
        "data_dir: state\n" + extra
    )
    return config


def run(
    *args: str, cwd: Path, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    # `cwd` is the instance folder: its config.yaml is the one used without --config.
    env = {**os.environ, "TEST_MODEL_KEY": "sk-cli-test-0123456789", "COUNTBOT_HOME": str(cwd)}
    env.pop("COUNTBOT_CONFIG", None)
    return subprocess.run(
        [*COUNTBOT, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


async def stored_messages(data_dir: Path, session: str) -> list[dict]:
    db = await Database.open(data_dir / "countbot.db")
    try:
        return await SessionStore(db).messages(session, limit=100)
    finally:
        await db.close()


async def stored_use(data_dir: Path) -> tuple[list[dict], list[dict]]:
    """The usage rows per session and the tool calls recorded."""
    db = await Database.open(data_dir / "countbot.db")
    try:
        return await UsageLog(db).by_session(), await ToolCallLog(db).query()
    finally:
        await db.close()


def test_chat_message_prints_the_answer_and_keeps_the_session(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server)
    model_server.script(
        Reply.tool_calls(("write_file", '{"path": "hello.txt", "content": "hi"}')),
        Reply.text("I wrote hello.txt for you."),
    )
    result = run("chat", "-m", "write hello.txt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "I wrote hello.txt for you."
    assert (tmp_path / "ws" / "hello.txt").read_text() == "hi"
    records = asyncio.run(stored_messages(tmp_path / "state", "cli:default"))
    assert [r["type"] for r in records] == ["user", "assistant", "tool_result", "assistant"]
    audit = (tmp_path / "state" / "audit.jsonl").read_text()
    assert "write_file" in audit and "sk-cli-test-0123456789" not in audit
    # The process ends without the interpreter's teardown (`exit_now`): all was stored first.
    usage, calls = asyncio.run(stored_use(tmp_path / "state"))
    assert [row["session_id"] for row in usage] == ["cli:default"]
    assert [call["name"] for call in calls] == ["write_file"]


def test_chat_uses_the_named_session(tmp_path: Path, model_server: ScriptedModelServer) -> None:
    config = write_config(tmp_path, model_server)
    model_server.script(Reply.text("one"), Reply.text("two"))
    assert (
        run(
            "chat", "--config", str(config), "--session", "work", "-m", "first", cwd=tmp_path
        ).returncode
        == 0
    )
    assert (
        run(
            "chat", "--config", str(config), "--session", "work", "-m", "second", cwd=tmp_path
        ).returncode
        == 0
    )
    assert "first" in str(model_server.requests[-1]["messages"])


def test_interactive_chat_streams_answers(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server)
    model_server.script(Reply.text("Hello from the prompt!", chunks=5))
    result = run("chat", cwd=tmp_path, stdin="hello\nexit\n")
    assert result.returncode == 0, result.stderr
    assert "Hello from the prompt!" in result.stdout


def test_chat_message_on_a_terminal_streams_the_answer_as_it_comes(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    """With stdout a terminal (a pty here), the first words show while the model is still
    writing the rest: the last chunk waits until the test has read the first one."""
    import pty

    write_config(tmp_path, model_server)
    gate = threading.Event()
    model_server.script(Reply.text("First words. Then the rest.", chunks=2, gate=gate))
    controller, terminal = pty.openpty()
    env = {**os.environ, "TEST_MODEL_KEY": "sk-cli-test-0123456789", "COUNTBOT_HOME": str(tmp_path)}
    chat = subprocess.Popen(
        [*COUNTBOT, "chat", "-m", "hello"], cwd=tmp_path, env=env, stdout=terminal, stderr=terminal
    )
    os.close(terminal)
    try:
        seen = _read_until(controller, b"First words.", 60)
        assert chat.poll() is None  # the answer is not finished, yet its start is on the screen
        gate.set()
        seen = _read_until(controller, b"Then the rest.", 60, seen)
        assert chat.wait(30) == 0
    finally:
        gate.set()
        os.close(controller)
        if chat.poll() is None:
            chat.kill()
    assert seen.count(b"Then the rest.") == 1  # streamed once, not printed again at the end


def _read_until(fd: int, wanted: bytes, timeout: float, seen: bytes = b"") -> bytes:
    """What a pty's program wrote (after `seen`), read until `wanted` shows or time runs out."""
    import select

    deadline = time.monotonic() + timeout
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the program closed the terminal
                break
    assert wanted in seen, seen
    return seen


def test_invalid_config_names_the_key_and_exits_2(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server, extra="agent:\n  max_iterations: lots\n")
    result = run("chat", "-m", "hi", cwd=tmp_path)
    assert result.returncode == 2
    assert "agent.max_iterations" in result.stderr
    assert not model_server.requests


def test_missing_model_says_how_to_configure_one(tmp_path: Path) -> None:
    result = run("chat", "-m", "hi", cwd=tmp_path)
    assert result.returncode == 2
    assert "model.name" in result.stderr and "countbot onboard" in result.stderr


def test_model_failure_exits_1_with_a_clear_error(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server)
    model_server.script(Reply.error(401, "invalid api key"))
    result = run("chat", "-m", "hi", cwd=tmp_path)
    assert result.returncode == 1
    assert "Error:" in result.stdout and "sk-cli-test" not in result.stdout + result.stderr


def test_onboard_then_doctor(tmp_path: Path, model_server: ScriptedModelServer) -> None:
    result = run(
        "onboard",
        "--dir",
        "home",
        "--model",
        "openai/test-model",
        "--api-base",
        model_server.base_url,
        "--api-key-env",
        "TEST_MODEL_KEY",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    # The key stays in the environment; the output says where it goes.
    assert "api_key: ${TEST_MODEL_KEY}" in (tmp_path / "home" / "config.yaml").read_text()
    assert "export TEST_MODEL_KEY=" in result.stdout
    assert (tmp_path / "home" / "data" / "workspace" / "MEMORY.md").exists()
    assert run("onboard", "--dir", "home", cwd=tmp_path).returncode == 2  # never overwrites
    config = tmp_path / "home" / "config.yaml"
    with config.open("a") as fh:
        fh.write("")  # the starter config loads as written
    model_server.script(Reply.text("OK"))
    doctor = run("doctor", "--config", str(config), cwd=tmp_path)
    assert "✓ workspace" in doctor.stdout and "✓ store" in doctor.stdout
    assert "✓ model" in doctor.stdout, doctor.stdout
    assert "✓ sandbox: exec runs in the sandbox (bubblewrap" in doctor.stdout
    if shutil.which("chromium"):
        assert "✓ browser: " in doctor.stdout and "Chromium" in doctor.stdout, doctor.stdout
    # What the first page shows, with the extras the tests install.
    able = doctor.stdout.split("capabilities (as the first page shows them):\n", 1)[1]
    assert "  ✓ model: openai/test-model\n" in able
    assert "  ✓ memory by meaning: Universal Sentence Encoder (multilingual), offline" in able
    assert "  ✓ documents: PDF, DOCX" in able and "  ✓ voice notes: transcribed offline" in able
    starter = config.read_text()
    assert "    sandbox: auto" in starter
    config.write_text(starter.replace("    sandbox: auto", "    sandbox: 'off'", 1))
    model_server.script(Reply.text("OK"))
    warned = run("doctor", "--config", str(config), cwd=tmp_path)
    assert "! sandbox: exec is NOT sandboxed: off in tools.exec.sandbox" in warned.stdout
    assert "  ! sandbox: exec is not sandboxed: off" in warned.stdout
    assert "to turn on: set tools.exec.sandbox: auto" in warned.stdout
    assert warned.returncode == doctor.returncode == 0, warned.stdout


def test_onboard_without_a_key_says_where_it_goes_and_refuses_bad_names(tmp_path: Path) -> None:
    result = run("onboard", "--dir", "a", "--model", "openai/x", cwd=tmp_path)
    assert result.returncode == 0 and "--api-key-env NAME" in result.stdout
    bad = run("onboard", "--dir", "b", "--api-key-env", "not a name", cwd=tmp_path)
    assert bad.returncode == 2 and "not an environment variable name" in bad.stderr


def test_doctor_probes_the_model_once_without_retries(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server, extra="")
    with config.open("a") as fh:
        fh.write("agent:\n  retry_delay: 0.01\n")
    model_server.script(Reply.error(503, "overloaded"), Reply.text("OK"))
    doctor = run("doctor", "--config", str(config), cwd=tmp_path)
    assert doctor.returncode == 1 and "✗ model" in doctor.stdout, doctor.stdout
    assert len(model_server.requests) == 1


def test_killed_process_leaves_committed_messages_readable(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server)
    model_server.script(
        Reply.tool_calls(("list_dir", '{"path": "."}')),
        Reply.text("a very slow answer " * 50, chunks=50, delay=0.2),
    )
    env = {**os.environ, "TEST_MODEL_KEY": "sk-cli-test-0123456789", "COUNTBOT_HOME": str(tmp_path)}
    proc = subprocess.Popen(
        [*COUNTBOT, "chat", "-m", "list and explain"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while len(model_server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # mid-stream of the second answer
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    records = asyncio.run(stored_messages(tmp_path / "state", "cli:default"))
    assert [r["type"] for r in records] == ["user", "assistant", "tool_result"]
    assert records[0]["content"] == "list and explain"


@pytest.mark.parametrize("args", [["--help"], ["chat", "--help"]])
def test_help(tmp_path: Path, args: list[str]) -> None:
    assert run(*args, cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("path", ["direct", "litellm"])
@pytest.mark.parametrize(
    ("model", "reachable", "said"),
    [
        ("openai/test-model", False, "Error: Cannot reach http://127.0.0.1:{port}/v1"),
        ("nosuch/test-model", True, "Error: unknown provider 'nosuch' in model.name"),
    ],
)
def test_connection_and_configuration_mistakes_are_said_in_words(
    tmp_path: Path, path: str, model: str, reachable: bool, said: str
) -> None:
    with ScriptedModelServer() as server:
        port = server.base_url.rsplit(":", 1)[1].split("/")[0]
        if reachable:
            result = _chat_with(tmp_path, model, server.base_url, path)
    if not reachable:  # the server is gone: nothing listens on its port any more
        result = _chat_with(tmp_path, model, f"http://127.0.0.1:{port}/v1", path)
    assert result.returncode == 1
    assert result.stdout.startswith(said.format(port=port)), result.stdout
    assert "HTTP 500" not in result.stdout and "<" not in result.stdout  # no repr
    if not reachable:
        assert result.stdout.rstrip().endswith("connection refused")


def _chat_with(
    folder: Path, model: str, api_base: str, path: str
) -> subprocess.CompletedProcess[str]:
    (folder / "config.yaml").write_text(
        f"model:\n  name: {model}\n  api_base: {api_base}\n  provider_path: {path}\n"
        "  api_key: ${TEST_MODEL_KEY}\n  vision: false\nworkspace: ws\ndata_dir: state\n"
    )
    return run("chat", "-m", "hi", cwd=folder)


def test_a_spent_budget_in_the_cli_and_countbot_usage(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server, "budget:\n  daily_tokens: 6000\n")
    reply = Reply("text", content="fine", usage=(5_000, 0))
    model_server.responder = lambda body: reply
    first = run("chat", "--config", str(config), "-m", "one", cwd=tmp_path)
    assert first.returncode == 0 and "fine" in first.stdout, first.stderr
    second = run("chat", "--config", str(config), "-m", "two", cwd=tmp_path)
    assert "Budget reached" in second.stdout and "budget.daily_tokens" in second.stdout
    assert len(model_server.requests) == 1
    usage = run("usage", "--config", str(config), cwd=tmp_path)
    assert usage.returncode == 0, usage.stderr
    assert "budget.daily_tokens" in usage.stdout and "5,000 of 6,000 (83%)" in usage.stdout


# Said at each read: `chat -m` ends without the interpreter's teardown (no `finally` runs).
READS_OF_THE_CONFIG = """
import runpy, sys
config = sys.argv[1]

def watch(event, args):
    if event == "open" and str(args[0]) == config:
        print("config read", file=sys.stderr, flush=True)

sys.addaudithook(watch)
sys.argv = ["countbot", "chat", "-m", "hi", "--config", config]
runpy.run_module("countbot", run_name="__main__")
"""


def test_chat_message_reads_its_config_once(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    config = write_config(tmp_path, model_server)
    model_server.script(Reply.text("Hello."))
    env = {**os.environ, "TEST_MODEL_KEY": "sk-cli-test-0123456789", "COUNTBOT_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", READS_OF_THE_CONFIG, str(config)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello."
    assert result.stderr.count("config read") == 1


def test_an_answer_without_text_says_why_and_retry_asks_again(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    write_config(tmp_path, model_server)
    model_server.script(Reply.text(""))
    once = run("chat", "-m", "tell me a joke", cwd=tmp_path)
    assert once.returncode == 0, once.stderr
    assert once.stdout.strip() == (
        "The model ended its turn without writing an answer. Send your message again to retry."
    )
    model_server.script(Reply.text(""), Reply.text("Why did the chicken cross the road?"))
    result = run("chat", cwd=tmp_path, stdin="tell me a joke\n/retry\nexit\n")
    assert "without writing an answer" in result.stderr and "/retry" in result.stderr
    assert "Why did the chicken cross the road?" in result.stdout
    asked = [body["messages"][-1]["content"] for body in model_server.requests[-2:]]
    assert all(str(text).endswith("tell me a joke") for text in asked)
