"""The README's daemon, started from a clean checkout, never writes into it: what the settings
page saves (a model, a key) goes to the instance folder, `~/.countbot` by default."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import stat
import sys
from pathlib import Path

import httpx
import yaml

from countbot.config.instance import create_from_example
from countbot.config.loader import save_settings_patch
from tests.support.checkout import clean_checkout, git
from tests.web.conftest import WAIT

KEY = "sk-typed-on-the-settings-page-0123456789"
# A loaded 2-core machine starts the daemon (litellm's import included) in tens of seconds.
START = 120.0


async def test_saving_a_model_and_key_leaves_the_checkout_clean(tmp_path: Path) -> None:
    checkout = clean_checkout(tmp_path / "checkout")
    home = tmp_path / "home"
    instance = home / ".countbot" / "config.yaml"
    # What `countbot run` does on its first start, with a free port instead of 8686.
    assert create_from_example(instance)
    save_settings_patch(instance, {"web": {"port": 0}})
    env = {k: v for k, v in os.environ.items() if k not in ("COUNTBOT_HOME", "COUNTBOT_CONFIG")}
    env.update(HOME=str(home), NO_PROXY="*", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)  # the checkout's own code, as `-m` from its folder imports it
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "countbot", "run"),
        cwd=checkout,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), START)).decode()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not match:
            assert process.stderr is not None
            said = await asyncio.wait_for(process.stderr.read(), START)
            raise AssertionError(f"unexpected first line {line!r}; stderr: {said.decode()}")
        base = f"http://127.0.0.1:{match.group(1)}"
        async with httpx.AsyncClient(base_url=base, trust_env=False, timeout=WAIT) as http:
            model = {"name": "openai/gpt-4o-mini", "api_key": KEY}
            response = await http.put("/api/settings", json={"model": model})
            assert response.status_code == 200, response.text
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), START) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert git("status", "--porcelain", "--ignored", cwd=checkout) == ""
    saved = yaml.safe_load(instance.read_text(encoding="utf-8"))
    assert saved["model"]["name"] == "openai/gpt-4o-mini" and KEY not in instance.read_text()
    secrets = instance.parent / "secrets.yaml"
    assert yaml.safe_load(secrets.read_text(encoding="utf-8")) == {"model.api_key": KEY}
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert (instance.parent / "data" / "countbot.db").is_file()
    assert (instance.parent / "data" / "workspace").is_dir()
