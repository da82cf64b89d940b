"""The last word on stopping: once SIGTERM arrived, the process ends within
`web.shutdown_grace` plus `MARGIN` seconds, whatever a platform library or a worker thread does.

The orderly shutdown normally finishes well inside that. What can outlive it is beyond our
code: a task that swallows its cancellation (discord.py's reconnect loop inside
`asyncio.wait_for` on Python 3.11), or a worker thread blocked in a library call, which
`asyncio.run` waits for without a limit. The store is safe to leave so (SQLite's WAL keeps every
committed write); the instance lock is a `flock`, released with the process.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

log = logging.getLogger(__name__)

# Above the grace for running turns: channels' settle and stop, closing connections, the store.
MARGIN = 12.0


def arm(grace: float, say: str = "CountBot stopped (some parts did not finish in time).") -> None:
    """Exit the process `grace + MARGIN` s from now unless it ended before (a daemon thread)."""

    def expire() -> None:
        log.warning("shutdown took over %g s; exiting without waiting further", grace + MARGIN)
        print(say, file=sys.stderr, flush=True)
        logging.shutdown()
        os._exit(0)

    timer = threading.Timer(grace + MARGIN, expire)
    timer.daemon = True
    timer.start()
