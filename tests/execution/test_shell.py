"""ExecTool with real bash subprocesses: exit codes, output cap, timeouts, env, confinement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from countbot.common.masking import SecretMasker
from countbot.execution.shell import ExecTool
from countbot.llm.types import ToolCall
from countbot.tools.base import ToolContext
from countbot.tools.registry import ToolRegistry
from tests.execution.exec_support import RecordingApprover, make_exec, probed_sandbox
from tests.tools.proc import is_running, read_pid


@pytest.fixture
def host_ctx(workspace: Path) -> ToolContext:
    """The user approves: the command runs on the host, where the test can see its pids."""
    return ToolContext("s1", workspace, approver=RecordingApprover("once"))


def host_exec(workspace: Path, **options: Any) -> ExecTool:
    return make_exec(workspace, sandbox=probed_sandbox("off", workspace), **options)


async def test_nonzero_exit_is_reported_with_both_streams(
    workspace: Path, ctx: ToolContext
) -> None:
    command = "echo to-stdout; echo to-stderr >&2; exit 3"
    result = await make_exec(workspace).execute({"command": command}, ctx)
    assert result.status == "ok"
    assert result.content.startswith("exit code 3\n")
    assert "to-stdout" in result.content and "to-stderr" in result.content


async def test_runs_in_the_workspace_with_stdin_closed(workspace: Path, ctx: ToolContext) -> None:
    result = await make_exec(workspace).execute({"command": "pwd; cat; echo read-eof"}, ctx)
    assert result.content == f"exit code 0\n{workspace}\nread-eof\n"


async def test_working_dir_is_confined_to_the_workspace(workspace: Path, ctx: ToolContext) -> None:
    (workspace / "sub").mkdir()
    tool = make_exec(workspace)
    inside = await tool.execute({"command": "pwd", "working_dir": "sub"}, ctx)
    outside = await tool.execute({"command": "touch escaped", "working_dir": ".."}, ctx)
    missing = await tool.execute({"command": "pwd", "working_dir": "nope"}, ctx)
    assert inside.content == f"exit code 0\n{workspace / 'sub'}\n"
    assert outside.status == "error" and "outside the workspace" in outside.content
    assert missing.status == "error" and "not an existing directory" in missing.content
    assert not (workspace.parent / "escaped").exists()


async def test_timeout_kills_the_whole_process_group(
    workspace: Path, host_ctx: ToolContext
) -> None:
    command = "echo started; sleep 30 & echo $! > sleep.pid; wait"
    result = await host_exec(workspace, timeout=0.5).execute({"command": command}, host_ctx)
    assert result.status == "timeout"
    assert "timed out after 0.5 s" in result.content and "started" in result.content
    assert not is_running(await read_pid(workspace / "sleep.pid"))


async def test_background_jobs_do_not_outlive_the_command(
    workspace: Path, host_ctx: ToolContext
) -> None:
    command = {"command": "sleep 30 & echo $! > bg.pid"}
    result = await host_exec(workspace).execute(command, host_ctx)
    assert result.content.startswith("exit code 0")
    assert not is_running(await read_pid(workspace / "bg.pid"))


async def test_long_output_keeps_its_beginning_and_end(workspace: Path, ctx: ToolContext) -> None:
    result = await make_exec(workspace, max_output=1000).execute({"command": "seq 1 100000"}, ctx)
    lines = result.content.splitlines()
    assert lines[:3] == ["exit code 0", "1", "2"]
    assert lines[-1] == "100000"
    assert "bytes omitted" in result.content
    assert len(result.content) < 1200


async def test_dangerous_commands_are_refused_before_running(
    workspace: Path, ctx: ToolContext
) -> None:
    result = await make_exec(workspace).execute({"command": "sudo touch ran"}, ctx)
    assert result.status == "error" and "command refused" in result.content
    assert not (workspace / "ran").exists()


async def test_on_the_host_secret_variables_are_not_inherited(
    workspace: Path, host_ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "value-one")
    monkeypatch.setenv("GH_TOKEN", "value-two")
    monkeypatch.setenv("LLM_BACKEND", "registered-secret-value")
    monkeypatch.setenv("COUNTBOT_HARMLESS", "visible")
    tool = host_exec(workspace, masker=SecretMasker(["registered-secret-value"]))
    command = 'echo "[$MY_SERVICE_API_KEY][$GH_TOKEN][$LLM_BACKEND][$COUNTBOT_HARMLESS]"'
    result = await tool.execute({"command": command}, host_ctx)
    assert result.content == "exit code 0\n[][][][visible]\n"


async def test_in_the_sandbox_only_an_allow_list_and_the_skills_variables_pass(
    workspace: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COUNTBOT_HARMLESS", "hidden-too")
    monkeypatch.setenv("WEATHER_API_KEY", "for-the-weather-skill")
    monkeypatch.setenv("LANG", "C.UTF-8")

    async def skill_env() -> list[str]:
        return ["WEATHER_API_KEY"]

    sandbox = probed_sandbox("bwrap", workspace, skill_env=skill_env)
    command = 'echo "[$COUNTBOT_HARMLESS][$WEATHER_API_KEY][$LANG]"'
    result = await make_exec(workspace, sandbox=sandbox).execute({"command": command}, ctx)
    assert result.content == "exit code 0\n[][for-the-weather-skill][C.UTF-8]\n"


async def test_secrets_printed_by_a_command_are_masked(workspace: Path, ctx: ToolContext) -> None:
    registry = ToolRegistry(masker=SecretMasker())
    registry.register(make_exec(workspace))
    command = {"command": "echo sk-abcdefghijklmnopqrstuvwx"}
    result = await registry.execute(ToolCall("c1", "exec", "", command), ctx)
    assert "abcdefghijklmnop" not in result.content
    assert "sk-a…****" in result.content
