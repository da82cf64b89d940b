"""`countbot mcp list` and `countbot mcp test` start the configured servers and report them."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from countbot.cli import main

ROOT = Path(__file__).resolve().parents[2]


def config(tmp_path: Path) -> Path:
    server = {
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_server", "stdio"],
        "env": {"PYTHONPATH": str(ROOT)},
    }
    data = {
        "workspace": "ws",
        "data_dir": "data",
        "mcp": {
            "servers": {
                "notes": {**server, "tools": ["echo", "add"]},
                "broken": {"command": str(tmp_path / "missing-server")},
                "off": {**server, "enabled": False},
            }
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_list_starts_the_servers_here_when_no_daemon_runs(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["mcp", "list", "--config", str(config(tmp_path)), "--wait", "20"]
    )
    assert result.exit_code == 0, result.output
    assert "✓ notes: ready, 2 tools" in result.output
    assert "tools: notes__add, notes__echo" in result.output
    assert "✗ broken: restarting" in result.output and "last error:" in result.output
    assert "- off: disabled" in result.output


def test_test_exits_non_zero_for_a_server_that_does_not_connect(tmp_path: Path) -> None:
    path = str(config(tmp_path))
    good = CliRunner().invoke(main, ["mcp", "test", "notes", "--config", path])
    assert good.exit_code == 0 and "notes__echo" in good.output
    # Reported once its first attempt failed: a wait longer than the test's own timeout
    # (pytest-timeout's 300 s) would fail this test if the command sat it out.
    bad = CliRunner().invoke(main, ["mcp", "test", "broken", "--config", path, "--wait", "900"])
    assert bad.exit_code == 1 and "last error" in bad.output
    unknown = CliRunner().invoke(main, ["mcp", "test", "nope", "--config", path])
    assert unknown.exit_code == 2 and "configured: broken, notes, off" in unknown.output


def test_doctor_checks_the_enabled_servers(tmp_path: Path) -> None:
    path = config(tmp_path)
    data = yaml.safe_load(path.read_text())
    del data["mcp"]["servers"]["broken"]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(main, ["doctor", "--config", str(path)])
    assert "✓ mcp: 1 servers connected, 2 tools" in result.output, result.output
