"""The built-in tools: one list in the model's order, and the settings wired into them
(confinement, sensitive paths, shell policy)."""

from __future__ import annotations

from pathlib import Path

from countbot.browser.feature import BrowserFeature
from countbot.common.masking import SecretMasker
from countbot.config.settings import ExecSettings, ToolsSettings
from countbot.llm.types import ToolCall
from countbot.runtime.assembly import open_runtime
from countbot.runtime.builtin_tools import BUILTIN_TOOLS, MachineWiring, machine_tools
from countbot.scheduler.assembly import JobsFeature
from countbot.subagents.feature import SubagentsFeature
from countbot.tools.base import ToolContext
from countbot.tools.registry import ToolRegistry
from countbot.web_access.http_client import WebClient
from tests.execution.exec_support import RecordingApprover, probed_sandbox
from tests.support.scripted_model import ScriptedModelServer
from tests.support.settings import make_settings


def registry_for(settings: ToolsSettings, workspace: Path, config: Path) -> ToolRegistry:
    registry = ToolRegistry(masker=SecretMasker())
    sandbox = probed_sandbox(settings.exec.sandbox, workspace, hidden=[config])
    # The web client is never built: no test here fetches.
    wiring = MachineWiring(settings, workspace, (config,), SecretMasker(), sandbox, WebClient())
    for tool in machine_tools(wiring):
        registry.register(tool)
    return registry


def call(name: str, **args: object) -> ToolCall:
    return ToolCall(f"call-{name}", name, "", dict(args))


async def test_the_built_in_tools_and_their_confinement(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = tmp_path / "config.yaml"
    config.write_text("model:\n  api_key: sk-abcdefghijklmnopqrstuvwx\n")
    registry = registry_for(ToolsSettings(), workspace, config)
    ctx = ToolContext("s1", workspace)
    assert registry.names() == [
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "exec",
        "web_fetch",
        "web_search",
    ]
    outside = await registry.execute(call("read_file", path="../config.yaml"), ctx)
    assert "outside the workspace" in outside.content


async def test_unrestricted_settings_still_hide_the_config_file(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "notes.txt").write_text("shared notes")
    config = tmp_path / "config.yaml"
    config.write_text("model:\n  api_key: sk-abcdefghijklmnopqrstuvwx\n")
    registry = registry_for(ToolsSettings(restrict_to_workspace=False), workspace, config)
    ctx = ToolContext("s1", workspace)
    notes = await registry.execute(call("read_file", path="../notes.txt"), ctx)
    secret = await registry.execute(call("read_file", path=str(config)), ctx)
    assert notes.content == "shared notes"
    assert secret.status == "error" and "credentials" in secret.content


async def test_exec_asks_for_what_the_allow_list_does_not_cover_in_on_miss_mode(
    tmp_path: Path,
) -> None:
    exec_settings = ExecSettings(allow_patterns=[r"^echo\b"], approval="on-miss", timeout=5)
    registry = registry_for(ToolsSettings(exec=exec_settings), tmp_path, tmp_path / "config.yaml")
    unattended = ToolContext("s1", tmp_path)
    allowed = await registry.execute(call("exec", command="echo hi"), unattended)
    unasked = await registry.execute(call("exec", command="touch x"), unattended)
    assert allowed.content == "exit code 0\nhi\n"
    assert unasked.status == "error" and "allow_patterns" in unasked.content
    assert "nobody can give it" in unasked.content
    assert not (tmp_path / "x").exists()

    refuser = RecordingApprover("deny")
    denied = await registry.execute(
        call("exec", command="touch x"), ToolContext("s1", tmp_path, approver=refuser)
    )
    assert denied.status == "error" and "did not approve" in denied.content
    assert [r.key for r in refuser.requests] == ["touch x"]
    assert not (tmp_path / "x").exists()

    approved = await registry.execute(
        call("exec", command="touch x && echo made"),
        ToolContext("s1", tmp_path, approver=RecordingApprover("always")),
    )
    assert approved.content == "exit code 0\nmade\n" and (tmp_path / "x").exists()


async def test_an_allow_listed_command_writing_outside_the_workspace_asks(tmp_path: Path) -> None:
    exec_settings = ExecSettings(allow_patterns=[r"^echo\b"], approval="on-miss", timeout=5)
    registry = registry_for(ToolsSettings(exec=exec_settings), tmp_path, tmp_path / "config.yaml")
    approver = RecordingApprover("deny")
    result = await registry.execute(
        call("exec", command="echo hi >> ~/.bashrc"), ToolContext("s1", tmp_path, approver=approver)
    )
    assert result.status == "error" and len(approver.requests) == 1


async def test_the_daemon_offers_the_listed_tools_in_the_listed_order(
    tmp_path: Path, model_server: ScriptedModelServer
) -> None:
    settings = make_settings(tmp_path, model_server)
    features = [SubagentsFeature(), JobsFeature(), BrowserFeature()]
    runtime = await open_runtime(settings, features=features)
    try:
        names = runtime.tools.names()
    finally:
        await runtime.close()
    listed = [tool.name for tool in BUILTIN_TOOLS if tool.made_by != "mcp"]
    assert names == listed  # no MCP server configured: no start tool either
