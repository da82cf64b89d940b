"""Keeps channel secrets out of library logs: HTTP clients log request URLs, and the Telegram Bot
API puts the bot token in every one of them.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator

from countbot.masking import SecretMasker


class _MaskingFilter(logging.Filter):
    def __init__(self, masker: SecretMasker) -> None:
        super().__init__()
        self._masker = masker

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self._masker.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


@contextlib.contextmanager
def masked_logs(masker: SecretMasker, loggers: Iterable[str]) -> Iterator[None]:
    """While active, records of the named loggers have every known secret masked."""
    mask = _MaskingFilter(masker)
    targets = [logging.getLogger(name) for name in loggers]
    for logger in targets:
        logger.addFilter(mask)
    try:
        yield
    finally:
        for logger in targets:
            logger.removeFilter(mask)
