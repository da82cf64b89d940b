"""Keeps channel secrets out of library logs: HTTP clients log request URLs, and the Telegram Bot
API puts the bot token in every one of them.

The daemon's handler masks every record anyway (`countbot.common.logs`); this covers the channel's
loggers when logging is set up by someone else (an embedding program, the test runner).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator

from countbot.common.logs import MaskingFilter
from countbot.common.masking import SecretMasker


@contextlib.contextmanager
def masked_logs(masker: SecretMasker, loggers: Iterable[str]) -> Iterator[None]:
    """While active, records of the named loggers have every known secret masked."""
    mask = MaskingFilter(masker)
    targets = [logging.getLogger(name) for name in loggers]
    for logger in targets:
        logger.addFilter(mask)
    try:
        yield
    finally:
        for logger in targets:
            logger.removeFilter(mask)
