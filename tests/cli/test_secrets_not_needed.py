"""CLI commands that use the store or the running daemon start without the daemon's secrets.

The README writes the Telegram token as `${TELEGRAM_BOT_TOKEN}`; a terminal without that variable
must still approve pairings, list jobs and send a message to the running daemon.
"""

from __future__ import annotations

from pathlib import Path

from countbot.web.instance import InstanceLock
from tests.cli.test_cron import countbot as run_countbot
from tests.support.scripted_model import Reply, ScriptedModelServer
from tests.web import conftest as web
from tests.web.conftest import Daemon

# The daemon fixtures, shared with the web tests.
start_daemon = web.start_daemon
daemon = web.daemon


def config_with_unset_token(folder: Path, model_server: ScriptedModelServer, data: Path) -> Path:
    config = folder / "cli.yaml"
    config.write_text(
        "model:\n"
        "  name: openai/test-model\n"
        f"  api_base: {model_server.base_url}\n"
        "  api_key: sk-test-0123456789abcdef\n"
        f"data_dir: {data}\n"
        f"workspace: {folder / 'workspace'}\n"
        "channels:\n"
        "  telegram:\n"
        "    enabled: true\n"
        "    token: ${TELEGRAM_BOT_TOKEN}\n"
    )
    return config


async def countbot(*args: str, config: Path) -> tuple[int, str, str]:
    return await run_countbot(*args, config=config, unset=("TELEGRAM_BOT_TOKEN",))


async def test_store_and_daemon_commands_run_without_the_token(
    daemon: Daemon, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    config = config_with_unset_token(tmp_path, model_server, daemon.settings.data_dir)
    status, out, err = await countbot("cron", "list", config=config)
    assert (status, out.strip()) == (0, "No scheduled jobs. Add one with `countbot cron add`."), err
    status, out, err = await countbot("pairing", "list", config=config)
    assert status == 0 and "No pairing codes are waiting." in out, err
    status, _, err = await countbot("pairing", "approve", "telegram", "NOPE1234", config=config)
    assert status == 1 and "no pending telegram pairing code" in err
    # The in-process daemon says where it listens, as `countbot run` does.
    InstanceLock(daemon.settings.data_dir).publish("127.0.0.1", daemon.port)
    model_server.script(Reply.text("Hello via the daemon."))
    status, out, err = await countbot("chat", "-m", "hi", "--session", "cli:x", config=config)
    assert (status, out.strip()) == (0, "Hello via the daemon."), err
    assert await daemon.context.runtime.sessions.get("cli:x") is not None


async def test_a_local_turn_still_needs_them_and_says_which(
    model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    config = config_with_unset_token(tmp_path, model_server, tmp_path / "data")
    status, _, err = await countbot("chat", "-m", "hi", config=config)
    assert status == 2 and "TELEGRAM_BOT_TOKEN" in err
    assert not model_server.requests
