"""Exec tools for the tests: in a probed sandbox, or on the host with a user who approves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from countbot.common.masking import SecretMasker
from countbot.execution.sandbox import Sandbox, SandboxMode
from countbot.execution.shell import ExecPolicy, ExecTool
from countbot.execution.shell_guard import ShellGuard
from countbot.tools.approval import ApprovalDecision, ApprovalRequest
from countbot.tools.workspace_guard import WorkspaceGuard


def probed_sandbox(mode: SandboxMode, workspace: Path, **options: Any) -> Sandbox:
    sandbox = Sandbox(mode, workspace, **options)
    sandbox.probe()
    return sandbox


def make_exec(
    workspace: Path,
    *,
    sandbox: Sandbox | None = None,
    timeout: float = 60.0,
    max_output: int = 30_000,
    masker: SecretMasker | None = None,
    policy: ExecPolicy | None = None,
    guard: ShellGuard | None = None,
) -> ExecTool:
    """An exec tool in a real bwrap sandbox unless `sandbox` says otherwise."""
    return ExecTool(
        guard or ShellGuard(),
        WorkspaceGuard(workspace),
        sandbox or probed_sandbox("bwrap", workspace),
        timeout=timeout,
        max_output=max_output,
        masker=masker,
        policy=policy or ExecPolicy(),
    )


class RecordingApprover:
    """Answers every request with `decision` and keeps the requests it was asked."""

    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision: ApprovalDecision = decision
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return self.decision
