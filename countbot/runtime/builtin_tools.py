"""Every built-in tool, the package that owns it and who makes it: the one list to read.

`BUILTIN_TOOLS` is in the order the model is offered the tools (the prompt's tool list, the
small model's tool budget keep it). The runtime makes the first two kinds here, from its
settings and stores (`builtin_tools`); a feature package offers its own when a surface starts it
(`Feature.tools`, in the surface's order), and `check_feature_tool` refuses one this list does not
name for that package. MCP servers' tools are not built in: they come and go with their servers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from countbot.common.masking import SecretMasker
from countbot.config.settings import ToolsSettings
from countbot.execution.sandbox import Sandbox
from countbot.execution.shell import ExecPolicy, ExecTool
from countbot.execution.shell_guard import ShellGuard
from countbot.memory.memory_file import MemoryFile
from countbot.memory.tools import (
    MemoryForgetTool,
    MemoryReadTool,
    MemorySearchTool,
    MemoryWriteTool,
)
from countbot.memory_index.index import MemoryIndex
from countbot.messaging.message_tool import Deliverer, MessageTool
from countbot.skills.loader import SkillsLoader
from countbot.tools.base import Tool
from countbot.tools.files import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from countbot.tools.paging import ReadResultTool, ResultArchive
from countbot.tools.registry import ToolRegistry
from countbot.tools.skill_tools import ReadSkillTool
from countbot.tools.workspace_guard import WorkspaceGuard
from countbot.web_access.http_client import WebClient
from countbot.web_access.web_fetch import WebFetchTool
from countbot.web_access.web_search import WebSearchTool

# Who makes a tool: the runtime from the tools' settings ("machine") or from its stores
# ("turn"), its feature package when a surface starts it, or the MCP manager.
MadeBy = Literal["machine", "turn", "feature", "mcp"]


@dataclass(frozen=True, slots=True)
class BuiltinTool:
    name: str
    owner: str  # the package of countbot/ that implements it
    made_by: MadeBy


BUILTIN_TOOLS: tuple[BuiltinTool, ...] = (
    BuiltinTool("read_file", "tools", "machine"),
    BuiltinTool("write_file", "tools", "machine"),
    BuiltinTool("edit_file", "tools", "machine"),
    BuiltinTool("list_dir", "tools", "machine"),
    BuiltinTool("exec", "execution", "machine"),
    BuiltinTool("web_fetch", "web_access", "machine"),
    BuiltinTool("web_search", "web_access", "machine"),
    BuiltinTool("read_skill", "tools", "turn"),
    BuiltinTool("read_result", "tools", "turn"),
    BuiltinTool("message", "messaging", "turn"),
    BuiltinTool("memory_read", "memory", "turn"),
    BuiltinTool("memory_write", "memory", "turn"),
    BuiltinTool("memory_search", "memory", "turn"),
    BuiltinTool("memory_forget", "memory", "turn"),
    BuiltinTool("spawn", "subagents", "feature"),
    BuiltinTool("subagents", "subagents", "feature"),
    BuiltinTool("cron", "scheduler", "feature"),
    BuiltinTool("browser", "browser", "feature"),
    BuiltinTool("mcp_start_server", "mcp", "mcp"),
)


@dataclass(frozen=True, slots=True)
class MachineWiring:
    """What the machine tools are made from: the tools' settings and their guards' inputs.

    `sandbox` must have been probed (`Sandbox.probe`); the web tools share `web_client` (the
    runtime closes it).
    """

    settings: ToolsSettings
    workspace: Path
    sensitive_paths: tuple[Path, ...]
    masker: SecretMasker
    sandbox: Sandbox
    web_client: WebClient


@dataclass(frozen=True, slots=True)
class TurnWiring:
    """What the turn's own tools are made from: the runtime's stores and the registry."""

    workspace: Path
    sensitive_paths: tuple[Path, ...]
    skills: SkillsLoader
    registry: ToolRegistry  # where `read_result` finds the pages it cut
    archive: ResultArchive
    deliverer: Deliverer
    memory: MemoryFile
    index: MemoryIndex


def _exec(w: MachineWiring, guard: WorkspaceGuard) -> Tool:
    """Raises ValueError for an invalid pattern in tools.exec.deny_patterns/allow_patterns."""
    exec_settings = w.settings.exec
    return ExecTool(
        ShellGuard(exec_settings.deny_patterns, exec_settings.allow_patterns),
        guard,
        w.sandbox,
        timeout=exec_settings.timeout,
        max_output=exec_settings.max_output,
        masker=w.masker,
        policy=ExecPolicy(exec_settings.approval, exec_settings.approval_timeout),
    )


# The file tools and exec share one guard (tools.restrict_to_workspace, the sensitive paths).
_MACHINE: dict[str, Callable[[MachineWiring, WorkspaceGuard], Tool]] = {
    "read_file": lambda w, guard: ReadFileTool(guard),
    "write_file": lambda w, guard: WriteFileTool(guard),
    "edit_file": lambda w, guard: EditFileTool(guard),
    "list_dir": lambda w, guard: ListDirTool(guard),
    "exec": _exec,
    "web_fetch": lambda w, guard: WebFetchTool(w.settings.web, w.web_client),
    "web_search": lambda w, guard: WebSearchTool(w.settings.web, w.web_client),
}
_TURN: dict[str, Callable[[TurnWiring], Tool]] = {
    "read_skill": lambda w: ReadSkillTool(w.skills),
    "read_result": lambda w: ReadResultTool(w.registry, w.archive),
    # Files leave the machine: always confined to the workspace, whatever the file tools may.
    "message": lambda w: MessageTool(
        w.deliverer, WorkspaceGuard(w.workspace, sensitive_paths=w.sensitive_paths)
    ),
    "memory_read": lambda w: MemoryReadTool(w.memory),
    "memory_write": lambda w: MemoryWriteTool(w.memory),
    "memory_search": lambda w: MemorySearchTool(w.memory, w.index),
    "memory_forget": lambda w: MemoryForgetTool(
        [w.memory, MemoryFile(w.workspace / "USER.md")], w.index, w.workspace / "memory"
    ),
}


def machine_tools(wiring: MachineWiring) -> list[Tool]:
    """The machine tools (files, exec, web), in `BUILTIN_TOOLS`' order."""
    restrict = wiring.settings.restrict_to_workspace
    guard = WorkspaceGuard(
        wiring.workspace, restrict=restrict, sensitive_paths=wiring.sensitive_paths
    )
    return [_MACHINE[t.name](wiring, guard) for t in BUILTIN_TOOLS if t.made_by == "machine"]


def builtin_tools(machine: MachineWiring, turn: TurnWiring) -> list[Tool]:
    """Every tool the runtime makes itself, in `BUILTIN_TOOLS`' order."""
    made = machine_tools(machine)
    return made + [_TURN[t.name](turn) for t in BUILTIN_TOOLS if t.made_by == "turn"]


def check_feature_tool(tool: Tool, package: str) -> None:
    """Refuse a tool a feature offers that `BUILTIN_TOOLS` does not list for its package."""
    listed = {t.name: t.owner for t in BUILTIN_TOOLS if t.made_by == "feature"}
    if listed.get(tool.name) != package:
        raise ValueError(f"{package}'s tool {tool.name!r}: list it in runtime/builtin_tools.py")
