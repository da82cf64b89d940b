"""What the command line says, as a user sees it: whole help texts, a busy port that names the
setting to change, YAML mistakes in plain words, and a data folder CountBot made that its own
security review does not warn about."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import yaml

COUNTBOT = [sys.executable, "-m", "countbot"]


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COUNTBOT_CONFIG"}
    return subprocess.run(
        [*COUNTBOT, *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_help_lists_every_command_with_its_whole_sentence() -> None:
    for group in ((), ("models",), ("cron",), ("skills",), ("mcp",), ("subagents",), ("backup",)):
        result = run(*group, "--help")
        assert result.returncode == 0, result.stderr
        commands = result.stdout.split("Commands:", 1)[1]
        assert "..." not in commands, commands
    top = run("--help").stdout
    assert "one message with -m, else an interactive" in top
    assert "prompt." in top


def test_a_busy_port_names_the_setting_and_the_file(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        config = tmp_path / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {"workspace": "ws", "data_dir": "data", "web": {"port": port}},
            )
        )
        result = run("run", "--config", str(config))
    assert result.returncode != 0
    assert "start with `countbot run --port <another>`" in result.stderr, result.stderr
    assert f"or set web.port in {config}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_first_start_listens_where_told_and_a_failed_one_leaves_no_instance(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("COUNTBOT_CONFIG", "COUNTBOT_PORT")}
    env.update(COUNTBOT_HOME=str(home))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = str(taken.getsockname()[1])
        told = [[*COUNTBOT, "run", "--port", port], [*COUNTBOT, "run"]]
        for command, extra in zip(told, ({}, {"COUNTBOT_PORT": port}), strict=True):
            result = subprocess.run(
                command, env=env | extra, capture_output=True, text=True, timeout=120
            )
            assert result.returncode == 1, result.stderr
            # It tried the port it was told (the example config says 8686), then undid the
            # instance folder its first start had begun.
            assert f"cannot listen on 127.0.0.1:{port}" in result.stderr, result.stderr
            assert f"{home} was not kept" in result.stderr
            assert not home.exists()
    result = subprocess.run(
        [*COUNTBOT, "run"], env=env | {"COUNTBOT_PORT": "http"}, capture_output=True, text=True
    )
    assert result.returncode == 2 and "Invalid value for '--port'" in result.stderr
    assert not home.exists()


def test_yaml_mistakes_are_said_in_plain_words_with_the_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    cases = {
        "model:\n\tname: x\n": "YAML indents with spaces only",
        "model:\n  name: x\n   temperature: 1\n": "indented like the lines of its section",
        "model:\n  name: 'x\n": "a quote that is never closed",
        "model: {name: x\n": "is never closed: add }",
        "model:\n  name: @x\n": "put the whole value in quotes",
    }
    for text, words in cases.items():
        config.write_text(text)
        result = run("usage", "--config", str(config))
        assert result.returncode == 2
        assert words in result.stderr, (text, result.stderr)
        assert "YAML syntax error" in result.stderr and "line" in result.stderr
        assert "Traceback" not in result.stderr
    config.write_text("model:\n  name: x\n   temperature: 1\n")
    said = run("usage", "--config", str(config)).stderr
    assert "3 |    temperature: 1" in said  # the line itself, with a caret under the mistake


def test_the_data_folder_countbot_creates_is_private_and_passes_its_review(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"workspace": "ws", "data_dir": "data"}))
    config.chmod(0o600)
    assert run("usage", "--config", str(config)).returncode == 0
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
    review = run("doctor", "--security", "--config", str(config)).stdout
    data_line = next(line for line in review.splitlines() if "data folder:" in line)
    assert data_line.startswith("✓"), review


def test_run_says_that_a_config_yaml_in_the_current_folder_is_not_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "config.yaml").write_text("web:\n  port: [not a port]\n")
    env = {k: v for k, v in os.environ.items() if k != "COUNTBOT_CONFIG"}
    env.update(COUNTBOT_HOME=str(home))
    # A busy instance port ends `run` at once, after the first-start lines were said.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        home.mkdir()
        (home / "config.yaml").write_text(yaml.safe_dump({"web": {"port": taken.getsockname()[1]}}))
        result = subprocess.run(
            [*COUNTBOT, "run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
    assert f"using {home / 'config.yaml'}" in result.stderr, result.stderr
    assert f"{tmp_path / 'config.yaml'} is not read unless named" in result.stderr
