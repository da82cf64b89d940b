"""builtin_tools wires the settings into the tools: confinement, sensitive paths, shell policy."""

from __future__ import annotations

from pathlib import Path

from countbot.config.settings import ExecSettings, ToolsSettings
from countbot.llm.types import ToolCall
from countbot.masking import SecretMasker
from countbot.tools.base import ToolContext
from countbot.tools.builtin import builtin_tools
from countbot.tools.registry import ToolRegistry


def registry_for(settings: ToolsSettings, workspace: Path, config: Path) -> ToolRegistry:
    registry = ToolRegistry(masker=SecretMasker())
    tools = builtin_tools(settings, workspace, sensitive_paths=[config], masker=SecretMasker())
    for tool in tools:
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


async def test_exec_follows_the_configured_policy(tmp_path: Path) -> None:
    settings = ToolsSettings(exec=ExecSettings(allow_patterns=[r"^echo\b"], timeout=5))
    registry = registry_for(settings, tmp_path, tmp_path / "config.yaml")
    ctx = ToolContext("s1", tmp_path)
    allowed = await registry.execute(call("exec", command="echo hi"), ctx)
    refused = await registry.execute(call("exec", command="touch x"), ctx)
    assert allowed.content == "exit code 0\nhi\n"
    assert refused.status == "error" and "allow_patterns" in refused.content
    assert not (tmp_path / "x").exists()
