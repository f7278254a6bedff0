"""Logging for the hermes command: one line per message on stderr, secrets redacted."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

from hermes_kernel.redact import redact_text


class RedactingFilter(logging.Filter):
    """Redact secrets from the final message text (arguments included)."""

    def __init__(self, secret_values: Iterable[str] = ()) -> None:
        super().__init__()
        self.secret_values = list(secret_values)

    def filter(self, record: logging.LogRecord) -> bool:
        message = redact_text(record.getMessage(), self.secret_values)
        record.msg, record.args = message, None
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text, self.secret_values)
        return True


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"hermes: {record.levelname.lower()}: {super().format(record)}"


def setup_logging(verbose: bool) -> RedactingFilter:
    """Send the ``hermes`` loggers to stderr; return the filter so secrets can be added."""
    logger = logging.getLogger("hermes")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter("%(message)s"))
    redactor = RedactingFilter()
    handler.addFilter(redactor)
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
    return redactor
