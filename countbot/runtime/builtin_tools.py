"""The built-in machine tools, wired to their guards from the settings.

The file tools live in the core (`tools/`); running code (`execution/`) and web access
(`web_access/`) are feature packages of their own that every runtime wires in, here, in the
order the tools always had. Memory and skill tools are added by the caller, which owns the
stores they need.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from countbot.config.settings import ToolsSettings
from countbot.execution.sandbox import Sandbox
from countbot.execution.shell import ExecPolicy, ExecTool
from countbot.execution.shell_guard import ShellGuard
from countbot.masking import SecretMasker
from countbot.tools.base import Tool
from countbot.tools.files import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from countbot.tools.workspace_guard import WorkspaceGuard
from countbot.web_access.http_client import WebClient
from countbot.web_access.web_fetch import WebFetchTool
from countbot.web_access.web_search import WebSearchTool


def builtin_tools(
    settings: ToolsSettings,
    workspace: Path,
    *,
    sensitive_paths: Iterable[Path],
    masker: SecretMasker,
    sandbox: Sandbox,
    web_client: WebClient,
) -> list[Tool]:
    """read_file, write_file, edit_file, list_dir, exec, web_fetch and web_search.

    `sandbox` must have been probed (`Sandbox.probe`); the web tools share `web_client` (the
    runtime closes it). Raises ValueError for an invalid pattern in
    tools.exec.deny_patterns/allow_patterns.
    """
    guard = WorkspaceGuard(
        workspace, restrict=settings.restrict_to_workspace, sensitive_paths=sensitive_paths
    )
    shell_guard = ShellGuard(settings.exec.deny_patterns, settings.exec.allow_patterns)
    return [
        ReadFileTool(guard),
        WriteFileTool(guard),
        EditFileTool(guard),
        ListDirTool(guard),
        ExecTool(
            shell_guard,
            guard,
            sandbox,
            timeout=settings.exec.timeout,
            max_output=settings.exec.max_output,
            masker=masker,
            policy=ExecPolicy(settings.exec.approval, settings.exec.approval_timeout),
        ),
        WebFetchTool(settings.web, web_client),
        WebSearchTool(settings.web, web_client),
    ]
