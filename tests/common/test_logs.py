"""The daemon's log output never carries a secret, whichever logger or traceback it comes from."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import logging
    from countbot.config.secret import SecretStr
    from countbot.config.settings import Settings
    from countbot.common.logs import configure_logging
    from countbot.runtime.assembly import secret_masker

    settings = Settings()
    settings.model.api_key = SecretStr("sk-model-key-0123456789")
    settings.channels.telegram.token = SecretStr("123456789:AAHbottokenbottokenbottoken123")
    configure_logging(secret_masker(settings))
    token = settings.channels.telegram.token.get_secret_value()
    logging.getLogger("httpx").warning("POST https://t.me/bot%s/getUpdates failed", token)
    logging.getLogger("countbot.llm").error("provider said: bad key %s", "sk-model-key-0123456789")
    logging.getLogger("httpx").info("INFO from a chatty library is hidden")
    try:
        raise RuntimeError("connect to https://x/?key=sk-model-key-0123456789")
    except RuntimeError:
        logging.getLogger("countbot.web").exception("request failed")
    """
)


def test_secrets_are_masked_in_every_log_record() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60, check=True
    )
    err = result.stderr
    assert "getUpdates failed" in err and "bad key" in err and "request failed" in err
    assert "RuntimeError" in err  # the traceback is kept, masked
    assert "sk-model-key-0123456789" not in err
    assert "AAHbottokenbottokenbottoken123" not in err
    assert "chatty library" not in err
