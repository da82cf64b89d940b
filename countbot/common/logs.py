"""The daemon's and the CLI's logging: one stderr handler whose records have secrets masked.

The mask sits on the handler, not on loggers, so it covers every record that reaches it, from
our modules and from libraries alike (HTTP clients log URLs, and the Telegram Bot API puts the
bot token in each of them).
"""

from __future__ import annotations

import logging

from countbot.common.masking import SecretMasker

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Libraries that log every request at INFO; their warnings still show.
CHATTY = ("httpx", "httpcore", "telegram", "apscheduler", "LiteLLM", "litellm", "uvicorn.error")


class MaskingFilter(logging.Filter):
    """Masks known secrets and secret-shaped strings in a record's final message."""

    def __init__(self, masker: SecretMasker) -> None:
        super().__init__()
        self._masker = masker

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self._masker.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            # Tracebacks carry messages too (an HTTP error quoting its URL).
            record.exc_text = self._masker.mask(
                logging.Formatter().formatException(record.exc_info)
            )
        return True


def configure_logging(masker: SecretMasker, level: int = logging.INFO) -> None:
    """Route every record to stderr through the masking filter (call once, at process start)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(MaskingFilter(masker))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    for name in CHATTY:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))
