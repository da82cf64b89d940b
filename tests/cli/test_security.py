"""`countbot doctor --security` as a user runs it: the real CLI in a subprocess on crafted
configs, reading its one screen and its exit status."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from countbot.cli.security import WEAK_TOKEN_BITS, mcp_findings, sandbox_finding, token_bits
from countbot.config.loader import SHIPPED_ROOT
from countbot.config.settings import Settings
from countbot.config.structs import validate
from countbot.execution.sandbox import SandboxStatus

COUNTBOT = [sys.executable, "-m", "countbot"]
STRONG_TOKEN = "q9V3xkP0sLm2Tz8RwYb4NcJ7hGf1DaE6uKiO5pQrStU"


def doctor(
    folder: Path, config: dict[str, Any], *, mode: int = 0o600
) -> subprocess.CompletedProcess:
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump({"workspace": "ws", "data_dir": "data", **config}))
    path.chmod(mode)
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data").chmod(0o700)
    return subprocess.run(
        [*COUNTBOT, "doctor", "--security", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CB_DOCTOR_TOKEN": STRONG_TOKEN},
    )


def lines_about(output: str, topic: str) -> str:
    """The finding line for `topic` and its fix line, if it has one."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line[2:].startswith(topic + ":"):
            following = lines[index + 1] if index + 1 < len(lines) else ""
            return line + ("\n" + following if following.startswith("    →") else "")
    raise AssertionError(f"no finding about {topic!r} in:\n{output}")


def test_the_defaults_pass_the_review(tmp_path: Path) -> None:
    result = doctor(tmp_path, {"model": {"api_key": "${OPENAI_API_KEY:-}"}})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 dangerous, 0 warnings." in result.stdout
    assert lines_about(result.stdout, "web").startswith("✓ web: 127.0.0.1:8686")
    assert "✓ file tools: confined to the workspace" in result.stdout
    outbound = lines_about(result.stdout, "outbound data")
    assert outbound.startswith("✓ outbound data: security.outbound: ask: after a turn read")
    assert "asks you first" in outbound and "tools.exec.network: false avoids it" in outbound


def test_outbound_off_is_dangerous_and_says_how_to_turn_it_back_on(tmp_path: Path) -> None:
    result = doctor(tmp_path, {"security": {"outbound": "off"}})
    assert result.returncode == 1, result.stdout + result.stderr
    outbound = lines_about(result.stdout, "outbound data")
    assert outbound.startswith("✗ outbound data: security.outbound: off: once the assistant")
    assert "→ set security.outbound: ask" in outbound


def test_an_exposed_installation_is_dangerous_and_every_finding_says_what_to_change(
    tmp_path: Path,
) -> None:
    skill = tmp_path / "ws" / "skills" / "helper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: helper\ndescription: x\n---\nRun curl | sh.\n")
    (tmp_path / "secrets.yaml").write_text("model.api_key: sk-abc\n")
    (tmp_path / "secrets.yaml").chmod(0o644)
    config = {
        "web": {"host": "0.0.0.0", "token": "letmein12345"},
        "model": {"api_key": "sk-plain-text-key-0123456789"},
        "channels": {"telegram": {"enabled": True, "token": "1:x", "allow_from": ["*"]}},
        "tools": {
            "restrict_to_workspace": False,
            "web": {"allow_private": True},
            "exec": {"sandbox": "off"},
        },
    }
    result = doctor(tmp_path, config, mode=0o644)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    web = lines_about(out, "web")
    assert web.startswith("✗ web: 0.0.0.0:8686 is open to every network interface")
    assert "can be guessed" in web and "secrets.token_urlsafe(32)" in web
    telegram = lines_about(out, "channel telegram")
    assert telegram.startswith('✗ channel telegram: allow_from: ["*"]')
    assert "countbot pairing approve" in telegram
    assert lines_about(out, "file tools").startswith("✗ file tools: tools.restrict_to_workspace")
    assert "restrict_to_workspace: true" in lines_about(out, "file tools")
    assert lines_about(out, "web_fetch").startswith("! web_fetch: tools.web.allow_private")
    sandbox = lines_about(out, "exec sandbox")
    assert sandbox.startswith("! exec sandbox: off") and "sandbox: auto" in sandbox
    assert lines_about(out, "config file").startswith("✗ config file:")
    assert "holds keys and other users can read it" in lines_about(out, "config file")
    keys = lines_about(out, "keys in config.yaml")
    assert "model.api_key, web.token, channels.telegram.token written in plain text" in keys
    assert lines_about(out, "secrets file").startswith("✗ secrets file:")
    assert "chmod 600" in lines_about(out, "secrets file")
    skills = lines_about(out, "skills")
    assert skills.startswith("! skills: workspace skills that did not ship with CountBot: helper")
    assert "5 dangerous, 4 warnings." in out
    assert "sk-plain-text-key" not in out and "letmein" not in out


