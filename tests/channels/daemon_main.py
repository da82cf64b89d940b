"""`countbot run` for a test's daemon process, trusting the test CA in $COUNTBOT_TEST_CA first
(WeCom's SDK builds its TLS contexts at import and ignores SSL_CERT_FILE)."""

from __future__ import annotations

import os

if __name__ == "__main__":
    pem = os.environ.get("COUNTBOT_TEST_CA")
    if pem:
        import aibot.api
        import aibot.ws

        for context in (aibot.ws._SSL_CONTEXT, aibot.api._SSL_CONTEXT):
            context.load_verify_locations(cadata=pem)
    from countbot.cli import main

    main()
