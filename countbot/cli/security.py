"""`countbot doctor --security`: one screen that reviews how exposed this installation is.

Each finding says what was seen and what to change. Levels:
- danger: a stranger, or any untrusted text the assistant reads, can reach this machine or a
  secret without the owner's say (an open bind with a weak token, a chat channel open to
  everyone, file tools not confined, secrets readable or config writable by other users);
  the command exits 1 (also: `security.outbound: off`, which lets a page send your data away).
- warning: weaker than the defaults but still contained or asked about (the sandbox off or not
  working here, so stdio MCP servers would run on the host and each asks before it starts;
  private addresses reachable by web_fetch, keys in plain text in config.yaml, workspace skills
  that did not ship with CountBot, data other users can read).
"""

from __future__ import annotations

import math
from typing import Protocol
from urllib.parse import urlsplit

import click

from countbot.cli import security_files
from countbot.cli.security_files import Finding
from countbot.config.settings import Settings, channel_section_path
from countbot.dataflow.policy import explain_policy
from countbot.mcp.host_start import command_line
from countbot.runtime.assembly import exec_sandbox
from countbot.web.access import is_loopback

# A token is strong with this many bits of estimated entropy (secrets.token_urlsafe(32): ~190).
STRONG_TOKEN_BITS = 128
# Below this, on an address others can reach, a token can be guessed: dangerous.
WEAK_TOKEN_BITS = 64
_NEW_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
_MARKS = {"ok": "✓", "warning": "!", "danger": "✗"}


class SandboxState(Protocol):
    """What the review needs of the exec sandbox: its mode and, once probed, whether it works
    here (`active`; None when not probed) in the probe's own words (`detail`)."""

    @property
    def mode(self) -> str: ...
    @property
    def active(self) -> bool | None: ...
    @property
    def detail(self) -> str: ...


def sandbox_view(settings: Settings) -> SandboxState:
    """The sandbox as the daemon finds it: probed here the same way it is probed at start-up."""
    return exec_sandbox(settings, None).status


def review(settings: Settings, sandbox: SandboxState) -> list[Finding]:
    """Every finding, in the order they are printed."""
    return [
        _bind(settings),
        sandbox_finding(sandbox),
        _approval(settings, sandbox),
        *_channels(settings),
        *mcp_findings(settings, sandbox),
        _private_addresses(settings),
        _outbound(settings),
        _confinement(settings),
        *security_files.review_files(settings),
    ]


def print_review(settings: Settings, findings: list[Finding]) -> int:
    """Print one line per finding (and the fix under it); 1 when something is dangerous."""
    click.echo(f"Security review of {settings.config_path or '(defaults, no config file)'}")
    for finding in findings:
        click.echo(f"{_MARKS[finding.level]} {finding.topic}: {finding.detail}")
        if finding.fix:
            click.echo(f"    → {finding.fix}")
    dangers = sum(f.level == "danger" for f in findings)
    warnings = sum(f.level == "warning" for f in findings)
    click.echo(f"{dangers} dangerous, {warnings} warnings.")
    return 1 if dangers else 0


def token_bits(token: str) -> float:
    """A cautious estimate of a token's entropy: its length times the bits of one character,
    judged both by the character classes used and by how many distinct characters it has."""
    if not token:
        return 0.0
    pool = sum(
        size
        for present, size in (
            (any(c.islower() for c in token), 26),
            (any(c.isupper() for c in token), 26),
            (any(c.isdigit() for c in token), 10),
            (any(not c.isalnum() for c in token), 33),
        )
        if present
    )
    per_char = min(math.log2(max(pool, 2)), math.log2(max(len(set(token)), 2)))
    return len(token) * per_char


def sandbox_finding(sandbox: SandboxState) -> Finding:
    """How shell commands are contained, from the configured mode and the probe (if any)."""
    topic = "exec sandbox"
    if sandbox.mode == "off":
        return Finding(
            "warning",
            topic,
            "off: shell commands run on this machine as you, guarded only by the command "
            "tripwire; each one asks for approval",
            "set tools.exec.sandbox: auto (install bubblewrap: apt-get install bubblewrap)",
        )
    if sandbox.active is False:
        return Finding(
            "warning",
            topic,
            f"{sandbox.mode}, but bubblewrap does not work here ({sandbox.detail})",
            "install bubblewrap (apt-get install bubblewrap) and allow unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1)",
        )
    state = f"works here: {sandbox.detail}" if sandbox.active else "not probed by this command"
    return Finding("ok", topic, f"{sandbox.mode} (bubblewrap {state})")