def test_a_strong_token_on_a_public_address_and_shipped_skills_are_fine(tmp_path: Path) -> None:
    shutil.copytree(SHIPPED_ROOT / "skills" / "weather", tmp_path / "ws" / "skills" / "weather")
    result = doctor(tmp_path, {"web": {"host": "0.0.0.0", "token": "${CB_DOCTOR_TOKEN}"}})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ web: 0.0.0.0:8686 is open to every network interface, token ~" in result.stdout
    assert "workspace skills, all as shipped" in result.stdout
    # A shipped skill changed in the workspace is no longer known.
    (tmp_path / "ws" / "skills" / "weather" / "SKILL.md").write_text("---\nname: weather\n---\n")
    changed = doctor(tmp_path, {})
    assert "did not ship with CountBot: weather" in changed.stdout
    assert changed.returncode == 0  # a warning, not a danger


def test_a_public_address_without_a_token_and_readable_data_are_reported(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "countbot.db").write_bytes(b"")
    (tmp_path / "data" / "countbot.db").chmod(0o644)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"workspace": "ws", "data_dir": "data", "web": {"host": "::"}}))
    (tmp_path / "data").chmod(0o755)
    result = subprocess.run(
        [*COUNTBOT, "doctor", "--security", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "the daemon refuses to start" in lines_about(result.stdout, "web")
    data = lines_about(result.stdout, "data folder")
    assert data.startswith("! data folder: other users can read countbot.db")
    assert "chmod 700" in data
    assert result.returncode == 0


def test_token_strength_estimates() -> None:
    assert token_bits("") == 0
    assert token_bits("a" * 40) < WEAK_TOKEN_BITS
    assert token_bits("letmein12345") < WEAK_TOKEN_BITS
    assert token_bits(STRONG_TOKEN) > 128
    assert token_bits("0123456789abcdef" * 2) >= 128  # 32 hex digits


def test_a_probed_sandbox_is_reported_in_its_own_words() -> None:
    working = sandbox_finding(SandboxStatus("auto", True, "bubblewrap, network on"))
    missing = "bwrap is not installed: every command asks"
    broken = sandbox_finding(SandboxStatus("auto", False, missing))
    assert working.level == "ok" and "works here: bubblewrap, network on" in working.detail
    assert broken.level == "warning" and "every command asks" in broken.detail
    assert "apt-get install bubblewrap" in broken.fix


def test_each_mcp_server_is_reported_with_how_it_runs(tmp_path: Path) -> None:
    servers = {
        "notes": {"command": "python3", "args": ["-m", "notes_server"]},
        "remote": {"url": "https://mcp.example.com/mcp?token=s3cret-in-url"},
        "old": {"command": "old-server", "enabled": False},
    }
    off = doctor(tmp_path, {"tools": {"exec": {"sandbox": "off"}}, "mcp": {"servers": servers}})
    notes = lines_about(off.stdout, "mcp notes")
    assert notes.startswith("! mcp notes: no working sandbox: `python3 -m notes_server` would run")
    assert "starts only after you approve it" in notes and "→" in notes
    assert lines_about(off.stdout, "mcp remote") == (
        "✓ mcp remote: remote over HTTP (mcp.example.com): no local process"
    )
    assert "s3cret-in-url" not in off.stdout
    assert lines_about(off.stdout, "mcp old") == "✓ mcp old: disabled"
    on = doctor(tmp_path, {"mcp": {"servers": servers}})
    if "✓ exec sandbox" in on.stdout:  # bubblewrap works here
        assert lines_about(on.stdout, "mcp notes") == (
            "✓ mcp notes: `python3 -m notes_server` runs in the sandbox"
        )


def test_a_required_sandbox_that_does_not_work_refuses_stdio_servers() -> None:
    settings = validate(Settings, {"mcp": {"servers": {"notes": {"command": "notes"}}}})
    broken = SandboxStatus("bwrap", False, "bubblewrap (bwrap) is not installed")
    [finding] = mcp_findings(settings, broken)
    assert finding.level == "warning" and finding.detail.startswith("refused: ")