def mcp_findings(settings: Settings, sandbox: SandboxState) -> list[Finding]:
    """How each configured MCP server runs: remote, in the sandbox, or on the host once approved."""
    findings = []
    for name, server in settings.mcp.servers.items():
        topic = f"mcp {name}"
        if not server.enabled:
            findings.append(Finding("ok", topic, "disabled"))
        elif server.url is not None:
            where = urlsplit(server.url).netloc or server.url
            findings.append(Finding("ok", topic, f"remote over HTTP ({where}): no local process"))
        elif sandbox.active is False and sandbox.mode == "bwrap":
            findings.append(
                Finding(
                    "warning",
                    topic,
                    "refused: tools.exec.sandbox is bwrap and the sandbox does not work here",
                    "make bubblewrap work here, or set tools.exec.sandbox: auto to start it "
                    "on this machine after your approval",
                )
            )
        elif sandbox.active is False:
            findings.append(
                Finding(
                    "warning",
                    topic,
                    f"no working sandbox: `{command_line(server)}` would run on this machine "
                    "with your full access; it starts only after you approve it",
                    "set tools.exec.sandbox: auto with bubblewrap working "
                    "(apt-get install bubblewrap), or disable the server",
                )
            )
        else:
            probed = "" if sandbox.active else " (not probed by this command)"
            findings.append(
                Finding("ok", topic, f"`{command_line(server)}` runs in the sandbox{probed}")
            )
    return findings


def _bind(settings: Settings) -> Finding:
    web = settings.web
    where = f"{web.host}:{web.port}"
    token = web.token.get_secret_value() if web.token else ""
    bits = token_bits(token)
    if is_loopback(web.host):
        if token and bits < STRONG_TOKEN_BITS:
            return Finding(
                "warning",
                "web",
                f"{where} (this machine only); the token is weak (~{bits:.0f} bits)",
                f"use a longer random token: {_NEW_TOKEN}",
            )
        return Finding("ok", "web", f"{where}: reachable from this machine only")
    wide = "every network interface" if web.host in ("0.0.0.0", "::", "") else "the network"
    if not token:
        return Finding(
            "warning",
            "web",
            f"{where} is open to {wide} without web.token: the daemon refuses to start",
            f"set web.token (e.g. ${{COUNTBOT_TOKEN}}) to a random value: {_NEW_TOKEN}",
        )
    if bits < WEAK_TOKEN_BITS:
        return Finding(
            "danger",
            "web",
            f"{where} is open to {wide} and web.token can be guessed (~{bits:.0f} bits)",
            f"use a long random token: {_NEW_TOKEN}; or bind web.host: 127.0.0.1",
        )
    level = "ok" if bits >= STRONG_TOKEN_BITS else "warning"
    return Finding(
        level,
        "web",
        f"{where} is open to {wide}, token ~{bits:.0f} bits",
        "" if level == "ok" else f"a token of 128 bits or more is safer: {_NEW_TOKEN}",
    )


def _approval(settings: Settings, sandbox: SandboxState) -> Finding:
    mode = settings.tools.exec.approval
    meaning = {
        "auto": "commands run inside the sandbox without asking",
        "on-miss": "commands ask unless tools.exec.allow_patterns allow them",
        "always": "every command asks",
    }[mode]
    allow = settings.tools.exec.allow_patterns
    if mode == "on-miss" and any(p.strip() in (".*", ".+", "") for p in allow):
        return Finding(
            "warning",
            "approvals",
            f"on-miss, but an allow pattern matches every command: {meaning} in effect never",
            "remove the catch-all pattern from tools.exec.allow_patterns",
        )
    note = "; leaving the sandbox always asks" if sandbox.mode != "off" else ""
    return Finding("ok", "approvals", f"{mode}: {meaning}{note}")


def _channels(settings: Settings) -> list[Finding]:
    findings = []
    for name in settings.channels.names():
        channel = settings.channels.section(name)
        assert channel is not None
        if "*" not in channel.allow_from:
            state = "on" if channel.enabled else "off"
            findings.append(Finding("ok", f"channel {name}", f"{state}, only allowed senders"))
            continue
        level = "danger" if channel.enabled else "warning"
        now = "anyone who finds the bot can" if channel.enabled else "once enabled, anyone could"
        findings.append(
            Finding(
                level,
                f"channel {name}",
                f'allow_from: ["*"]: {now} give the assistant orders',
                f"list your own user ids in {channel_section_path(name)}.allow_from, or leave "
                "it empty and approve people with `countbot pairing approve`",
            )
        )
    return findings


def _private_addresses(settings: Settings) -> Finding:
    if not settings.tools.web.allow_private:
        return Finding("ok", "web_fetch", "private and loopback addresses are refused")
    return Finding(
        "warning",
        "web_fetch",
        "tools.web.allow_private: true lets a page steer the assistant to your router, other "
        "machines on your network and cloud metadata services",
        "set tools.web.allow_private: false unless you need it",
    )


def _outbound(settings: Settings) -> Finding:
    mode = settings.security.outbound
    detail = explain_policy(mode, settings.tools.exec.network)
    if mode != "off":
        return Finding("ok", "outbound data", detail)
    return Finding("danger", "outbound data", detail, "set security.outbound: ask")


def _confinement(settings: Settings) -> Finding:
    if settings.tools.restrict_to_workspace:
        return Finding("ok", "file tools", f"confined to the workspace {settings.workspace}")
    return Finding(
        "danger",
        "file tools",
        "tools.restrict_to_workspace: false: read_file and write_file reach every file you "
        "can (your shell start-up files included), steered by whatever the assistant reads",
        "set tools.restrict_to_workspace: true and put what it should see in the workspace",
    )
